import { pollReport, ProviderError, pinnedVersion, type ProviderEnv } from "@trendgate/connector-core";
import { http } from "./http.ts";
import type { AdsReporting, ReportingCapabilities, ReportingClient, ReportLevel, ReportQuery, ReportRow } from "../kind.ts";
import { callError, graphErrorOf, PROVIDER } from "./errors.ts";
import { manifest } from "./manifest.ts";

// Meta reporting through the Insights API: `GET /act_<id>/insights` (sync, Graph cursor pages) or, for
// large reports, an async report run: `POST /act_<id>/insights` -> report_run_id, poll `GET /<report_run_id>` until
// async_status "Job Completed" at 100 %, then page `GET /<report_run_id>/insights`.
// - Dates: Meta computes insights in the ad account's time zone (time_range and date_start are account-local days),
//   so dates pass through as Meta gives them; account() says which zone that is.
// - Money: `spend` is a decimal string in the account's currency (major units, also for JPY); converted to micros
//   with string/BigInt arithmetic.
// - Sync or async: sync answers a preview in one round trip; Meta's best practices send large reports to async runs,
//   and a large sync call is slow and may end in the data-size error (#100/1487534). The size is unknown up front (it
//   depends on how many ads deliver), so a cheap rule picks async for daily rows over long ranges (and ad-level daily
//   over more than a week), and the data-size error on the first sync page falls back to an async run.
// - The token goes in the Authorization header; `paging.next` links carry it in their query, so they are never
//   followed: the `after` cursor is.

/** Insights are computed on request: a sync page takes longer than an entity read. */
const TIMEOUT_MS = 60_000;
const PAGE_SIZE = 500;
/** Meta's data-size error ("Please reduce the amount of data you're asking for"), code 100. */
export const DATA_TOO_LARGE_SUBCODE = 1487534;
/** Async above these (see the header): daily rows over more than a month, ad-level daily rows over more than a week. */
const ASYNC_DAILY_DAYS = 31;
const ASYNC_AD_DAILY_DAYS = 7;
/**
 * The `actions` counted as conversions: website purchases, leads and completed registrations recorded by the Meta
 * pixel or the Conversions API. Aggregates (`purchase`, `omni_purchase`, `lead`) are left out because they repeat
 * these same events (counting both would double them); funnel steps (view content, add to cart) are not conversions.
 */
export const CONVERSION_ACTION_TYPES = [
  "offsite_conversion.fb_pixel_purchase",
  "offsite_conversion.fb_pixel_lead",
  "offsite_conversion.fb_pixel_complete_registration",
] as const;
const COUNTED = new Set<string>(CONVERSION_ACTION_TYPES);

const LEVEL: Record<ReportLevel, "campaign" | "adset" | "ad"> = { campaign: "campaign", ad_group: "adset", ad: "ad" };
const ID_FIELDS: Record<ReportLevel, string[]> = {
  campaign: ["campaign_id", "campaign_name"],
  ad_group: ["campaign_id", "campaign_name", "adset_id", "adset_name"],
  ad: ["campaign_id", "campaign_name", "adset_id", "adset_name", "ad_id", "ad_name"],
};
const METRIC_FIELDS = ["impressions", "clicks", "spend", "actions"];

export const metaReportingCapabilities: ReportingCapabilities = {
  levels: ["campaign", "ad_group", "ad"],
  granularities: ["day", "total"],
  // Meta keeps insights for 37 months (start dates further back are its #3018); 37 x 30.4 days, approximate.
  maxLookbackDays: 1125,
  // No per-request range limit besides the lookback; long ranges go to async runs.
  maxRangeDays: 1125,
  clicks: "Meta's clicks (all): link clicks plus clicks on the ad's other parts (reactions, comments, shares, profile, expand)",
  conversions: `Website conversions from Meta's actions: pixel / Conversions API purchases, leads and completed registrations (${CONVERSION_ACTION_TYPES.join(", ")}), under the ad account's attribution setting`,
  asyncJobs: true,
};

/** A decimal in major units ("12.34", "1500") as integer micros, exactly; more than 6 decimals round half up. */
export function decimalToMicros(value: string): string {
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(value.trim());
  if (!m) throw new ProviderError(PROVIDER, "unavailable", `insights: spend ${JSON.stringify(value)} is not a decimal`);
  const frac = m[3] ?? "";
  let micros = BigInt(m[2] + frac.slice(0, 6).padEnd(6, "0"));
  if (frac.length > 6 && frac[6] >= "5") micros += 1n;
  return micros === 0n ? "0" : `${m[1]}${micros}`;
}

const count = (v: unknown, what: string): number => {
  if (v === undefined || v === null) return 0;
  const s = String(v);
  if (!/^\d+$/.test(s)) throw new ProviderError(PROVIDER, "unavailable", `insights: ${what} ${JSON.stringify(s)} is not a count`);
  return Number(s);
};

/** Counted conversions; a row without `actions` had none (Meta leaves the field out then). */
export function conversionsOf(actions: unknown): number {
  if (!Array.isArray(actions)) return 0;
  let n = 0;
  for (const a of actions as { action_type?: unknown; value?: unknown }[]) if (COUNTED.has(String(a?.action_type))) n += Number(a.value) || 0;
  return n;
}

const digits = (accountId: string) => {
  const d = accountId.replace(/^act_/, "");
  if (!/^\d+$/.test(d)) throw new ProviderError(PROVIDER, "bad_request", `ad account id ${accountId}: digits expected`);
  return d;
};
const isDate = (d: string) => /^\d{4}-\d{2}-\d{2}$/.test(d) && new Date(`${d}T00:00:00Z`).toISOString().startsWith(d);
const daysIn = (q: ReportQuery) => Math.round((Date.parse(`${q.to}T00:00:00Z`) - Date.parse(`${q.from}T00:00:00Z`)) / 86_400_000) + 1;

/** Whether a query goes straight to an async report run (see the header). */
export function usesAsync(q: ReportQuery): boolean {
  if (q.granularity !== "day") return false;
  const days = daysIn(q);
  return days > ASYNC_DAILY_DAYS || (q.level === "ad" && days > ASYNC_AD_DAILY_DAYS);
}

export interface MetaReportingOptions {
  /** Polling of async runs: first wait, cap (doubling in between), and how long a run may take in all. */
  pollFirstMs?: number;
  pollMaxMs?: number;
  maxWaitMs?: number;
  pageSize?: number;
}

interface Answer { status: number; body: any; headers: Headers; traceId: string | null }

export class MetaAdsReportingClient implements ReportingClient {
  private readonly base: string;
  private readonly opts: Required<MetaReportingOptions>;

  constructor(private readonly ctx: { baseUrl: string; accessToken: string; env?: ProviderEnv }, opts: MetaReportingOptions = {}) {
    this.base = `${ctx.baseUrl.replace(/\/+$/, "")}/${pinnedVersion(manifest, ctx.env)}/`;
    // Meta's runs take seconds to minutes: start at 1 s, back off to 20 s, give up after 30 min.
    this.opts = { pollFirstMs: 1000, pollMaxMs: 20_000, maxWaitMs: 30 * 60_000, pageSize: PAGE_SIZE, ...opts };
  }

  private async send(method: "GET" | "POST", path: string, what: string, signal: AbortSignal | undefined, opts: { query?: Record<string, string>; body?: unknown } = {}): Promise<Answer> {
    signal?.throwIfAborted();
    const url = new URL(path, this.base);
    for (const [k, v] of Object.entries(opts.query ?? {})) url.searchParams.set(k, v);
    // The caller's abort is not a provider failure: the provider path rethrows it, ending the work as an AbortError.
    const res = await http.fetch(what, url, {
      env: this.ctx.env, method, signal, timeoutMs: TIMEOUT_MS, headers: { authorization: `Bearer ${this.ctx.accessToken}` }, ...(opts.body ? { json: opts.body } : {}),
    });
    const body = res.text ? res.body : {};
    return { status: res.status, body, headers: res.headers, traceId: graphErrorOf(body)?.fbtrace_id ?? res.headers.get("x-fb-trace-id") };
  }

  private ok(r: Answer, what: string): any {
    if (r.status !== 200 || !r.body || graphErrorOf(r.body)) throw callError(r.status, r.body, r.headers, what, r.traceId);
    return r.body;
  }

  async account(accountId: string): Promise<{ currency: string; time_zone: string }> {
    const act = `act_${digits(accountId)}`;
    const a = this.ok(await this.send("GET", act, act, undefined, { query: { fields: "currency,timezone_name" } }), act);
    if (typeof a.currency !== "string" || typeof a.timezone_name !== "string") throw new ProviderError(PROVIDER, "unavailable", `${act}: no currency or timezone_name in Meta's answer`);
    return { currency: a.currency, time_zone: a.timezone_name };
  }

  async *pages(q: ReportQuery, opts: { signal?: AbortSignal } = {}): AsyncGenerator<ReportRow[]> {
    const { signal } = opts;
    const act = `act_${digits(q.accountId)}`;
    if (!isDate(q.from) || !isDate(q.to) || q.from > q.to) throw new ProviderError(PROVIDER, "bad_request", `date range ${q.from}..${q.to}: two YYYY-MM-DD dates, from <= to, expected`);
    if (!metaReportingCapabilities.levels.includes(q.level)) throw new ProviderError(PROVIDER, "bad_request", `level ${q.level} is not reported`);
    const ids = q.adGroupIds?.map((id) => {
      if (!/^\d+$/.test(id)) throw new ProviderError(PROVIDER, "bad_request", `ad set id ${id}: digits expected`);
      return id;
    });
    if (ids && ids.length === 0) return; // "only these ad sets", and there are none
    const params: Record<string, unknown> = {
      fields: [...ID_FIELDS[q.level], ...METRIC_FIELDS].join(","),
      level: LEVEL[q.level],
      time_range: { since: q.from, until: q.to },
      time_increment: q.granularity === "day" ? "1" : "all_days",
      // Filtered at Meta: at campaign level the campaign rows then add up only these ad sets.
      ...(ids ? { filtering: [{ field: "adset.id", operator: "IN", value: ids }] } : {}),
    };
    const toRows = (data: unknown[]) => data.map((r) => this.row(r as Record<string, unknown>, q));

    if (!usesAsync(q)) {
      const query = Object.fromEntries(Object.entries(params).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]));
      let after: string | undefined;
      let yielded = false;
      for (;;) {
        const what = `${act}/insights`;
        const r = await this.send("GET", what, what, signal, { query: { ...query, limit: String(this.opts.pageSize), ...(after ? { after } : {}) } });
        const e = graphErrorOf(r.body);
        if (e?.code === 100 && e.error_subcode === DATA_TOO_LARGE_SUBCODE && !yielded) break; // too large for sync: async run below
        const page = this.ok(r, what);
        const rows = toRows(Array.isArray(page.data) ? page.data : []);
        if (rows.length) { yielded = true; yield rows; }
        after = page.paging?.next ? page.paging?.cursors?.after : undefined;
        if (!after) return;
      }
    }
    yield* this.asyncRun(act, params, q, signal, toRows);
  }

  private async *asyncRun(act: string, params: Record<string, unknown>, q: ReportQuery, signal: AbortSignal | undefined, toRows: (d: unknown[]) => ReportRow[]): AsyncGenerator<ReportRow[]> {
    const submitted = this.ok(await this.send("POST", `${act}/insights`, `${act}/insights (async)`, signal, { body: params }), `${act}/insights (async)`);
    const runId = String(submitted.report_run_id ?? "");
    if (!/^\d+$/.test(runId)) throw new ProviderError(PROVIDER, "unavailable", `${act}/insights (async): no report_run_id in Meta's answer`);
    const what = `report run ${runId} (${q.from}..${q.to})`;
    // An aborted signal ends the wait at once; the run is left to Meta (abandoned, not waited for).
    await pollReport(async () => {
      const s = this.ok(await this.send("GET", runId, what, signal, { query: { fields: "async_status,async_percent_completion" } }), what);
      // Meta can say Completed before the percentage reaches 100; the results are ready when both agree.
      if (s.async_status === "Job Completed" && Number(s.async_percent_completion) >= 100) return { ready: true };
      if (s.async_status === "Job Failed" || s.async_status === "Job Skipped") {
        return { failed: new ProviderError(PROVIDER, "unavailable", `${what}: ${s.async_status} at Meta (try again, or a shorter range)`, { providerCode: s.async_status === "Job Failed" ? "job_failed" : "job_skipped" }) };
      }
      return { pending: `${s.async_status ?? "pending"} (${s.async_percent_completion ?? 0} %)` };
    }, { firstMs: this.opts.pollFirstMs, maxMs: this.opts.pollMaxMs, budgetMs: this.opts.maxWaitMs },
    (elapsed, last) => new ProviderError(PROVIDER, "unavailable", `${what}: still ${last} after ${Math.round(elapsed / 1000)} s`, { providerCode: "job_timeout" }), signal);
    let after: string | undefined;
    for (;;) {
      const page = this.ok(await this.send("GET", `${runId}/insights`, what, signal, { query: { limit: String(this.opts.pageSize), ...(after ? { after } : {}) } }), what);
      const rows = toRows(Array.isArray(page.data) ? page.data : []);
      if (rows.length) yield rows;
      after = page.paging?.next ? page.paging?.cursors?.after : undefined;
      if (!after) return;
    }
  }

  private row(r: Record<string, unknown>, q: ReportQuery): ReportRow {
    const str = (v: unknown) => (v === undefined || v === null ? null : String(v));
    if (r.campaign_id === undefined) throw new ProviderError(PROVIDER, "unavailable", "insights: a row without campaign_id");
    return {
      // Meta's date_start is already the account-local day.
      date: q.granularity === "day" ? String(r.date_start) : null,
      campaign_id: String(r.campaign_id),
      campaign_name: str(r.campaign_name),
      ad_group_id: q.level === "campaign" ? null : str(r.adset_id),
      ad_group_name: q.level === "campaign" ? null : str(r.adset_name),
      ad_id: q.level === "ad" ? str(r.ad_id) : null,
      ad_name: q.level === "ad" ? str(r.ad_name) : null,
      impressions: count(r.impressions, "impressions"),
      clicks: count(r.clicks, "clicks"),
      spend_micros: decimalToMicros(String(r.spend ?? "0")),
      conversions: conversionsOf(r.actions),
    };
  }
}

export const metaAdsReporting: AdsReporting = {
  capabilities: metaReportingCapabilities,
  client: (ctx) => new MetaAdsReportingClient(ctx),
};
