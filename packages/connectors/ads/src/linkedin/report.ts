import { pinnedVersion, ProviderError, type ProviderEnv } from "@trendgate/connector-core";
import { http } from "./http.ts";
import type { AdsReporting, ReportingCapabilities, ReportingClient, ReportLevel, ReportQuery, ReportRow } from "../kind.ts";
import { callError, PROVIDER } from "./errors.ts";
import { manifest } from "./manifest.ts";
import { restliQuery } from "./restli.ts";

// LinkedIn Ads reporting through `GET /rest/adAnalytics?q=analytics`, with the
// same versioned headers as client.ts (`Linkedin-Version`, `X-Restli-Protocol-Version: 2.0.0`, Rest.li 2.0 encoded
// structured parameters). Levels: a LinkedIn campaign GROUP is our `campaign` (pivot CAMPAIGN_GROUP), a LinkedIn
// campaign our `ad_group` (pivot CAMPAIGN), a creative our `ad` (pivot CREATIVE); parents and names come from the
// entities' BATCH_GETs (adAnalytics answers URNs only), fetched once per report.
//
// adAnalytics has NO paging: one answer per request, silently cut at 15,000 elements (a third-party changelog; LinkedIn
// sends no sign of the cut). So a report is a sequence of requests, each one of our pages, fetched only when the
// consumer pulls: daily reports go window by window (31 days first); an answer of 15,000 elements may have been cut,
// so it is thrown away and its window halved (and later windows start at that size), down to one day. One day, or a
// total (ALL) report, still at the cap cannot be split by date and fails as bad_request instead of losing rows.
//
// Dates: LinkedIn reports UTC days, and an ad account has no time zone of its own (adAccounts carries a currency
// only), so the account's reporting time zone is UTC: query dates go to LinkedIn as given and rows keep LinkedIn's
// days. Money: `costInLocalCurrency` is a decimal string in the account's currency, converted to micros with string
// and BigInt arithmetic (more than 6 decimals round half-up to the micro). Throttles: LinkedIn's 429 has no
// Retry-After (errors.ts), so rate_limited carries no wait hint.

const TIMEOUT_MS = 60_000;
/** Elements in one adAnalytics answer, beyond which LinkedIn drops the rest. */
export const ANALYTICS_CAP = 15_000;
/** First window of a daily report; halves when an answer reaches the cap. */
const FIRST_WINDOW_DAYS = 31;
/** Ad group (LinkedIn campaign) URNs per request of a filtered report: keeps the URL under LinkedIn's length limit
 * (approximate; longer requests would need query tunneling). */
const IDS_PER_CALL = 100;
/** Ids per BATCH_GET (approximate: LinkedIn documents no number; the URL length is what limits it). */
const IDS_PER_BATCH = 100;
/** Performance data is kept 10 years (third-party summary of LinkedIn's reporting docs; approximate). */
const LOOKBACK_DAYS = 3650;
const FIELDS = "impressions,clicks,costInLocalCurrency,externalWebsiteConversions,pivotValues,dateRange";
const PIVOT: Record<ReportLevel, string> = { campaign: "CAMPAIGN_GROUP", ad_group: "CAMPAIGN", ad: "CREATIVE" };
const URN_TYPE: Record<ReportLevel, string> = { campaign: "sponsoredCampaignGroup", ad_group: "sponsoredCampaign", ad: "sponsoredCreative" };
const DAY_MS = 86_400_000;

// clicks and conversions as LinkedIn's reporting docs define the two metrics (wording approximate, from memory).
export const capabilities: ReportingCapabilities = {
  levels: ["campaign", "ad_group", "ad"],
  granularities: ["day", "total"],
  maxLookbackDays: LOOKBACK_DAYS,
  // No range limit of LinkedIn's own: long daily ranges are split into windows under the 15,000-element cap.
  maxRangeDays: LOOKBACK_DAYS,
  clicks: "LinkedIn `clicks`: chargeable clicks (the clicks LinkedIn bills on CPC; social actions such as likes are not counted)",
  conversions: "LinkedIn `externalWebsiteConversions`: website conversions tracked by the account's conversion rules (Insight Tag or Conversions API), post-click and view-through within each rule's attribution windows",
  asyncJobs: false,
};

const bad = (m: string) => new ProviderError(PROVIDER, "bad_request", m);
const digits = (id: string, type: string, what: string) => {
  const d = String(id).replace(new RegExp(`^urn:li:${type}:`), "");
  if (!/^\d+$/.test(d)) throw bad(`${what} id ${id}: digits (or its urn:li:${type}: URN) expected`);
  return d;
};
const isoOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const msOf = (iso: string) => Date.parse(`${iso}T00:00:00Z`);
const validDate = (s: string) => /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(msOf(s)) && isoOf(msOf(s)) === s;
const restliDate = (iso: string) => { const [year, month, day] = iso.split("-").map(Number); return { year, month, day }; };
const chunks = <T>(xs: T[], n: number) => Array.from({ length: Math.ceil(xs.length / n) }, (_, i) => xs.slice(i * n, i * n + n));

/** A LinkedIn decimal money string as integer micros (a decimal string); more than 6 decimals round half-up. */
export function decimalToMicros(value: unknown): string {
  const s = typeof value === "string" ? value.trim() : typeof value === "number" && Number.isFinite(value) ? String(value) : "";
  const m = /^(-?)(\d+)?(?:\.(\d+))?$/.exec(s);
  if (!s || !m || (m[2] === undefined && m[3] === undefined)) throw new ProviderError(PROVIDER, "unavailable", `adAnalytics answered a cost that is not a decimal: ${JSON.stringify(value)}`);
  const frac = (m[3] ?? "").padEnd(7, "0");
  let micros = BigInt(`${m[2] ?? "0"}${frac.slice(0, 6)}`);
  if (frac[6] >= "5") micros += 1n;
  return `${m[1] && micros !== 0n ? "-" : ""}${micros}`;
}

const count = (v: unknown) => {
  // A metric LinkedIn leaves out is 0 (approximate: it may omit zero metrics).
  if (v === undefined || v === null) return 0;
  const n = typeof v === "number" ? v : Number(v);
  if (!Number.isSafeInteger(n)) throw new ProviderError(PROVIDER, "unavailable", `adAnalytics answered a count that is not an integer: ${JSON.stringify(v)}`);
  return n;
};

interface Element { pivotValues?: unknown; dateRange?: { start?: { year?: number; month?: number; day?: number } }; impressions?: unknown; clicks?: unknown; costInLocalCurrency?: unknown; externalWebsiteConversions?: unknown }
interface Named { name: string | null; parent: string | null }
interface Work { from: string; to: string; ids?: string[] }

export class LinkedInAdsReporting implements ReportingClient {
  private readonly base: string;
  private readonly version: string;
  /** Names and parents read for this client's reports (ids are unique per level across accounts). */
  private readonly known: Record<"group" | "campaign" | "creative", Map<string, Named>> = { group: new Map(), campaign: new Map(), creative: new Map() };

  constructor(private readonly ctx: { baseUrl: string; accessToken: string; env?: ProviderEnv }) {
    this.version = pinnedVersion(manifest, ctx.env);
    this.base = `${ctx.baseUrl.replace(/\/+$/, "")}/rest/`;
  }

  /** One GET; `query` is already encoded (Rest.li 2.0 plus the plain `fields` list). An abort stops it at once. */
  private async get(path: string, query: string, what: string, signal?: AbortSignal): Promise<any> {
    const res = await http.fetch(what, new URL(`${path}${query ? `?${query}` : ""}`, this.base), {
      env: this.ctx.env, method: "GET", signal, timeoutMs: TIMEOUT_MS,
      headers: { "Linkedin-Version": this.version, "X-Restli-Protocol-Version": "2.0.0", authorization: `Bearer ${this.ctx.accessToken}` },
    });
    const body = res.body;
    if (res.status !== 200 || !body || typeof body !== "object") {
      const e = callError(res.status, body, what, res.headers.get("x-li-uuid"));
      // adAnalytics needs r_ads_reporting besides a role on the account (errors.ts's 403 hint speaks of writes).
      if (res.status === 403 && path === "adAnalytics") throw new ProviderError(PROVIDER, e.kind, `${e.message.replace(`${PROVIDER}: `, "")} (reports need the r_ads_reporting scope on the connection, and any role on the ad account)`, e.detail);
      throw e;
    }
    return body;
  }

  async account(accountId: string): Promise<{ currency: string; time_zone: string }> {
    const acc = digits(accountId, "sponsoredAccount", "ad account");
    const a = await this.get(`adAccounts/${acc}`, "", `ad account ${acc}`);
    if (typeof a.currency !== "string" || !/^[A-Z]{3}$/.test(a.currency)) throw new ProviderError(PROVIDER, "unavailable", `ad account ${acc}: no ISO 4217 currency in LinkedIn's answer`);
    // No time zone on LinkedIn ad accounts: adAnalytics days are UTC days (see the top of this file).
    return { currency: a.currency, time_zone: "UTC" };
  }

  async *pages(q: ReportQuery, opts: { signal?: AbortSignal } = {}): AsyncGenerator<ReportRow[]> {
    const { signal } = opts;
    const acc = digits(q.accountId, "sponsoredAccount", "ad account");
    if (!capabilities.levels.includes(q.level)) throw bad(`level ${q.level}: LinkedIn reports ${capabilities.levels.join(", ")}`);
    if (!capabilities.granularities.includes(q.granularity)) throw bad(`granularity ${q.granularity}: LinkedIn reports ${capabilities.granularities.join(", ")}`);
    if (!validDate(q.from) || !validDate(q.to) || q.to < q.from) throw bad(`dates ${q.from}..${q.to}: two YYYY-MM-DD dates, from not after to`);
    if (msOf(q.from) < msOf(isoOf(Date.now())) - LOOKBACK_DAYS * DAY_MS) throw bad(`from ${q.from}: LinkedIn keeps performance data ${LOOKBACK_DAYS} days`);
    const ids = q.adGroupIds ? [...new Set(q.adGroupIds.map((id) => digits(id, "sponsoredCampaign", "ad group")))] : undefined;
    if (ids && !ids.length) return;
    const idChunks = ids ? chunks(ids, IDS_PER_CALL) : [undefined];
    // Campaign-group rows of two id chunks would be two partial rows of one group and day: refused, not mis-summed.
    if (q.level === "campaign" && idChunks.length > 1) throw bad(`a campaign-level LinkedIn report takes at most ${IDS_PER_CALL} ad groups (ask at ad_group level for more)`);
    const daily = q.granularity === "day";

    let span = FIRST_WINDOW_DAYS;
    let next = q.from; // first day not yet given a window
    const todo: Work[] = [];
    for (;;) {
      if (!todo.length) {
        if (next > q.to) return;
        const end = daily ? isoOf(Math.min(msOf(next) + (span - 1) * DAY_MS, msOf(q.to))) : q.to;
        for (const c of idChunks) todo.push({ from: next, to: end, ids: c });
        next = isoOf(msOf(end) + DAY_MS);
      }
      const w = todo.shift()!;
      const elements = await this.analytics(acc, q.level, daily, w, signal);
      if (elements.length >= ANALYTICS_CAP) {
        // Possibly cut: refetch the window in halves (and start later windows at the smaller size).
        if (!daily || w.from === w.to) {
          throw bad(`LinkedIn answers at most ${ANALYTICS_CAP} rows per request and ${w.from}${w.from === w.to ? "" : `..${w.to}`} has more at ${q.level} level${daily ? "" : " (ask per day)"}; filter by ad groups or choose a coarser level`);
        }
        const days = Math.round((msOf(w.to) - msOf(w.from)) / DAY_MS) + 1;
        const half = Math.ceil(days / 2);
        span = Math.max(1, Math.min(span, Math.floor(days / 2)) || 1);
        todo.unshift({ from: w.from, to: isoOf(msOf(w.from) + (half - 1) * DAY_MS), ids: w.ids }, { from: isoOf(msOf(w.from) + half * DAY_MS), to: w.to, ids: w.ids });
        continue;
      }
      const rows = await this.rows(acc, q.level, daily, elements, signal);
      if (rows.length) yield rows;
    }
  }

  private async analytics(acc: string, level: ReportLevel, daily: boolean, w: Work, signal?: AbortSignal): Promise<Element[]> {
    const query = restliQuery({
      q: "analytics", pivot: PIVOT[level], timeGranularity: daily ? "DAILY" : "ALL",
      dateRange: { start: restliDate(w.from), end: restliDate(w.to) },
      accounts: [`urn:li:sponsoredAccount:${acc}`],
      // With accounts: only these LinkedIn campaigns' activity, rolled up to the pivot (facets combine as AND:
      // approximate, LinkedIn's docs list the facets without saying how two combine).
      campaigns: w.ids?.map((id) => `urn:li:sponsoredCampaign:${id}`),
    });
    // `fields` is a projection: a plain comma list, not Rest.li encoded (an encoded comma would be part of a name).
    const body = await this.get("adAnalytics", `${query}&fields=${FIELDS}`, `adAnalytics ${PIVOT[level]} ${w.from}..${w.to}`, signal);
    return Array.isArray(body.elements) ? body.elements : [];
  }

  /** Normalised rows of one answer, after reading the names and parents not read yet. */
  private async rows(acc: string, level: ReportLevel, daily: boolean, elements: Element[], signal?: AbortSignal): Promise<ReportRow[]> {
    const urn = new RegExp(`^urn:li:${URN_TYPE[level]}:(\\d+)$`);
    const parsed = elements.map((e) => {
      const pv = Array.isArray(e.pivotValues) ? String(e.pivotValues[0]) : "";
      const id = urn.exec(pv)?.[1];
      if (!id) throw new ProviderError(PROVIDER, "unavailable", `adAnalytics answered pivot value ${JSON.stringify(pv)} for pivot ${PIVOT[level]}`);
      const s = e.dateRange?.start;
      const date = daily ? `${String(s?.year).padStart(4, "0")}-${String(s?.month).padStart(2, "0")}-${String(s?.day).padStart(2, "0")}` : null;
      if (date !== null && !validDate(date)) throw new ProviderError(PROVIDER, "unavailable", `adAnalytics answered a dateRange that is not a day: ${JSON.stringify(e.dateRange)}`);
      return { id, date, e };
    });
    // Entities: creatives name their campaign, campaigns their group (the BATCH_GETs are read top-down).
    if (level === "ad") await this.read(acc, "creative", parsed.map((p) => p.id), signal);
    const campaignIds = level === "ad_group" ? parsed.map((p) => p.id) : level === "ad" ? parsed.map((p) => this.known.creative.get(p.id)?.parent).filter((x): x is string => !!x) : [];
    if (campaignIds.length) await this.read(acc, "campaign", campaignIds, signal);
    const groupIds = level === "campaign" ? parsed.map((p) => p.id) : campaignIds.map((c) => this.known.campaign.get(c)?.parent).filter((x): x is string => !!x);
    await this.read(acc, "group", groupIds, signal);

    return parsed.map(({ id, date, e }) => {
      const creative = level === "ad" ? this.known.creative.get(id) : undefined;
      const campaignId = level === "ad_group" ? id : creative?.parent ?? null;
      const campaign = campaignId ? this.known.campaign.get(campaignId) : undefined;
      const groupId = level === "campaign" ? id : campaign?.parent ?? null;
      if (!groupId) throw new ProviderError(PROVIDER, "not_found", `${URN_TYPE[level]} ${id} of the report: its campaign group could not be read from ad account ${acc}`);
      return {
        date,
        campaign_id: groupId, campaign_name: this.known.group.get(groupId)?.name ?? null,
        ad_group_id: campaignId, ad_group_name: campaign?.name ?? null,
        ad_id: level === "ad" ? id : null, ad_name: creative?.name ?? null,
        impressions: count(e.impressions), clicks: count(e.clicks),
        spend_micros: decimalToMicros(e.costInLocalCurrency ?? "0"),
        conversions: count(e.externalWebsiteConversions),
      };
    });
  }

  /** BATCH_GET of the entities not read yet: `{results: {<key>: entity}}`; ids LinkedIn does not answer stay unnamed. */
  private async read(acc: string, kind: "group" | "campaign" | "creative", ids: string[], signal?: AbortSignal): Promise<void> {
    const cache = this.known[kind];
    const missing = [...new Set(ids)].filter((id) => !cache.has(id));
    const path = `adAccounts/${acc}/${kind === "group" ? "adCampaignGroups" : kind === "campaign" ? "adCampaigns" : "creatives"}`;
    for (const batch of chunks(missing, IDS_PER_BATCH)) {
      // Creatives are keyed by their URN, campaigns and groups by their number.
      const keys = kind === "creative" ? batch.map((id) => `urn:li:sponsoredCreative:${id}`) : batch;
      const body = await this.get(path, restliQuery({ ids: keys }), `${kind} names`, signal);
      const results = body.results && typeof body.results === "object" ? body.results as Record<string, any> : {};
      for (const [n, id] of batch.entries()) {
        const r = results[keys[n]] ?? results[encodeURIComponent(keys[n])];
        const parentUrn = kind === "creative" ? r?.campaign : kind === "campaign" ? r?.campaignGroup : undefined;
        const parent = typeof parentUrn === "string" ? /:(\d+)$/.exec(parentUrn)?.[1] ?? null : null;
        cache.set(id, { name: typeof r?.name === "string" && r.name ? r.name : null, parent });
      }
    }
  }
}

export const linkedinAdsReporting: AdsReporting = {
  capabilities,
  client: (ctx) => new LinkedInAdsReporting(ctx),
};
