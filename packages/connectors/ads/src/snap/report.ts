import { pinnedVersion, ProviderError, type ProviderEnv } from "@trendgate/connector-core";
import { http } from "./http.ts";
import { manifest } from "./manifest.ts";
import type { AdsReporting, ReportingCapabilities, ReportingClient, ReportLevel, ReportQuery, ReportRow } from "../kind.ts";
import { callError, PROVIDER } from "./errors.ts";

// Snap Ads reporting through the Snap Marketing API's measurement endpoints: synchronous
// stats, no report jobs. A report is read per date window:
// - all entities: `GET /v1/adaccounts/{id}/stats?breakdown=campaign|adsquad|ad`, one call per window;
// - only some ad squads (`adGroupIds`): Snap filters by being asked about the entity itself,
//   `GET /v1/adsquads/{id}/stats` (with `breakdown=ad` at the ad level), one call per ad squad and window.
// Each call is one page of rows, fetched only when the consumer asks for the next page. Snap's stats answers carry
// no `paging` (Snap pages entity lists, not stats, as far as its reference shows), so the date window and the entity
// are the page boundaries. Names and parentage (ad -> ad squad -> campaign) come from the account's entity listings,
// paged with Snap's `paging.next_link` (its cursor is read out and sent to our own base URL, like client.ts).
// Numbers: `spend` is already integer micros of the account's currency; clicks are Snap's `swipes` (a swipe up, or
// a tap on the attachment, is Snap's click); conversions are `conversion_purchases` under pinned attribution windows
// so the number means the same for every account. DAY windows must start and end at midnight in the account's time
// zone (Snap refuses others: "Timeseries queries with DAY granularity must have a start time that is the start of
// day ... for the account's timezone"), so boundaries are computed in that zone, DST included.

const LIST_PAGE = 1000;
/** Snap's cap on one DAY-granularity stats query (approximate: remembered as 32 days from Snap's reference). */
const DAY_WINDOW = 31;
const DAY_MS = 86_400_000;
const FIELDS = "impressions,swipes,spend,conversion_purchases";
/** Pinned so `conversion_purchases` is one definition across accounts (Snap's documented default windows). */
const ATTRIBUTION = { swipe_up_attribution_window: "28_DAY", view_attribution_window: "1_DAY", action_report_time: "conversion" };
const BREAKDOWN: Record<ReportLevel, "campaign" | "adsquad" | "ad"> = { campaign: "campaign", ad_group: "adsquad", ad: "ad" };

export const capabilities: ReportingCapabilities = {
  levels: ["campaign", "ad_group", "ad"],
  granularities: ["day", "total"],
  // Approximate: Snap documents no retention limit for stats; three years is what third-party tools read back.
  maxLookbackDays: 1095,
  // Ours, not Snap's: DAY ranges are split into 31-day windows; a year bounds the calls one report makes.
  maxRangeDays: 366,
  clicks: "Snap swipes (swipe ups and attachment taps on the ad)",
  conversions: "Snap conversion_purchases: purchases reported by the Snap Pixel, Conversions API or app events, attributed within 28 days of a swipe or 1 day of a view, counted on the day of the purchase",
  asyncJobs: false,
};

// ---- dates in the account's time zone ---------------------------------------------------------------------------

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
function dayNumber(date: string, what: string): number {
  const m = DATE.exec(date);
  const t = m ? Date.UTC(+m[1], +m[2] - 1, +m[3]) : NaN;
  if (!m || Number.isNaN(t) || new Date(t).toISOString().slice(0, 10) !== date) throw new ProviderError(PROVIDER, "bad_request", `${what} ${JSON.stringify(date)}: YYYY-MM-DD expected`);
  return t / DAY_MS;
}
const dateOf = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10);

const parts = new Map<string, Intl.DateTimeFormat>();
function zoneFormat(tz: string) {
  let f = parts.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", { timeZone: tz, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit" });
    parts.set(tz, f);
  }
  return f;
}
/** The wall clock of instant `t` in `tz`, as if it were UTC (ms), and its date. */
function wall(t: number, tz: string): { ms: number; date: string } {
  const p = Object.fromEntries(zoneFormat(tz).formatToParts(new Date(t)).map((x) => [x.type, x.value]));
  const ms = Date.UTC(+p.year, +p.month - 1, +p.day, +p.hour, +p.minute, +p.second);
  return { ms, date: `${p.year}-${p.month}-${p.day}` };
}
/** Midnight starting `date` in `tz` as Snap wants it: ISO with the zone's offset on that day. */
export function zoneMidnight(day: number, tz: string): string {
  const local = day * DAY_MS;
  let t = local - (wall(local, tz).ms - local);
  t = local - (wall(t, tz).ms - t); // the offset at the guessed instant (DST changes between UTC and local midnight)
  const off = Math.round((wall(t, tz).ms - t) / 60_000);
  const sign = off < 0 ? "-" : "+";
  const a = Math.abs(off);
  return `${dateOf(day)}T00:00:00.000${sign}${String(Math.floor(a / 60)).padStart(2, "0")}:${String(a % 60).padStart(2, "0")}`;
}

// ---- numbers ------------------------------------------------------------------------------------------------------

function count(v: unknown, what: string): number {
  if (v === undefined || v === null) return 0;
  const n = typeof v === "string" && /^\d+$/.test(v) ? Number(v) : v;
  if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 0) throw new ProviderError(PROVIDER, "unavailable", `${what}: Snap sent ${JSON.stringify(v)}, not a count`);
  return n;
}
/** Conversions may be modelled by Snap, so a fraction is kept as sent (approximate: Snap documents no type). */
function conversions(v: unknown, what: string): number {
  if (v === undefined || v === null) return 0;
  const n = typeof v === "string" && v.trim() !== "" ? Number(v) : v;
  if (typeof n !== "number" || !Number.isFinite(n) || n < 0) throw new ProviderError(PROVIDER, "unavailable", `${what}: Snap sent conversion_purchases ${JSON.stringify(v)}`);
  return n;
}
/** Snap's spend is integer micros already; kept as a BigInt so sums never pass through float math. */
function micros(v: unknown, what: string): bigint {
  if (v === undefined || v === null) return 0n;
  if (typeof v === "number" && Number.isSafeInteger(v)) return BigInt(v);
  if (typeof v === "string" && /^-?\d+$/.test(v)) return BigInt(v);
  throw new ProviderError(PROVIDER, "unavailable", `${what}: Snap sent spend ${JSON.stringify(v)}, not integer micros`);
}

// ---- the client ---------------------------------------------------------------------------------------------------

interface Names { campaigns: Map<string, string>; squads: Map<string, { name: string; campaign: string }>; ads: Map<string, { name: string; squad: string }> }
interface Point { id: string; date: string | null; impressions: number; swipes: number; spend: bigint; purchases: number }
const idOk = (id: string, what: string) => {
  if (!/^[A-Za-z0-9-]{1,64}$/.test(id)) throw new ProviderError(PROVIDER, "bad_request", `${what} id ${JSON.stringify(id)}: a Snap id (letters, digits, dashes) expected`);
  return id;
};

export class SnapAdsReportingClient implements ReportingClient {
  private readonly base: string;

  constructor(private readonly ctx: { baseUrl: string; accessToken: string; env?: ProviderEnv }) {
    this.base = `${ctx.baseUrl.replace(/\/+$/, "")}/${pinnedVersion(manifest, ctx.env)}/`;
  }

  private async get(path: string, query: Record<string, string>, what: string, signal?: AbortSignal): Promise<Record<string, any>> {
    signal?.throwIfAborted();
    const url = new URL(path, this.base);
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
    // The caller's abort stays an abort (the provider path rethrows it), not a provider failure.
    const res = await http.fetch(what, url, { env: this.ctx.env, method: "GET", signal, headers: { authorization: `Bearer ${this.ctx.accessToken}` } });
    const body = res.body;
    // A bare 429 (Snap sends no Retry-After) becomes rate_limited without retryAfterMs, as errors.ts maps it.
    if (res.status !== 200 || !body || typeof body !== "object" || body.request_status?.toUpperCase?.() !== "SUCCESS") throw callError(res.status, body, what);
    return body;
  }

  account(accountId: string): Promise<{ currency: string; time_zone: string }> {
    return this.readAccount(idOk(accountId, "ad account"));
  }

  private async readAccount(acct: string, signal?: AbortSignal): Promise<{ currency: string; time_zone: string }> {
    const body = await this.get(`adaccounts/${acct}`, {}, `ad account ${acct}`, signal);
    const a = body.adaccounts?.[0]?.adaccount;
    if (!a || typeof a.currency !== "string" || typeof a.timezone !== "string") throw new ProviderError(PROVIDER, "unavailable", `ad account ${acct}: Snap's answer has no currency or timezone`);
    return { currency: a.currency.toUpperCase(), time_zone: a.timezone };
  }

  /** Every entity of one listing, through Snap's cursor pages. */
  private async listAll(acct: string, edge: "campaigns" | "adsquads" | "ads", one: string, signal?: AbortSignal) {
    const out: Record<string, any>[] = [];
    let cursor: string | undefined;
    do {
      const body = await this.get(`adaccounts/${acct}/${edge}`, { limit: String(LIST_PAGE), ...(cursor ? { cursor } : {}) }, `ad account ${acct} ${edge}`, signal);
      for (const w of Array.isArray(body[edge]) ? body[edge] : []) if (w?.[one]?.id) out.push(w[one]);
      const link = body.paging?.next_link;
      cursor = undefined;
      if (typeof link === "string" && link) { try { cursor = new URL(link).searchParams.get("cursor") ?? undefined; } catch { /* no next page */ } }
    } while (cursor);
    return out;
  }

  private async names(acct: string, level: ReportLevel, squadsNeeded: boolean, signal?: AbortSignal): Promise<Names> {
    const n: Names = { campaigns: new Map(), squads: new Map(), ads: new Map() };
    for (const c of await this.listAll(acct, "campaigns", "campaign", signal)) n.campaigns.set(String(c.id), String(c.name ?? ""));
    if (level !== "campaign" || squadsNeeded) for (const s of await this.listAll(acct, "adsquads", "adsquad", signal)) n.squads.set(String(s.id), { name: String(s.name ?? ""), campaign: String(s.campaign_id ?? "") });
    if (level === "ad") for (const a of await this.listAll(acct, "ads", "ad", signal)) n.ads.set(String(a.id), { name: String(a.name ?? ""), squad: String(a.ad_squad_id ?? "") });
    return n;
  }

  /** The points of one stats answer: per entity (of the breakdown, or the entity asked about) and day. */
  private points(body: Record<string, any>, granularity: "DAY" | "TOTAL", breakdown: string | null, tz: string, what: string): Point[] {
    const key = granularity === "DAY" ? "timeseries_stats" : "total_stats";
    const one = granularity === "DAY" ? "timeseries_stat" : "total_stat";
    const out: Point[] = [];
    const add = (id: string, date: string | null, s: Record<string, unknown> | undefined) => {
      const at = `${what}, ${id}${date ? ` on ${date}` : ""}`;
      out.push({ id, date, impressions: count(s?.impressions, at), swipes: count(s?.swipes, at), spend: micros(s?.spend, at), purchases: conversions(s?.conversion_purchases, at) });
    };
    for (const w of Array.isArray(body[key]) ? body[key] : []) {
      if (w?.sub_request_status && String(w.sub_request_status).toUpperCase() !== "SUCCESS") {
        throw new ProviderError(PROVIDER, "unavailable", `${what}: Snap answered ${w.sub_request_status}${w.sub_request_error_reason ? `: ${String(w.sub_request_error_reason).slice(0, 200)}` : ""}`);
      }
      const stat = w?.[one];
      if (!stat) continue;
      const entities: Record<string, any>[] = breakdown ? (Array.isArray(stat.breakdown_stats?.[breakdown]) ? stat.breakdown_stats[breakdown] : []) : [stat];
      for (const e of entities) {
        const id = String(e.id);
        if (granularity === "TOTAL") { add(id, null, e.stats); continue; }
        // Each day's start is midnight in the account's zone; its date is read in that zone (not from the string).
        for (const p of Array.isArray(e.timeseries) ? e.timeseries : []) {
          const t = Date.parse(p?.start_time);
          if (Number.isNaN(t)) throw new ProviderError(PROVIDER, "unavailable", `${what}, ${id}: Snap sent start_time ${JSON.stringify(p?.start_time)}`);
          add(id, wall(t, tz).date, p.stats);
        }
      }
    }
    // `omit_empty` drops empty days and breakdown entities; an entity asked about directly still answers zeros, so
    // they are dropped here too and every path reports the same rows.
    return out.filter((p) => p.impressions || p.swipes || p.spend || p.purchases);
  }

  async *pages(q: ReportQuery, opts: { signal?: AbortSignal } = {}): AsyncGenerator<ReportRow[]> {
    const { signal } = opts;
    const acct = idOk(q.accountId, "ad account");
    if (!capabilities.levels.includes(q.level)) throw new ProviderError(PROVIDER, "bad_request", `level ${JSON.stringify(q.level)} is not one Snap reports`);
    if (q.granularity !== "day" && q.granularity !== "total") throw new ProviderError(PROVIDER, "bad_request", `granularity ${JSON.stringify(q.granularity)} is not one Snap reports here`);
    const from = dayNumber(q.from, "from");
    const to = dayNumber(q.to, "to");
    if (to < from) throw new ProviderError(PROVIDER, "bad_request", `from ${q.from} is after to ${q.to}`);
    if (to - from + 1 > capabilities.maxRangeDays) throw new ProviderError(PROVIDER, "bad_request", `a Snap report covers at most ${capabilities.maxRangeDays} days`);
    const squadIds = q.adGroupIds ? [...new Set(q.adGroupIds.map((id) => idOk(id, "ad squad")))] : undefined;
    if (squadIds && !squadIds.length) return;

    const { time_zone: tz } = await this.readAccount(acct, signal);
    const names = await this.names(acct, q.level, !!squadIds, signal);
    if (squadIds) {
      const missing = squadIds.filter((id) => !names.squads.has(id));
      if (missing.length) throw new ProviderError(PROVIDER, "not_found", `ad squad ${missing.join(", ")} is not in ad account ${acct}`);
    }
    const granularity = q.granularity === "day" ? "DAY" : "TOTAL";
    // TOTAL is one window (its sums are not split); DAY windows stay within Snap's per-query cap.
    const windows: [number, number][] = [];
    const step = granularity === "DAY" ? DAY_WINDOW : to - from + 1;
    for (let d = from; d <= to; d += step) windows.push([d, Math.min(to, d + step - 1)]);

    const row = (p: Point, level: ReportLevel, campaign?: string, squadAsked?: string): ReportRow => {
      let ad: string | null = null, squad: string | null = null, camp = campaign ?? p.id;
      if (level === "ad") { ad = p.id; squad = squadAsked ?? (names.ads.get(ad)?.squad || null); }
      if (level === "ad_group") squad = p.id;
      // An entity the listings no longer show (deleted) keeps its own id; a parent it cannot be traced to is "".
      if (level !== "campaign") camp = (squad && names.squads.get(squad)?.campaign) || "";
      return {
        date: p.date, campaign_id: camp, campaign_name: names.campaigns.get(camp) ?? null,
        ad_group_id: squad, ad_group_name: squad ? names.squads.get(squad)?.name ?? null : null,
        ad_id: ad, ad_name: ad ? names.ads.get(ad)?.name ?? null : null,
        impressions: p.impressions, clicks: p.swipes, spend_micros: p.spend.toString(), conversions: p.purchases,
      };
    };

    for (const [a, b] of windows) {
      const query = { granularity, fields: FIELDS, start_time: zoneMidnight(a, tz), end_time: zoneMidnight(b + 1, tz), omit_empty: "true", ...ATTRIBUTION };
      const span = granularity === "DAY" ? ` ${dateOf(a)}..${dateOf(b)}` : "";
      if (!squadIds) {
        const breakdown = BREAKDOWN[q.level];
        const body = await this.get(`adaccounts/${acct}/stats`, { ...query, breakdown }, `ad account ${acct} stats${span}`, signal);
        const rows = this.points(body, granularity, breakdown, tz, `ad account ${acct} stats`).map((p) => row(p, q.level));
        if (rows.length) yield rows;
        continue;
      }
      if (q.level === "campaign") {
        // Campaign rows of the chosen ad squads only: their stats summed per campaign and day (all four are sums).
        const sums = new Map<string, Point & { campaign: string }>();
        for (const id of squadIds) {
          const body = await this.get(`adsquads/${id}/stats`, query, `ad squad ${id} stats${span}`, signal);
          for (const p of this.points(body, granularity, null, tz, `ad squad ${id} stats`)) {
            const campaign = names.squads.get(id)!.campaign;
            const k = `${campaign}\u0000${p.date}`;
            const s = sums.get(k);
            if (!s) { sums.set(k, { ...p, id: campaign, campaign }); continue; }
            s.impressions += p.impressions; s.swipes += p.swipes; s.spend += p.spend; s.purchases += p.purchases;
          }
        }
        if (sums.size) yield [...sums.values()].map((p) => row(p, "campaign", p.campaign));
        continue;
      }
      for (const id of squadIds) {
        const breakdown = q.level === "ad" ? "ad" : null;
        const body = await this.get(`adsquads/${id}/stats`, breakdown ? { ...query, breakdown } : query, `ad squad ${id} stats${span}`, signal);
        const rows = this.points(body, granularity, breakdown, tz, `ad squad ${id} stats`).map((p) => row(p, q.level, undefined, id));
        if (rows.length) yield rows;
      }
    }
  }

}

export const snapAdsReporting: AdsReporting = {
  capabilities,
  client: (ctx) => new SnapAdsReportingClient(ctx),
};
