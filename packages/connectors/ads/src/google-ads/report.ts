import { ProviderError, type ProviderEnv } from "@trendgate/connector-core";
import { http } from "./http.ts";
import type { AdsReporting, ReportingCapabilities, ReportingClient, ReportQuery, ReportRow } from "../kind.ts";
import { callError, PROVIDER } from "./errors.ts";
import { digits, googleApi } from "./api.ts";

// Google Ads reporting: GAQL through googleAds:search, one provider page (Google fixes 10,000 rows) per
// pull, linked by pageToken/nextPageToken. Google already reports what the catalog wants: `segments.date` is the
// day in the account's time zone and `metrics.cost_micros` is integer micros of the account's currency (an int64,
// a JSON string), so rows are only checked and reshaped, never converted. Metrics are summed by Google over what
// is not selected: granularity `total` just leaves `segments.date` out of SELECT while keeping the date filter.
// A campaign report limited to ad groups cannot ask FROM campaign (ad_group.id is not a field of it), so it reads
// those ad groups' rows ordered by campaign (and date) and sums consecutive rows: streaming, one row held back.

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 86_400_000;

export const googleAdsReportingCapabilities: ReportingCapabilities = {
  levels: ["campaign", "ad_group", "ad"],
  granularities: ["day", "total"],
  // approximate: Google keeps performance stats for years and GAQL sets no range limit; 11 years is the retention
  // we assume (older dates simply return no rows).
  maxLookbackDays: 4018,
  maxRangeDays: 4018,
  clicks: "metrics.clicks: clicks on the ad as Google counts them (invalid clicks already filtered out by Google)",
  conversions: "metrics.conversions: conversions of the conversion actions marked 'include in Conversions', attributed "
    + "(possibly fractionally, e.g. data-driven attribution) to the day of the ad interaction, not the day of the conversion",
  asyncJobs: false,
};

type Row = Record<string, any>;
const badAnswer = (what: string) => new ProviderError(PROVIDER, "unavailable", `googleAds:search: unexpected answer (${what})`);

/** An int64 count (JSON string or number) as a number; absent is 0 (proto3 leaves defaults out). */
function count(v: unknown, field: string): number {
  if (v === undefined || v === null) return 0;
  const s = String(v);
  if (!/^\d+$/.test(s)) throw badAnswer(`${field} = ${JSON.stringify(v)}`);
  return Number(s);
}
/** cost_micros as a canonical integer string (BigInt: int64 may exceed 2^53; no float ever touches money). */
function micros(v: unknown): string {
  if (v === undefined || v === null) return "0";
  const s = String(v);
  if (!/^-?\d+$/.test(s)) throw badAnswer(`metrics.costMicros = ${JSON.stringify(v)}`);
  return BigInt(s).toString();
}

export class GoogleAdsReportingClient implements ReportingClient {
  private readonly base: string;
  private readonly loginCustomerId?: string;

  constructor(private readonly ctx: { baseUrl: string; accessToken: string; env?: ProviderEnv }) {
    ({ base: this.base, loginCustomerId: this.loginCustomerId } = googleApi(ctx));
  }

  /** One googleAds:search page. The caller's signal cancels the request in flight (its abort is rethrown as is). */
  private async search(accountId: string, query: string, pageToken: string | undefined, signal?: AbortSignal): Promise<{ results: Row[]; nextPageToken?: string }> {
    const cid = digits(accountId);
    if (!/^\d+$/.test(cid)) throw new ProviderError(PROVIDER, "bad_request", `customer id ${accountId}: digits expected`);
    // prettyPrint=false (Google's system parameter, approximate for Ads REST): a 10,000-row page is about a third smaller.
    const res = await http.fetch("googleAds:search", new URL(`customers/${cid}/googleAds:search?prettyPrint=false`, this.base), {
      env: this.ctx.env, method: "POST", signal, json: { query, ...(pageToken ? { pageToken } : {}) },
      headers: { authorization: `Bearer ${this.ctx.accessToken}`, ...(this.loginCustomerId ? { "login-customer-id": this.loginCustomerId } : {}) },
    });
    const body = res.text ? res.body : {};
    if (res.status !== 200 || !body) throw callError(res.status, body, "googleAds:search", res.headers.get("request-id"));
    if (body.results !== undefined && !Array.isArray(body.results)) throw badAnswer("results is not a list");
    return { results: body.results ?? [], nextPageToken: body.nextPageToken || undefined };
  }

  async account(accountId: string): Promise<{ currency: string; time_zone: string }> {
    const page = await this.search(accountId, "SELECT customer.currency_code, customer.time_zone FROM customer", undefined);
    const c = page.results[0]?.customer;
    if (!c?.currencyCode || !c?.timeZone) throw new ProviderError(PROVIDER, "not_found", `customer ${accountId}: no currency or time zone in its answer`);
    return { currency: c.currencyCode, time_zone: c.timeZone };
  }

  async *pages(q: ReportQuery, opts: { signal?: AbortSignal } = {}): AsyncGenerator<ReportRow[]> {
    const { signal } = opts;
    check(q);
    if (q.adGroupIds && !q.adGroupIds.length) return; // no ad group asked for: no rows (GAQL refuses an empty IN)
    const byDate = q.granularity === "day";
    // A campaign report limited to ad groups: sum their rows per campaign (and date), in Google's order.
    const rollUp = q.level === "campaign" && !!q.adGroupIds;
    const from = q.level === "ad" ? "ad_group_ad" : q.level === "ad_group" || rollUp ? "ad_group" : "campaign";
    const fields = [
      "campaign.id", "campaign.name",
      ...(from !== "campaign" ? ["ad_group.id", "ad_group.name"] : []),
      ...(from === "ad_group_ad" ? ["ad_group_ad.ad.id", "ad_group_ad.ad.name"] : []),
      ...(byDate ? ["segments.date"] : []),
      "metrics.impressions", "metrics.clicks", "metrics.cost_micros", "metrics.conversions",
    ];
    // Dates are the account's own days, as Google filters them: passed through, never shifted.
    const where = [`segments.date BETWEEN '${q.from}' AND '${q.to}'`, ...(q.adGroupIds ? [`ad_group.id IN (${q.adGroupIds.join(", ")})`] : [])];
    const query = `SELECT ${fields.join(", ")} FROM ${from} WHERE ${where.join(" AND ")}${rollUp ? ` ORDER BY campaign.id${byDate ? ", segments.date" : ""}` : ""}`;

    let token: string | undefined;
    let held: ReportRow | null = null; // rollUp: the last campaign row, which the next page may continue
    do {
      signal?.throwIfAborted();
      const page = await this.search(q.accountId, query, token, signal);
      let rows = page.results.map((r) => normalise(r, q.level, byDate));
      if (rollUp) {
        const out: ReportRow[] = [];
        for (const r of rows) {
          if (held && held.campaign_id === r.campaign_id && held.date === r.date) held = add(held, r);
          else { if (held) out.push(held); held = r; }
        }
        rows = out;
      }
      token = page.nextPageToken;
      if (rollUp && !token && held) { rows.push(held); held = null; }
      if (rows.length) yield rows; // the next page is fetched only when the consumer pulls again
    } while (token);
  }
}

function check(q: ReportQuery) {
  const bad = (m: string) => new ProviderError(PROVIDER, "bad_request", m);
  if (!googleAdsReportingCapabilities.levels.includes(q.level)) throw bad(`level ${q.level} is not reported`);
  if (!googleAdsReportingCapabilities.granularities.includes(q.granularity)) throw bad(`granularity ${q.granularity} is not reported`);
  const day = (d: string) => (DATE.test(d) && new Date(`${d}T00:00:00Z`).toISOString().startsWith(d) ? Date.parse(`${d}T00:00:00Z`) / DAY_MS : NaN);
  const f = day(q.from), t = day(q.to);
  if (Number.isNaN(f) || Number.isNaN(t)) throw bad(`dates must be YYYY-MM-DD, not ${q.from} .. ${q.to}`);
  if (f > t) throw bad(`from ${q.from} is after to ${q.to}`);
  if (t - f + 1 > googleAdsReportingCapabilities.maxRangeDays) throw bad(`a report covers at most ${googleAdsReportingCapabilities.maxRangeDays} days`);
  for (const id of q.adGroupIds ?? []) if (!/^\d+$/.test(id)) throw bad(`ad group id ${id}: digits expected`);
}

function normalise(r: Row, level: ReportQuery["level"], byDate: boolean): ReportRow {
  const m = r.metrics ?? {};
  const date = byDate ? r.segments?.date : null;
  if (byDate && !(typeof date === "string" && DATE.test(date))) throw badAnswer(`segments.date = ${JSON.stringify(date)}`);
  if (r.campaign?.id === undefined) throw badAnswer("row without campaign.id");
  const conversions = m.conversions === undefined ? 0 : Number(m.conversions);
  if (!Number.isFinite(conversions)) throw badAnswer(`metrics.conversions = ${JSON.stringify(m.conversions)}`);
  return {
    date,
    campaign_id: String(r.campaign.id),
    campaign_name: r.campaign.name ?? null,
    ad_group_id: level !== "campaign" ? String(r.adGroup?.id ?? "") || null : null,
    ad_group_name: level !== "campaign" ? r.adGroup?.name ?? null : null,
    ad_id: level === "ad" ? String(r.adGroupAd?.ad?.id ?? "") || null : null,
    // Most Google ads (responsive search ads) have no name: null, not an empty string.
    ad_name: level === "ad" ? r.adGroupAd?.ad?.name || null : null,
    impressions: count(m.impressions, "metrics.impressions"),
    clicks: count(m.clicks, "metrics.clicks"),
    spend_micros: micros(m.costMicros),
    conversions,
  };
}

/** Two rows of one campaign and date as one (money summed as BigInt). */
function add(a: ReportRow, b: ReportRow): ReportRow {
  return {
    ...a,
    impressions: a.impressions + b.impressions,
    clicks: a.clicks + b.clicks,
    spend_micros: (BigInt(a.spend_micros) + BigInt(b.spend_micros)).toString(),
    // Google's conversions are doubles already; rounding to 1e-9 drops the float noise a sum adds (0.1 + 0.2).
    conversions: Math.round(((a.conversions ?? 0) + (b.conversions ?? 0)) * 1e9) / 1e9,
  };
}

export const googleAdsReporting: AdsReporting = {
  capabilities: googleAdsReportingCapabilities,
  client: (ctx) => new GoogleAdsReportingClient(ctx),
};
