import { pinnedVersion, pollReport, ProviderError, type ProviderEnv } from "@trendgate/connector-core";
import { http } from "./http.ts";
import type { AdsReporting, ReportingCapabilities, ReportingClient, ReportLevel, ReportQuery, ReportRow } from "../kind.ts";
import { callError, PROVIDER } from "./errors.ts";
import { manifest } from "./manifest.ts";

// Pinterest API v5 reporting, as its published description (pinterest/api-description v5) has it.
//
// Two paths, chosen per query by pages():
// - sync: `GET /ad_accounts/{id}/{campaigns|ad_groups|ads}/analytics` (category ads_analytics). These take the
//   entities' ids (1-250 a call, required), so the entities are listed first through Pinterest's own bookmark pages
//   (`GET .../campaigns|ad_groups|ads`, every status: an archived entity may have spent in the range), then one
//   analytics call per listing page of up to 250 ids is one page of rows, made only when the consumer pulls. The
//   answer is one JSON array (no paging of its own). Limits: at most 90 days back and 90 days long.
// - async: `POST /ad_accounts/{id}/reports` (JSON body) -> token; `GET .../reports?token=` polled with a bounded
//   backoff until `report_status` FINISHED; then the `url` (a pre-signed object-store link valid five minutes,
//   fetched WITHOUT our token) is downloaded. Limits: 914 days back, 186 days long. The report covers every entity
//   of the level (no id list needed), so it is what large accounts and old or long ranges need.
// pages() takes the sync path when the range is within the sync limits and the entities to report fit in
// SYNC_MAX_LISTING_PAGES listing pages (1,000 entities: at most 4 listing calls + 4 analytics calls); otherwise it
// submits one async report. The report is asked for as CSV, not JSON: CSV can be read row by row as the download
// streams (JSON's layout, an object keyed by entity id, must be parsed whole), and Pinterest zero-fills CSV metrics.
// The CSV's header names are not in the description: they are matched loosely (`Campaign ID`, `CAMPAIGN_ID`), and
// the layout is approximate.
//
// Numbers:
// - impressions IMPRESSION_1 and clicks CLICKTHROUGH_1: Pinterest's "_1" columns are PAID delivery (the "_2" ones are
//   earned: people acting on saves of a promoted Pin, which cost nothing); TOTAL_* adds both. Paid clicks over paid
//   impressions keeps ctr and cpc about what was paid for. A CLICKTHROUGH is a "Pin click": a click on the ad that
//   opens its close-up or goes to its destination (outbound clicks alone are OUTBOUND_CLICK_1).
// - spend SPEND_IN_MICRO_DOLLAR: despite its name, micro-units of the ad account's currency (the description: "for
//   GBP, all MICRO_DOLLARS fields will be in GBP microunits"), so it is our spend_micros as is; the currency is the
//   ad account's `currency` (`GET /ad_accounts/{id}`).
// - conversions TOTAL_CONVERSIONS: Pinterest Tag / Conversions API events of every type attributed to the ad, with the
//   attribution windows sent explicitly (30 days after a click, 1 day after a view, counted on the day of the ad
//   action) so the definition does not move if Pinterest's defaults do.
// - A metric Pinterest leaves out of a row has no value: it is 0 ("if a column has no value, it may not be
//   returned"; JSON answers are not zero-filled).
// Dates: the description gives `start_date`/`end_date` and the rows' DATE as UTC days, and Pinterest's AdAccount has no
// time zone field; the closed-beta `reporting_timezone=AD_ACCOUNT_TIME_ZONE` is not sent (not available to all
// apps). So the report's days are UTC days and account() says so: time_zone "UTC".
// Throttles and quotas map through errors.ts (ads_analytics per-minute limit: rate_limited with retryAfterMs; the
// Trial tier's daily cap: quota_exhausted).

const TIMEOUT_MS = 60_000;
const MAX_IDS = 250;
/** Async body filters take up to 500 ids; beyond that the report is filtered here. */
const MAX_ASYNC_IDS = 500;
const SYNC_LOOKBACK_DAYS = 90;
const SYNC_RANGE_DAYS = 90;
const ASYNC_LOOKBACK_DAYS = 914;
const ASYNC_RANGE_DAYS = 186;
/** Entities reported through the sync path at most (listing pages of 250); more goes to one async report. */
const SYNC_MAX_LISTING_PAGES = 4;
/** Rows per page read from an async download. */
const DOWNLOAD_PAGE_ROWS = 1000;
/** Polling: first wait, cap, and the whole wait before giving up (Pinterest keeps a report one hour). */
const POLL_FIRST_MS = 1000;
const POLL_MAX_MS = 15_000;
const POLL_BUDGET_MS = 15 * 60_000;
const ALL_STATUSES = ["ACTIVE", "PAUSED", "ARCHIVED", "DRAFT", "DELETED_DRAFT"];
const METRICS = ["IMPRESSION_1", "CLICKTHROUGH_1", "SPEND_IN_MICRO_DOLLAR", "TOTAL_CONVERSIONS"];
const ATTRIBUTION = { click_window_days: 30, view_window_days: 1, conversion_report_time: "TIME_OF_AD_ACTION" } as const;

export const pinterestCapabilities: ReportingCapabilities = {
  levels: ["campaign", "ad_group", "ad"],
  granularities: ["day", "total"],
  // The async report's limits (pages() uses it beyond the sync endpoints' 90 days back and 90 days long).
  maxLookbackDays: ASYNC_LOOKBACK_DAYS,
  maxRangeDays: ASYNC_RANGE_DAYS,
  clicks: "Paid Pin clicks (CLICKTHROUGH_1): clicks on the promoted Pin that open its close-up or go to its destination; clicks earned from saves are not counted",
  conversions: "TOTAL_CONVERSIONS: Pinterest Tag and Conversions API events of every type, attributed 30 days after a click or 1 day after a view, on the day of the ad action",
  asyncJobs: true,
};

type Query = Record<string, string | string[]>;
type Raw = Record<string, unknown>;
interface Entity { id: string; name: string | null; campaign_id: string; ad_group_id: string | null }

const DAY_MS = 86_400_000;
const dayNumber = (d: string) => Date.parse(`${d}T00:00:00Z`) / DAY_MS;
const isDate = (d: string) => /^\d{4}-\d{2}-\d{2}$/.test(d) && Number.isFinite(dayNumber(d)) && new Date(dayNumber(d) * DAY_MS).toISOString().startsWith(d);
const bad = (m: string) => new ProviderError(PROVIDER, "bad_request", m);
const chunks = <T>(xs: T[], n: number) => Array.from({ length: Math.ceil(xs.length / n) }, (_, i) => xs.slice(i * n, i * n + n));
/** Header names loosely: `Campaign ID`, `campaign_id` and `CAMPAIGN_ID` are one column. */
const columnKey = (h: string) => h.replace(/^\uFEFF/, "").trim().toUpperCase().replace(/[^A-Z0-9]+/g, "_").replace(/^_|_$/g, "");

/**
 * A decimal (string or JSON number, maybe with an exponent) of micros as an integer decimal string, exactly: string
 * arithmetic, a fraction of a micro rounded half away from zero.
 */
export function microsOf(v: unknown): string {
  if (v === undefined || v === null || v === "") return "0";
  let t: string;
  if (typeof v === "number") {
    if (!Number.isFinite(v)) throw bad(`spend ${v} is not a number`);
    t = Number.isInteger(v) ? BigInt(v).toString() : String(v);
  } else t = String(v).trim();
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(t);
  if (!m || (!m[2] && !m[3])) throw bad(`spend "${t}" is not a decimal`);
  const neg = m[1] === "-";
  let digits = `${m[2]}${m[3] ?? ""}`;
  let point = m[2].length + Number(m[4] ?? 0); // digits before the decimal point
  if (point < 0) { digits = "0".repeat(-point) + digits; point = 0; }
  if (point > digits.length) digits += "0".repeat(point - digits.length);
  let int = BigInt(digits.slice(0, point) || "0");
  if (/^[5-9]/.test(digits.slice(point))) int += 1n;
  return (neg && int !== 0n ? -int : int).toString();
}

const count = (v: unknown) => {
  if (v === undefined || v === null || v === "") return 0;
  const n = Number(v);
  if (!Number.isFinite(n)) throw bad(`"${String(v)}" is not a number`);
  return n;
};
const str = (v: unknown) => (v === undefined || v === null || v === "" ? null : String(v));


/** RFC 4180 records from a byte stream, read only as far as the consumer pulls. */
async function* csvRecords(body: ReadableStream<Uint8Array>, signal?: AbortSignal): AsyncGenerator<string[]> {
  const reader = body.getReader();
  const decoder = new TextDecoder("utf-8");
  let field = "";
  let record: string[] = [];
  let quoted = false; // inside a quoted field
  let afterQuote = false; // a quote seen inside a quoted field: either an escaped quote or the field's end
  let pendingCR = false;
  const out: string[][] = [];
  const endRecord = () => { record.push(field); field = ""; if (record.length > 1 || record[0] !== "") out.push(record); record = []; };
  try {
    for (;;) {
      signal?.throwIfAborted();
      const { value, done } = await reader.read();
      const text = done ? decoder.decode() : decoder.decode(value, { stream: true });
      for (const ch of text) {
        if (quoted) {
          if (afterQuote) {
            afterQuote = false;
            if (ch === '"') { field += '"'; continue; }
            quoted = false; // the closing quote: fall through to read ch as outside a quote
          } else if (ch === '"') { afterQuote = true; continue; } else { field += ch; continue; }
        }
        if (pendingCR) { pendingCR = false; if (ch === "\n") continue; }
        if (ch === '"' && field === "") quoted = true;
        else if (ch === ",") { record.push(field); field = ""; }
        else if (ch === "\r") { endRecord(); pendingCR = true; }
        else if (ch === "\n") endRecord();
        else field += ch;
      }
      while (out.length) yield out.shift()!;
      if (done) break;
    }
    if (field !== "" || record.length) endRecord();
    while (out.length) yield out.shift()!;
  } finally {
    await reader.cancel().catch(() => undefined); // stop the download when the consumer stops
  }
}

class PinterestReportingClient implements ReportingClient {
  private readonly base: string;
  private readonly pollFirstMs: number;

  constructor(private readonly ctx: { baseUrl: string; accessToken: string; env?: ProviderEnv }) {
    this.base = `${ctx.baseUrl.replace(/\/+$/, "").replace(/\/v5$/, "")}/${pinnedVersion(manifest, ctx.env)}/`;
    // Tests poll a local stand-in faster; the backoff stays bounded either way.
    this.pollFirstMs = Math.max(10, Number(ctx.env?.[manifest.env!.reportPollMs]) || POLL_FIRST_MS);
  }

  private async call(method: "GET" | "POST", path: string, what: string, opts: { query?: Query; body?: unknown; signal?: AbortSignal } = {}): Promise<any> {
    const url = new URL(path, this.base);
    for (const [k, v] of Object.entries(opts.query ?? {})) for (const x of Array.isArray(v) ? v : [v]) url.searchParams.append(k, x);
    const res = await http.fetch(what, url, {
      env: this.ctx.env, method, signal: opts.signal, timeoutMs: TIMEOUT_MS, headers: { authorization: `Bearer ${this.ctx.accessToken}` }, ...(opts.body !== undefined ? { json: opts.body } : {}),
    });
    const body = res.text ? res.body : {};
    if (res.status !== 200 || body === null) throw callError(res.status, body, res.headers, what, res.headers.get("x-pinterest-rid"));
    return body;
  }

  async account(accountId: string): Promise<{ currency: string; time_zone: string }> {
    const id = this.accountOf(accountId);
    const a = await this.call("GET", `ad_accounts/${id}`, "ad account");
    if (typeof a.currency !== "string" || !/^[A-Z]{3}$/.test(a.currency) || a.currency === "UNK") {
      throw new ProviderError(PROVIDER, "unavailable", `ad account ${id}: Pinterest gave no currency (${String(a.currency)})`);
    }
    // No time zone field on Pinterest's ad account; its report days are UTC days (see the top of this file).
    return { currency: a.currency, time_zone: "UTC" };
  }

  private accountOf(id: string) {
    if (!/^\d{1,18}$/.test(id)) throw bad(`ad account id ${id}: digits expected`);
    return id;
  }

  pages(q: ReportQuery, opts: { signal?: AbortSignal } = {}): AsyncIterable<ReportRow[]> {
    return this.run(q, opts.signal);
  }

  private async *run(q: ReportQuery, signal?: AbortSignal): AsyncGenerator<ReportRow[]> {
    const account = this.accountOf(q.accountId);
    if (!isDate(q.from) || !isDate(q.to)) throw bad(`dates ${q.from}..${q.to}: YYYY-MM-DD expected`);
    if (q.to < q.from) throw bad(`the range ends (${q.to}) before it starts (${q.from})`);
    if (!pinterestCapabilities.levels.includes(q.level) || !pinterestCapabilities.granularities.includes(q.granularity)) throw bad(`level ${q.level} / granularity ${q.granularity} not supported`);
    const groups = q.adGroupIds ? [...new Set(q.adGroupIds)] : undefined;
    for (const g of groups ?? []) if (!/^\d{1,18}$/.test(g)) throw bad(`ad group id ${g}: digits expected`);
    if (groups && !groups.length) return; // no ad groups: no rows
    const today = Math.floor(Date.now() / DAY_MS);
    const back = today - dayNumber(q.from);
    const span = dayNumber(q.to) - dayNumber(q.from);
    if (back > ASYNC_LOOKBACK_DAYS) throw bad(`Pinterest reports at most ${ASYNC_LOOKBACK_DAYS} days back (${q.from} is ${back})`);
    if (span > ASYNC_RANGE_DAYS) throw bad(`Pinterest reports at most ${ASYNC_RANGE_DAYS} days in one report (${span + 1} asked)`);
    // Campaign rows of some ad groups only: Pinterest cannot filter a campaign's stats by ad group, so they are the
    // sums of those ad groups' rows.
    const rollUp = q.level === "campaign" && !!groups;
    const level: ReportLevel = rollUp ? "ad_group" : q.level;
    const source = async function* (this: PinterestReportingClient): AsyncGenerator<ReportRow[]> {
      if (back <= SYNC_LOOKBACK_DAYS && span <= SYNC_RANGE_DAYS) {
        const entities = await this.listEntities(account, level, groups, signal);
        if (entities) { yield* this.sync(account, level, q, entities, signal); return; }
      }
      yield* this.async(account, level, q, groups, signal);
    }.call(this);
    if (!rollUp) { yield* source; return; }
    const sums = new Map<string, ReportRow>();
    for await (const page of source) {
      for (const r of page) {
        const k = `${r.campaign_id}|${r.date ?? ""}`;
        const s = sums.get(k);
        if (!s) { sums.set(k, { ...r, ad_group_id: null, ad_group_name: null, ad_id: null, ad_name: null }); continue; }
        s.impressions += r.impressions;
        s.clicks += r.clicks;
        s.spend_micros = (BigInt(s.spend_micros) + BigInt(r.spend_micros)).toString();
        s.conversions = s.conversions === null || r.conversions === null ? null : s.conversions + r.conversions;
        s.campaign_name ??= r.campaign_name;
      }
    }
    const all = [...sums.values()].sort((a, b) => (a.campaign_id === b.campaign_id ? String(a.date).localeCompare(String(b.date)) : BigInt(a.campaign_id) < BigInt(b.campaign_id) ? -1 : 1));
    for (const part of chunks(all, DOWNLOAD_PAGE_ROWS)) yield part;
  }

  /**
   * The entities to report, through Pinterest's bookmark pages (ad groups and ads filtered by ad group at Pinterest),
   * or null when there are more than the sync path takes.
   */
  private async listEntities(account: string, level: ReportLevel, groups: string[] | undefined, signal?: AbortSignal): Promise<Entity[] | null> {
    const path = level === "campaign" ? "campaigns" : level === "ad_group" ? "ad_groups" : "ads";
    const out: Entity[] = [];
    let calls = 0;
    for (const part of groups ? chunks(groups, MAX_IDS) : [undefined]) {
      let bookmark: string | undefined;
      do {
        if (++calls > SYNC_MAX_LISTING_PAGES) return null;
        const page = await this.call("GET", `ad_accounts/${account}/${path}`, path.replace("_", " "), {
          signal, query: { entity_statuses: ALL_STATUSES, page_size: String(MAX_IDS), order: "ASCENDING", ...(part ? { ad_group_ids: part } : {}), ...(bookmark ? { bookmark } : {}) },
        });
        for (const e of Array.isArray(page.items) ? page.items : []) {
          out.push({ id: String(e.id), name: str(e.name), campaign_id: level === "campaign" ? String(e.id) : String(e.campaign_id), ad_group_id: level === "ad" ? String(e.ad_group_id).replace(/^AG/, "") : level === "ad_group" ? String(e.id) : null });
        }
        bookmark = page.bookmark || undefined;
      } while (bookmark);
    }
    return out;
  }

  private async *sync(account: string, level: ReportLevel, q: ReportQuery, entities: Entity[], signal?: AbortSignal): AsyncGenerator<ReportRow[]> {
    const [path, idParam, idColumn] = level === "campaign" ? ["campaigns", "campaign_ids", "CAMPAIGN_ID"] : level === "ad_group" ? ["ad_groups", "ad_group_ids", "AD_GROUP_ID"] : ["ads", "ad_ids", "AD_ID"];
    const names = level === "campaign" ? ["CAMPAIGN_NAME"] : level === "ad_group" ? ["CAMPAIGN_NAME", "AD_GROUP_NAME"] : ["CAMPAIGN_NAME", "AD_GROUP_NAME", "AD_NAME"];
    const byId = new Map(entities.map((e) => [e.id, e]));
    for (const part of chunks(entities, MAX_IDS)) {
      const rows = await this.call("GET", `ad_accounts/${account}/${path}/analytics`, `${path.replace("_", " ")} analytics`, {
        signal,
        query: {
          start_date: q.from, end_date: q.to, granularity: q.granularity === "day" ? "DAY" : "TOTAL",
          columns: [...METRICS, ...names].join(","), // `explode: false`: one comma-separated value
          [idParam]: part.map((e) => e.id),
          click_window_days: String(ATTRIBUTION.click_window_days), view_window_days: String(ATTRIBUTION.view_window_days), conversion_report_time: ATTRIBUTION.conversion_report_time,
        },
      });
      if (!Array.isArray(rows)) throw new ProviderError(PROVIDER, "unavailable", `${path} analytics: not a list of rows`);
      yield rows.map((r: Raw) => {
        const e = byId.get(String(r[idColumn]));
        return this.row(level, q, { ...r, CAMPAIGN_ID: e?.campaign_id ?? r.CAMPAIGN_ID, AD_GROUP_ID: e?.ad_group_id ?? r.AD_GROUP_ID, [`${level === "ad" ? "AD" : level === "ad_group" ? "AD_GROUP" : "CAMPAIGN"}_NAME`]: r[`${level === "ad" ? "AD" : level === "ad_group" ? "AD_GROUP" : "CAMPAIGN"}_NAME`] ?? e?.name });
      });
    }
  }

  private row(level: ReportLevel, q: ReportQuery, r: Raw): ReportRow {
    const date = q.granularity === "day" ? str(r.DATE)?.slice(0, 10) ?? null : null;
    if (q.granularity === "day" && (!date || !isDate(date))) throw new ProviderError(PROVIDER, "unavailable", `a daily row without a DATE (${String(r.DATE)})`);
    const campaign = str(r.CAMPAIGN_ID);
    if (!campaign) throw new ProviderError(PROVIDER, "unavailable", "a row without its campaign id");
    return {
      date,
      campaign_id: campaign, campaign_name: str(r.CAMPAIGN_NAME),
      ad_group_id: level === "campaign" ? null : str(r.AD_GROUP_ID), ad_group_name: level === "campaign" ? null : str(r.AD_GROUP_NAME),
      ad_id: level === "ad" ? str(r.AD_ID ?? r.PIN_PROMOTION_ID) : null, ad_name: level === "ad" ? str(r.AD_NAME ?? r.PIN_PROMOTION_NAME) : null,
      impressions: count(r.IMPRESSION_1), clicks: count(r.CLICKTHROUGH_1), spend_micros: microsOf(r.SPEND_IN_MICRO_DOLLAR), conversions: count(r.TOTAL_CONVERSIONS),
    };
  }

  private async *async(account: string, level: ReportLevel, q: ReportQuery, groups: string[] | undefined, signal?: AbortSignal): AsyncGenerator<ReportRow[]> {
    const filterHere = !!groups && groups.length > MAX_ASYNC_IDS;
    const ids = level === "campaign" ? ["CAMPAIGN_ID", "CAMPAIGN_NAME"] : level === "ad_group" ? ["CAMPAIGN_ID", "CAMPAIGN_NAME", "AD_GROUP_ID", "AD_GROUP_NAME"] : ["CAMPAIGN_ID", "CAMPAIGN_NAME", "AD_GROUP_ID", "AD_GROUP_NAME", "AD_ID", "AD_NAME"];
    const job = await this.call("POST", `ad_accounts/${account}/reports`, "async report", {
      signal,
      body: {
        start_date: q.from, end_date: q.to, granularity: q.granularity === "day" ? "DAY" : "TOTAL",
        level: level === "campaign" ? "CAMPAIGN" : level === "ad_group" ? "AD_GROUP" : "PIN_PROMOTION",
        columns: [...ids, ...METRICS], report_format: "CSV", ...ATTRIBUTION,
        ...(groups && !filterHere ? { ad_group_ids: groups } : {}),
      },
    });
    const token = typeof job.token === "string" && job.token ? job.token : null;
    if (!token) throw new ProviderError(PROVIDER, "unavailable", `async report: no token (${String(job.report_status)}: ${String(job.message ?? "")})`);
    // Bounded backoff: 1 s doubling to 15 s, 15 minutes in all; an abort ends the wait at once (the job is left).
    const url = await pollReport<string | null>(async () => {
      const s = await this.call("GET", `ad_accounts/${account}/reports`, "async report status", { signal, query: { token } });
      if (s.report_status === "FINISHED") return { ready: typeof s.url === "string" && s.url ? s.url : null };
      if (s.report_status !== "IN_PROGRESS") return { failed: new ProviderError(PROVIDER, "unavailable", `async report ${token}: ${String(s.report_status)}`, { providerCode: String(s.report_status) }) };
      return { pending: "IN_PROGRESS" };
    }, { firstMs: this.pollFirstMs, maxMs: POLL_MAX_MS, budgetMs: POLL_BUDGET_MS },
    (waited) => new ProviderError(PROVIDER, "unavailable", `async report ${token}: not ready after ${Math.round(waited / 60_000)} minutes`), signal);
    if (!url) return; // no file: nothing to report (approximate)
    // The link is pre-signed: our token must not go with it (to another host, and S3 refuses a second auth).
    const res = await http.download("async report download", url, { signal, env: this.ctx.env, timeoutMs: 10 * TIMEOUT_MS });
    if (res.status < 200 || res.status >= 300) {
      await res.body.cancel().catch(() => undefined);
      // The link lives five minutes; an expired one is a job to run again.
      throw new ProviderError(PROVIDER, "unavailable", `async report download: HTTP ${res.status}`, { status: res.status });
    }
    let header: string[] | null = null;
    let page: ReportRow[] = [];
    const wanted = groups ? new Set(groups) : null;
    for await (const rec of csvRecords(res.body, signal)) {
      if (!header) { header = rec.map(columnKey); continue; }
      const raw: Raw = {};
      header.forEach((h, i) => { raw[h] = rec[i]; });
      const r = this.row(level, q, raw);
      if (filterHere && wanted && !wanted.has(String(r.ad_group_id))) continue;
      page.push(r);
      if (page.length >= DOWNLOAD_PAGE_ROWS) { yield page; page = []; }
    }
    if (page.length) yield page;
  }
}

export const pinterestAdsReporting: AdsReporting = {
  capabilities: pinterestCapabilities,
  client: (ctx) => new PinterestReportingClient(ctx),
};
