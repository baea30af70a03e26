import { pinnedVersion, ProviderError, type ProviderEnv } from "@trendgate/connector-core";
import { http } from "./http.ts";
import type { AdsReporting, ReportingCapabilities, ReportingClient, ReportLevel, ReportQuery, ReportRow } from "../kind.ts";
import { callError, envelopeOf, PROVIDER, succeeded } from "./errors.ts";
import { manifest } from "./manifest.ts";

// TikTok reporting: the synchronous BASIC report
// `GET /report/integrated/get/` (advertiser_id, report_type=BASIC, data_level AUCTION_CAMPAIGN|ADGROUP|AD,
// `dimensions` = the level's id [+ stat_time_day], `metrics`, start_date/end_date in the advertiser's time zone,
// page/page_size with page_info.total_page, `filtering`). TikTok already reports in the advertiser's time zone and
// currency, so `stat_time_day` ("YYYY-MM-DD 00:00:00") is cut to its date, never parsed as an instant, and `spend`
// (a decimal string) is scaled to micros with string/BigInt arithmetic. Names come with the rows as TikTok's
// "attribute metrics" (campaign_name, adgroup_id, ...), so no extra listing calls are needed.
// Range limits (approximate: TikTok's docs as we know them; the 30 days are unverified):
// with `stat_time_day` one request covers at most 30 days, without a time dimension at most 365. A daily report
// over a longer range is split into consecutive 30-day requests here; a total is one request, so a total spans at
// most 365 days. Sync reports return at most ~10,000 ads per query unless filtered by ids (<= 100 ids a filter),
// which is why ad group filters go in chunks of 100.

const TIMEOUT_MS = 60_000;
/** /report/integrated/get/ takes page_size 1-1000. */
const PAGE_SIZE = 1000;
/** A `filtering` IN list takes at most 100 ids. */
const MAX_FILTER_IDS = 100;
const DAY_SPAN = 30;
const TOTAL_SPAN = 365;

const DATA_LEVEL: Record<ReportLevel, string> = { campaign: "AUCTION_CAMPAIGN", ad_group: "AUCTION_ADGROUP", ad: "AUCTION_AD" };
const ID_DIMENSION: Record<ReportLevel, string> = { campaign: "campaign_id", ad_group: "adgroup_id", ad: "ad_id" };
/** Attribute metrics naming each row's parents (an id used as the dimension is not asked for again as a metric). */
const ATTRIBUTES: Record<ReportLevel, string[]> = {
  campaign: ["campaign_name"],
  ad_group: ["campaign_id", "campaign_name", "adgroup_name"],
  ad: ["campaign_id", "campaign_name", "adgroup_id", "adgroup_name", "ad_name"],
};
const NUMBERS = ["impressions", "clicks", "spend", "conversion"];

export const tiktokReportingCapabilities: ReportingCapabilities = {
  levels: ["campaign", "ad_group", "ad"],
  granularities: ["day", "total"],
  // Approximate: TikTok publishes no retention figure we could find; third-party loaders backfill about 2 years.
  maxLookbackDays: 730,
  // A total is one request (TikTok: <= 365 days without a time dimension); a daily report is split into 30-day
  // requests, so it may span as long, up to the lookback.
  maxRangeDays: TOTAL_SPAN,
  clicks: "TikTok's `clicks` (Clicks (Destination)): clicks from the ad to its destination (landing page, app store, profile...)",
  conversions: "TikTok's `conversion`: times the ad achieved the ad group's optimization event (its pixel/app event), counted "
    + "under the ad group's attribution window and attributed to the day of the ad impression or click (approximate)",
  asyncJobs: false,
};

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const dayNumber = (d: string) => Date.UTC(Number(d.slice(0, 4)), Number(d.slice(5, 7)) - 1, Number(d.slice(8, 10))) / 86_400_000;
const dateOf = (n: number) => new Date(n * 86_400_000).toISOString().slice(0, 10);
const validDate = (d: string) => DATE.test(d) && dateOf(dayNumber(d)) === d;

/** Consecutive inclusive [from, to] windows of at most `span` days. */
export function dateWindows(from: string, to: string, span: number): [string, string][] {
  const out: [string, string][] = [];
  for (let n = dayNumber(from), end = dayNumber(to); n <= end; n += span) out.push([dateOf(n), dateOf(Math.min(n + span - 1, end))]);
  return out;
}

/**
 * A decimal amount (TikTok's `spend`, e.g. "12.34") as integer micros, exactly: digits shifted, never multiplied as a
 * float. Digits past the sixth decimal (TikTok sends two or three) round half away from zero.
 */
export function toMicros(value: unknown, what = "spend"): string {
  const s = typeof value === "number" ? String(value) : typeof value === "string" ? value.trim() : "";
  if (s === "" || s === "-") return "0"; // TikTok's placeholder for "no data"
  const m = /^(-?)(\d*)(?:\.(\d*))?$/.exec(s);
  if (!m || (m[2] === "" && !m[3])) throw new ProviderError(PROVIDER, "unavailable", `report: ${what} ${JSON.stringify(value).slice(0, 40)} is not a decimal amount`);
  const frac = (m[3] ?? "").padEnd(7, "0");
  let micros = BigInt((m[2] || "0") + frac.slice(0, 6));
  if (frac[6] >= "5") micros += 1n;
  return (m[1] && micros !== 0n ? -micros : micros).toString();
}

const count = (value: unknown, what: string): number => {
  if (value === undefined || value === null || value === "" || value === "-") return 0;
  const n = Number(value);
  if (!Number.isFinite(n)) throw new ProviderError(PROVIDER, "unavailable", `report: ${what} ${JSON.stringify(value).slice(0, 40)} is not a number`);
  return n;
};
const str = (v: unknown): string | null => (v === undefined || v === null || v === "" || v === "-" ? null : String(v));
const idOf = (id: string, what: string) => {
  if (!/^\d+$/.test(id)) throw new ProviderError(PROVIDER, "bad_request", `${what} id ${id}: digits expected`);
  return id;
};

/** One TikTok report row ({dimensions, metrics}) as ours. */
function rowOf(level: ReportLevel, daily: boolean, r: any): ReportRow {
  const d = r?.dimensions ?? {};
  const m = r?.metrics ?? {};
  const day = typeof d.stat_time_day === "string" ? d.stat_time_day.slice(0, 10) : null;
  if (daily && (!day || !DATE.test(day))) throw new ProviderError(PROVIDER, "unavailable", `report: row without a stat_time_day (${JSON.stringify(d).slice(0, 80)})`);
  const campaign = str(level === "campaign" ? d.campaign_id : m.campaign_id);
  if (!campaign) throw new ProviderError(PROVIDER, "unavailable", `report: row without a campaign_id (${JSON.stringify(d).slice(0, 80)})`);
  return {
    date: daily ? day : null,
    campaign_id: campaign,
    campaign_name: str(m.campaign_name),
    ad_group_id: level === "campaign" ? null : str(level === "ad_group" ? d.adgroup_id : m.adgroup_id),
    ad_group_name: level === "campaign" ? null : str(m.adgroup_name),
    ad_id: level === "ad" ? str(d.ad_id) : null,
    ad_name: level === "ad" ? str(m.ad_name) : null,
    impressions: count(m.impressions, "impressions"),
    clicks: count(m.clicks, "clicks"),
    spend_micros: toMicros(m.spend),
    // A missing `conversion` is "none reported"; TikTok sends "0" for none happened.
    conversions: m.conversion === undefined || m.conversion === null || m.conversion === "-" ? null : count(m.conversion, "conversion"),
  };
}

export class TikTokReportingClient implements ReportingClient {
  private readonly base: string;

  constructor(private readonly ctx: { baseUrl: string; accessToken: string; env?: ProviderEnv }) {
    const version = pinnedVersion(manifest, ctx.env);
    this.base = `${ctx.baseUrl.replace(/\/+$/, "")}/open_api/${version}/`;
  }

  /** A GET's `data` (lists and objects as JSON strings, as TikTok takes them); failures as ProviderErrors. */
  private async get(path: string, query: Record<string, unknown>, what: string, signal?: AbortSignal): Promise<any> {
    signal?.throwIfAborted();
    const url = new URL(path, this.base);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, typeof v === "string" ? v : JSON.stringify(v));
    // The caller's abort is not a provider failure: the provider path rethrows it, ending the report as the caller asked.
    const res = await http.fetch(what, url, { env: this.ctx.env, method: "GET", signal, timeoutMs: TIMEOUT_MS, headers: { "access-token": this.ctx.accessToken } });
    const body = res.body;
    if (!succeeded(res.status, body)) {
      const rid = envelopeOf(body)?.request_id;
      // 40100 is TikTok's one code for its per-second, per-minute and per-day limits, with no hint of which or for
      // how long: it maps to rate_limited without retryAfterMs (errors.ts), never to quota_exhausted.
      throw callError(res.status, body, what, typeof rid === "string" && rid ? rid : res.headers.get("x-tt-logid"));
    }
    return body.data ?? {};
  }

  async account(accountId: string): Promise<{ currency: string; time_zone: string }> {
    const id = idOf(accountId, "advertiser");
    const data = await this.get("advertiser/info/", { advertiser_ids: [id], fields: ["advertiser_id", "currency", "timezone", "display_timezone"] }, "advertiser/info");
    const info = (Array.isArray(data.list) ? data.list : []).find((a: any) => String(a?.advertiser_id) === id);
    if (!info) throw new ProviderError(PROVIDER, "not_found", `advertiser ${id} not found (or not authorized for this token)`);
    // display_timezone is the IANA name ("America/Los_Angeles"); `timezone` may be an offset zone ("Etc/GMT+8"),
    // itself a valid IANA name, used when the former is missing.
    const zone = str(info.display_timezone) ?? str(info.timezone);
    const currency = str(info.currency);
    if (!zone || !currency) throw new ProviderError(PROVIDER, "unavailable", `advertiser/info: advertiser ${id} came without currency or time zone`);
    return { currency: currency.toUpperCase(), time_zone: zone };
  }

  pages(q: ReportQuery, opts: { signal?: AbortSignal } = {}): AsyncIterable<ReportRow[]> {
    return this.rows(q, opts.signal);
  }

  private async *rows(q: ReportQuery, signal?: AbortSignal): AsyncGenerator<ReportRow[]> {
    // Checked on the first pull, so a refusal comes where the caller iterates, like any provider failure.
    const advertiser = idOf(q.accountId, "advertiser");
    if (!tiktokReportingCapabilities.levels.includes(q.level)) throw new ProviderError(PROVIDER, "bad_request", `level ${q.level}: TikTok reports campaign, ad_group or ad`);
    if (!validDate(q.from) || !validDate(q.to) || q.from > q.to) throw new ProviderError(PROVIDER, "bad_request", `date range ${q.from}..${q.to}: YYYY-MM-DD, from <= to expected`);
    const daily = q.granularity === "day";
    const days = dayNumber(q.to) - dayNumber(q.from) + 1;
    if (!daily && days > TOTAL_SPAN) throw new ProviderError(PROVIDER, "bad_request", `a TikTok total covers at most ${TOTAL_SPAN} days, not ${days}: ask for daily rows`);
    const adGroups = q.adGroupIds?.map((id) => idOf(id, "ad group"));
    if (adGroups && !adGroups.length) return;
    const windows = daily ? dateWindows(q.from, q.to, DAY_SPAN) : [[q.from, q.to] as [string, string]];
    const groups = adGroups ? chunks([...new Set(adGroups)], MAX_FILTER_IDS) : [undefined];
    if (adGroups && q.level === "campaign") {
      // A campaign row spans all its ad groups; restricted to some ad groups, it is the sum of their rows, read at
      // ad group level and added up here. The rows held are at most (ids x days), the ids being the caller's list.
      const sums = new Map<string, ReportRow>();
      for (const [from, to] of windows) for (const ids of groups) {
        for await (const page of this.provider(advertiser, "ad_group", daily, from, to, ids, signal)) {
          for (const r of page) {
            const key = `${r.campaign_id}|${r.date ?? ""}`;
            const s = sums.get(key);
            if (!s) { sums.set(key, { ...r, ad_group_id: null, ad_group_name: null }); continue; }
            s.impressions += r.impressions;
            s.clicks += r.clicks;
            s.spend_micros = (BigInt(s.spend_micros) + BigInt(r.spend_micros)).toString();
            s.conversions = s.conversions === null && r.conversions === null ? null : (s.conversions ?? 0) + (r.conversions ?? 0);
          }
        }
      }
      if (sums.size) yield [...sums.values()];
      return;
    }
    for (const [from, to] of windows) for (const ids of groups) yield* this.provider(advertiser, q.level, daily, from, to, ids, signal);
  }

  /** One TikTok report (one window, at most 100 ad group ids) page by page, each page fetched when asked for. */
  private async *provider(advertiser: string, level: ReportLevel, daily: boolean, from: string, to: string, adGroups: string[] | undefined, signal?: AbortSignal): AsyncGenerator<ReportRow[]> {
    const query = {
      advertiser_id: advertiser,
      report_type: "BASIC",
      data_level: DATA_LEVEL[level],
      dimensions: daily ? [ID_DIMENSION[level], "stat_time_day"] : [ID_DIMENSION[level]],
      metrics: [...ATTRIBUTES[level], ...NUMBERS],
      start_date: from,
      end_date: to,
      page_size: String(PAGE_SIZE),
      // TikTok's v1.3 filter objects: filter_value is itself a JSON string.
      filtering: adGroups ? [{ field_name: "adgroup_ids", filter_type: "IN", filter_value: JSON.stringify(adGroups) }] : undefined,
    };
    for (let page = 1; ; page++) {
      const data = await this.get("report/integrated/get/", { ...query, page: String(page) }, `report/integrated/get ${DATA_LEVEL[level]} ${from}..${to} page ${page}`, signal);
      const list: any[] = Array.isArray(data.list) ? data.list : [];
      if (list.length) yield list.map((r) => rowOf(level, daily, r));
      const total = Number(data.page_info?.total_page) || 0;
      if (!list.length || page >= total) return;
    }
  }
}

const chunks = <T>(xs: T[], n: number): T[][] => Array.from({ length: Math.ceil(xs.length / n) }, (_, i) => xs.slice(i * n, i * n + n));

export const tiktokAdsReporting: AdsReporting = {
  capabilities: tiktokReportingCapabilities,
  client: (ctx) => new TikTokReportingClient(ctx),
};
