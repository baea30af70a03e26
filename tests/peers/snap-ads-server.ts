import crypto from "node:crypto";
import type http from "node:http";
import { authorizeEndpoint } from "./consent-page.ts";
import { bodyServer, listenLocal, type StandInOptions } from "./listen.ts";
import { peerFaults, type PeerFaults } from "./faults.ts";

// A local stand-in for the Snap Marketing API, strict where a connector could get it wrong:
// - OAuth token endpoint `POST /login/oauth2/access_token` (form body, client_id and client_secret in it):
//   `authorization_code` and `refresh_token` grants; access tokens live 1800 s, the refresh token is reused (the
//   same one comes back). Unknown client: 401 invalid_client; a used or unknown code, a wrong redirect_uri or an
//   unknown refresh token: 400 invalid_grant.
// - API under `/v1/` only, `Authorization: Bearer` only (no token in the URL). Missing, unknown or expired token: 401.
// - Every answer is an envelope `{request_status, request_id, ...}`; a failure adds `debug_message`,
//   `display_message` and `error_code`. Lists wrap each entity: `adsquads:[{sub_request_status, adsquad:{...}}]`.
// - `GET /v1/me/organizations?with_ad_accounts=true`: the organizations of the ad accounts the token sees, each with them.
// - Reads: `GET /v1/adaccounts/{id}`, `/v1/adaccounts/{id}/campaigns`, `/v1/adaccounts/{id}/adsquads`,
//   `/v1/campaigns/{id}/adsquads`, `/v1/adsquads/{id}`. Paging is opt-in: without `limit` everything comes back;
//   `limit` must be 50..1000, and `paging.next_link` (a full URL with `cursor`) is there while more remain.
// - Interest lookup `GET /v1/targeting/interests/scls[?country_code=]`: the Snap Lifestyle Categories as
//   `targeting_dimensions:[{sub_request_status, scls:{id, name, path, parent_id, source}}]` (no search: the whole list).
// - Writes: `PUT /v1/campaigns/{campaign_id}/adsquads` with `{adsquads:[...]}`, each the WHOLE ad squad: a field
//   not sent is gone (replaced, not merged), a required one missing is refused. `PATCH` on the same path (Snap,
//   May 2026) takes `{adsquads:[{id, <changed fields>}]}` and changes only the fields sent (a field is replaced whole,
//   `targeting` included); the result must still pass the PUT's checks. On both, a read-only field sent back
//   (created_at, updated_at, delivery_status, effective_status) or an immutable one changed (campaign_id, type) is
//   refused with E2023, the code Snap names for immutable-field violations. Targeting is checked as Snap documents it: geos
//   required, several countries need a single-language demographics entry, min_age >= 13, interest ids must be
//   live Lifestyle Categories. Each ad squad answers its own sub_request_status (`sub_request_error_reason`
//   "E2xxx: ..." on error): all fine 200 SUCCESS, some 200 PARTIAL, none 400 ERROR. No validate-only mode exists.
// - Throttle: a bare 429 with no Retry-After and no rate-limit headers. `failNext("throttle")`
//   forces it; `perTokenPerSecond` enforces a per-token budget like Snap's 10 requests/s.
// - Reporting: ads `GET /v1/adaccounts/{id}/ads` (ad_squad_id, name); stats
//   `GET /v1/{adaccounts|campaigns|adsquads|ads}/{id}/stats` with `granularity` TOTAL|DAY (HOUR is refused here: not
//   modelled), `fields` (impressions, swipes, spend, conversion_purchases; others refused), `start_time`/`end_time`
//   ISO with an offset on the hour, for DAY at midnight of the account's time zone (Snap's own refusal text) and at
//   most 32 days (approximate), `breakdown` (account: campaign|adsquad|ad; campaign: adsquad|ad; ad squad: ad),
//   `omit_empty`, the attribution windows. Answers `timeseries_stats:[{sub_request_status, timeseries_stat:{...,
//   timeseries:[{start_time,end_time,stats}] | breakdown_stats:{<level>:[{id,type,timeseries}]}}}]` or `total_stats`
//   with `stats` instead of `timeseries`; times carry the account zone's offset. Stats are seeded per ad and day
//   (`addStats`, the day in the account's time zone) as Snap stores them: `spend` integer micros of the account's
//   currency, `swipes`, `conversion_purchases`; a campaign's or ad squad's are its ads' sums. No paging on stats.
// Where Snap's docs are silent, shapes follow Snap's public reference as remembered; E-codes marked "approximate"
// were not verified, so clients should branch on the HTTP status and sub_request_status, not on these codes.

export const SNAP_CODES = {
  /** Approximate. */
  unauthorized: "E3001",
  /** Approximate. */
  forbidden: "E3002",
  /** Seen in third-party notes for not found. */
  notFound: "E3003",
  /** Approximate. */
  badRequest: "E1001",
  /** Approximate. */
  throttled: "E1008",
  /** Approximate. */
  required: "E2004",
  /** Approximate. */
  invalidTargeting: "E2005",
  /** The code Snap's 2026-05-26 changelog names for immutable fields. */
  immutable: "E2023",
  /** Approximate. */
  inReview: "E2501",
} as const;

export interface SnapAdAccount { id: string; name: string; organization_id: string; currency: string; timezone: string; status: string; type: string; created_at: string; updated_at: string }
export interface SnapCampaign { id: string; ad_account_id: string; name: string; status: string; objective: string; start_time: string; created_at: string; updated_at: string }
export type SnapAdSquad = Record<string, any> & { id: string; campaign_id: string; name: string; status: string; targeting: Record<string, any> };
export interface SnapAd { id: string; ad_squad_id: string; name: string; type: string; status: string; creative_id: string; created_at: string; updated_at: string }
/** One ad's stats for one day (YYYY-MM-DD in the account's time zone), in Snap's units. */
export interface SnapStat { adId: string; date: string; impressions?: number; swipes?: number; spend?: number; conversion_purchases?: number }
export interface SnapInterest { id: string; name: string; path: string; parent_id: string; source: string }

export interface SnapRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  /** Request headers without authorization. */
  headers: http.IncomingHttpHeaders;
  body: any;
  status?: number;
  requestId: string;
  at: number;
  /** The ad account the request was about, when it names one (directly or through a campaign or ad squad). */
  adAccountId: string | null;
  throttled?: boolean;
}

/** One ad squad of a PUT that passed auth and throttling, with its verdict. */
export interface SnapWrite { method: "PUT" | "PATCH"; campaignId: string; adsquad: Record<string, any>; ok: boolean; reason?: string }

export interface SnapAdsServer {
  url: string;
  /** The consent page (SNAP_ADS_AUTHORIZE_URL): approving issues a code reaching every ad account. */
  authorizeUrl: string;
  tokenUrl: string;
  app: { clientId: string; clientSecret: string };
  addToken(token: string, opts?: { expiresInS?: number; accounts?: string[] }): void;
  expireToken(token: string): void;
  addCode(code: string, opts: { redirectUri: string; accounts?: string[] }): void;
  addAdAccount(a?: { id?: string; name?: string; currency?: string; timezone?: string }): SnapAdAccount;
  addAd(a: { adSquadId: string; name: string; id?: string }): SnapAd;
  /** Stats of one ad on one day, added to what is stored (spend in integer micros, as Snap reports it). */
  addStats(s: SnapStat): void;
  addCampaign(c: { adAccountId: string; name: string; id?: string; status?: string }): SnapCampaign;
  /** An ad squad with realistic defaults (budget, bid, schedule, placement); `extra` overrides any field. */
  addAdSquad(s: { campaignId: string; name: string; targeting: Record<string, any>; id?: string; extra?: Record<string, any> }): SnapAdSquad;
  adSquad(id: string): SnapAdSquad | undefined;
  targetingOf(id: string): Record<string, any> | undefined;
  /** Changes targeting behind the client's back. */
  setTargeting(id: string, targeting: Record<string, any>): void;
  addInterest(i: { id: string; name: string }): SnapInterest;
  interestName(id: string): string | undefined;
  /** The category leaves the list; writes naming it are refused from now on. */
  retireInterest(id: string): void;
  /** Writes to this ad squad are refused from now on (its ads in review). */
  refuseAdSquad(id: string): void;
  /** The next n API calls answer this fault (after auth); with `only`, the next n calls whose path matches it. */
  failNext(kind: "throttle" | "unavailable", n?: number, only?: RegExp): void;
  requests: SnapRequest[];
  writes: SnapWrite[];
  counts: { authorization_code: number; refresh_token: number; refused: number };
  resetLog(): void;
  /** Failures around a write, on request (faults.ts): its answer lost after it was applied, applied late, a restart. */
  faults: PeerFaults;
  close(): Promise<void>;
}

/** A few real-looking Snap Lifestyle Categories. */
const SEED_INTERESTS: [string, string][] = [
  ["SLC_1", "Bookworms & Avid Readers"], ["SLC_7", "Fashion & Style Gurus"], ["SLC_8", "Film & TV Fans"], ["SLC_11", "Foodies"],
  ["SLC_23", "Music Fans"], ["SLC_36", "Comedy Fans"], ["SLC_37", "Gamers"], ["SLC_45", "Tech & Gadget Enthusiasts"], ["SLC_52", "Fitness Enthusiasts"],
];
/** Written by Snap, never by a PUT or PATCH: sending one back is refused (E2023). */
export const SNAP_READ_ONLY = ["created_at", "updated_at", "delivery_status", "effective_status"] as const;
const SERVER_FIELDS = new Set<string>(["id", ...SNAP_READ_ONLY]);
const REQUIRED = ["name", "type", "status", "billing_event", "targeting"];
const IMMUTABLE = ["type"];
const STATUSES = ["ACTIVE", "PAUSED"];

const clone = <T>(v: T): T => structuredClone(v);
const now = () => new Date().toISOString().replace(/Z$/, "").slice(0, 23) + "Z";
const requestId = () => crypto.randomBytes(32).toString("hex");

class SnapError extends Error {
  constructor(readonly status: number, readonly code: string, readonly display: string, readonly debug = display) { super(display); }
}

export async function startSnapAdsServer(opts: { perTokenPerSecond?: number } & StandInOptions = {}): Promise<SnapAdsServer> {
  const app = opts.app ?? { clientId: crypto.randomUUID(), clientSecret: crypto.randomBytes(20).toString("hex") };
  const tokens = new Map<string, { expiresAt: number | null; accounts: string[] | null; refresh?: string }>();
  const refreshTokens = new Map<string, { accounts: string[] | null }>();
  const codes = new Map<string, { redirectUri: string; accounts: string[] | null; used: boolean }>();
  const accounts = new Map<string, SnapAdAccount>();
  const campaigns = new Map<string, SnapCampaign>();
  const squads = new Map<string, SnapAdSquad>();
  const ads = new Map<string, SnapAd>();
  const stats = new Map<string, Required<Omit<SnapStat, "adId" | "date">>>(); // `${adId} ${date}`
  const interests = new Map<string, SnapInterest>(SEED_INTERESTS.map(([id, name]) => [id, { id, name, path: `/${name}`, parent_id: "SLC_0", source: "SNAPCHAT" }]));
  const retired = new Set<string>();
  const refused = new Set<string>();
  const requests: SnapRequest[] = [];
  const writes: SnapWrite[] = [];
  const counts = { authorization_code: 0, refresh_token: 0, refused: 0 };
  const recent = new Map<string, number[]>();
  let fault: { kind: "throttle" | "unavailable"; n: number; only?: RegExp } | null = null;

  // ---- OAuth -------------------------------------------------------------------------------------------------------
  function issue(accountsSeen: string[] | null, refresh?: string) {
    const access = `snap-at-${crypto.randomBytes(24).toString("base64url")}`;
    const rt = refresh ?? `snap-rt-${crypto.randomBytes(24).toString("base64url")}`;
    tokens.set(access, { expiresAt: Date.now() + 1800_000, accounts: accountsSeen, refresh: rt });
    refreshTokens.set(rt, { accounts: accountsSeen });
    return { access_token: access, token_type: "Bearer", expires_in: 1800, refresh_token: rt, scope: "snapchat-marketing-api" };
  }
  function oauth(form: URLSearchParams): { status: number; body: unknown } {
    const refuse = (status: number, error: string, description: string) => { counts.refused++; return { status, body: { error, error_description: description } }; };
    if (form.get("client_id") !== app.clientId || form.get("client_secret") !== app.clientSecret) return refuse(401, "invalid_client", "Client authentication failed");
    const grant = form.get("grant_type");
    if (grant === "authorization_code") {
      const c = codes.get(form.get("code") ?? "");
      if (!c || c.used) return refuse(400, "invalid_grant", "Invalid authorization code");
      if (form.get("redirect_uri") !== c.redirectUri) return refuse(400, "invalid_grant", "Redirect URI mismatch");
      c.used = true;
      counts.authorization_code++;
      return { status: 200, body: issue(c.accounts) };
    }
    if (grant === "refresh_token") {
      const rt = form.get("refresh_token") ?? "";
      const r = refreshTokens.get(rt);
      if (!r) return refuse(400, "invalid_grant", "Invalid refresh token");
      counts.refresh_token++;
      return { status: 200, body: issue(r.accounts, rt) }; // Snap reuses the refresh token
    }
    return refuse(400, "unsupported_grant_type", `grant_type ${grant ?? "(none)"} is not supported`);
  }

  // ---- views and paging ----------------------------------------------------------------------------------------------
  const ownerOfCampaign = (id: string) => campaigns.get(id)?.ad_account_id ?? null;
  const ownerOfSquad = (id: string) => { const s = squads.get(id); return s ? ownerOfCampaign(s.campaign_id) : null; };
  const ownerOfAd = (id: string) => { const a = ads.get(id); return a ? ownerOfSquad(a.ad_squad_id) : null; };

  // ---- stats -------------------------------------------------------------------------------------------------------
  const fmts = new Map<string, Intl.DateTimeFormat>();
  const zoneFmt = (tz: string) => {
    if (!fmts.has(tz)) fmts.set(tz, new Intl.DateTimeFormat("en-US", { timeZone: tz, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit" }));
    return fmts.get(tz)!;
  };
  /** The wall clock of instant t in tz: its date, whether it is midnight, and the zone's offset in minutes. */
  function local(t: number, tz: string) {
    const p = Object.fromEntries(zoneFmt(tz).formatToParts(new Date(t)).map((x) => [x.type, x.value]));
    const wallMs = Date.UTC(+p.year, +p.month - 1, +p.day, +p.hour, +p.minute, +p.second);
    return { date: `${p.year}-${p.month}-${p.day}`, midnight: p.hour === "00" && p.minute === "00" && p.second === "00" && t % 1000 === 0, offset: Math.round((wallMs - t) / 60_000) };
  }
  function isoIn(t: number, tz: string) {
    const off = local(t, tz).offset;
    const a = Math.abs(off);
    return new Date(t + off * 60_000).toISOString().replace(/Z$/, "") + `${off < 0 ? "-" : "+"}${String(Math.floor(a / 60)).padStart(2, "0")}:${String(a % 60).padStart(2, "0")}`;
  }
  /** The instant after t at which the next local day starts (hour steps: zones move by whole or half hours). */
  function nextMidnight(t: number, tz: string) {
    let u = t + 3_600_000 * 20;
    while (!local(u, tz).midnight || local(u, tz).date === local(t, tz).date) u += 1_800_000;
    return u;
  }
  const STAT_FIELDS = ["impressions", "swipes", "spend", "conversion_purchases"] as const;
  const BREAKDOWNS: Record<string, string[]> = { adaccounts: ["campaign", "adsquad", "ad"], campaigns: ["adsquad", "ad"], adsquads: ["ad"], ads: [] };
  const TYPES: Record<string, string> = { adaccounts: "AD_ACCOUNT", campaigns: "CAMPAIGN", adsquads: "AD_SQUAD", ads: "AD", campaign: "CAMPAIGN", adsquad: "AD_SQUAD", ad: "AD" };
  const WINDOWS = { swipe_up_attribution_window: ["1_DAY", "7_DAY", "28_DAY"], view_attribution_window: ["none", "1_HOUR", "3_HOUR", "6_HOUR", "1_DAY", "7_DAY", "28_DAY"], action_report_time: ["conversion", "impression"] } as const;

  function statsOf(kind: string, id: string, acct: SnapAdAccount, url: URL) {
    const q = url.searchParams;
    const bad = (msg: string) => new SnapError(400, SNAP_CODES.badRequest, msg);
    const granularity = q.get("granularity") ?? "TOTAL";
    if (granularity === "HOUR") throw bad("Unsupported Stats Query: HOUR granularity is not modelled by this stand-in");
    if (granularity !== "TOTAL" && granularity !== "DAY") throw bad(`Invalid granularity ${granularity}`);
    const fields = (q.get("fields") ?? "impressions,swipes,spend").split(",").map((f) => f.trim()).filter(Boolean);
    for (const f of fields) if (!(STAT_FIELDS as readonly string[]).includes(f)) throw bad(`Invalid field ${f}`);
    for (const [k, allowed] of Object.entries(WINDOWS)) { const v = q.get(k); if (v !== null && !(allowed as readonly string[]).includes(v)) throw bad(`Invalid ${k} ${v}`); }
    const breakdown = q.get("breakdown");
    if (breakdown !== null && !BREAKDOWNS[kind].includes(breakdown)) throw bad(`Unsupported Stats Query: breakdown ${breakdown} is not supported for ${TYPES[kind]}`);
    const omitEmpty = q.get("omit_empty") === "true";
    const tz = acct.timezone;
    const time = (k: string) => {
      const v = q.get(k);
      if (v === null) return null;
      if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?(Z|[+-]\d{2}:\d{2})$/.test(v) || Number.isNaN(Date.parse(v))) throw bad(`Invalid ${k} ${v}: ISO 8601 with a time zone expected`);
      const t = Date.parse(v);
      if (t % 3_600_000 !== 0 && local(t, tz).offset % 60 === 0) throw bad(`Unsupported Stats Query: ${k} must be on the hour`);
      if (granularity === "DAY" && !local(t, tz).midnight) {
        throw bad(`Unsupported Stats Query: Timeseries queries with DAY granularity must have a ${k === "start_time" ? "start" : "end"} time that is the start of day (00:00:00) for the account's timezone. This account's timezone is: ${tz}`);
      }
      return t;
    };
    let start = time("start_time");
    let end = time("end_time");
    if (granularity === "DAY" && (start === null || end === null)) throw bad("start_time and end_time are required for DAY granularity");
    // TOTAL without times: the entity's lifetime (as far back as anything was seeded).
    start ??= Date.parse("2015-01-01T00:00:00Z");
    end ??= Date.now();
    if (end <= start) throw bad("end_time must be after start_time");
    const days: { date: string; from: number; to: number }[] = [];
    for (let t = start; t < end;) { const n = granularity === "DAY" ? nextMidnight(t, tz) : end; days.push({ date: local(t, tz).date, from: t, to: Math.min(n, end) }); t = n; }
    if (granularity === "DAY" && days.length > 32) throw bad("Unsupported Stats Query: DAY granularity queries can span at most 32 days");

    // The ads under the entity, and which breakdown entity each one counts towards.
    const adsOf = [...ads.values()].filter((a) => {
      const squad = squads.get(a.ad_squad_id);
      if (kind === "ads") return a.id === id;
      if (kind === "adsquads") return a.ad_squad_id === id;
      if (kind === "campaigns") return squad?.campaign_id === id;
      return !!squad && ownerOfCampaign(squad.campaign_id) === acct.id;
    });
    const groupOf = (a: SnapAd) => (breakdown === "ad" ? a.id : breakdown === "adsquad" ? a.ad_squad_id : breakdown === "campaign" ? squads.get(a.ad_squad_id)!.campaign_id : id);
    const groups = new Map<string, SnapAd[]>();
    if (breakdown === "campaign") for (const c of campaigns.values()) if (c.ad_account_id === acct.id && (kind === "adaccounts")) groups.set(c.id, []);
    if (breakdown === "adsquad") for (const sq of squads.values()) if (kind === "adaccounts" ? ownerOfCampaign(sq.campaign_id) === acct.id : sq.campaign_id === id) groups.set(sq.id, []);
    if (!breakdown) groups.set(id, []);
    for (const a of adsOf) groups.set(groupOf(a), [...(groups.get(groupOf(a)) ?? []), a]);
    const sum = (members: SnapAd[], from: string, to: string | null) => {
      const out: Record<string, number> = Object.fromEntries(fields.map((f) => [f, 0]));
      for (const a of members) for (const [k, v] of stats) {
        const [adId, date] = k.split(" ");
        if (adId !== a.id || date < from || (to !== null && date > to)) continue;
        for (const f of fields) out[f] += v[f as keyof typeof v];
      }
      return out;
    };
    const empty = (st: Record<string, number>) => Object.values(st).every((v) => v === 0);
    const lastDate = local(end - 1, tz).date; // the range's last day (end_time is exclusive)
    const span = { start_time: isoIn(start, tz), end_time: isoIn(end, tz) };
    const entity = (gid: string, members: SnapAd[], type: string) => {
      if (granularity === "TOTAL") {
        const st = sum(members, days[0].date, lastDate);
        return omitEmpty && breakdown && empty(st) ? null : { id: gid, type, granularity, ...span, stats: st };
      }
      const timeseries = days.map((d) => ({ start_time: isoIn(d.from, tz), end_time: isoIn(d.to, tz), stats: sum(members, d.date, d.date) }))
        .filter((p) => !omitEmpty || !empty(p.stats));
      return omitEmpty && breakdown && !timeseries.length ? null : { id: gid, type, granularity, ...span, timeseries };
    };
    const top: Record<string, unknown> = { id, type: TYPES[kind], granularity, ...span, finalized_data_end_time: isoIn(Math.min(end, Date.now()), tz) };
    if (breakdown) top.breakdown_stats = { [breakdown]: [...groups].map(([gid, m]) => entity(gid, m, TYPES[breakdown])).filter(Boolean) };
    else Object.assign(top, entity(id, groups.get(id)!, TYPES[kind]));
    return granularity === "DAY"
      ? { timeseries_stats: [{ sub_request_status: "SUCCESS", timeseries_stat: top }] }
      : { total_stats: [{ sub_request_status: "SUCCESS", total_stat: top }] };
  }

  function list<T>(items: T[], key: string, one: string, url: URL) {
    const limitRaw = url.searchParams.get("limit");
    if (limitRaw === null) return { [key]: items.map((x) => ({ sub_request_status: "SUCCESS", [one]: clone(x) })) };
    const limit = Number(limitRaw);
    if (!Number.isInteger(limit) || limit < 50 || limit > 1000) throw new SnapError(400, SNAP_CODES.badRequest, "limit must be between 50 and 1000");
    let start = 0;
    const cursor = url.searchParams.get("cursor");
    if (cursor) {
      const n = Number(Buffer.from(cursor, "base64url").toString().replace(/^off:/, ""));
      if (!Number.isInteger(n) || n < 0 || !Buffer.from(cursor, "base64url").toString().startsWith("off:")) throw new SnapError(400, SNAP_CODES.badRequest, "Invalid cursor");
      start = n;
    }
    const slice = items.slice(start, start + limit);
    const body: Record<string, unknown> = { [key]: slice.map((x) => ({ sub_request_status: "SUCCESS", [one]: clone(x) })) };
    if (start + limit < items.length) {
      const next = new URL(base + url.pathname);
      next.searchParams.set("cursor", Buffer.from(`off:${start + limit}`).toString("base64url"));
      next.searchParams.set("limit", String(limit));
      body.paging = { next_link: next.toString() };
    } else body.paging = {};
    return body;
  }

  // ---- targeting and writes ----------------------------------------------------------------------------------------
  function targetingProblem(t: any): string | null {
    if (!t || typeof t !== "object" || Array.isArray(t)) return "targeting must be an object";
    const geos = Array.isArray(t.geos) ? t.geos : [];
    if (!geos.length) return "targeting.geos is required";
    for (const g of geos) if (typeof g?.country_code !== "string" || !/^[a-z]{2}$/i.test(g.country_code)) return `Invalid country_code ${JSON.stringify(g?.country_code)}`;
    const countries = new Set(geos.filter((g: any) => g.operation !== "EXCLUDE").map((g: any) => g.country_code.toLowerCase()));
    const demo = Array.isArray(t.demographics) ? t.demographics : [];
    if (countries.size > 1 && !demo.some((d: any) => Array.isArray(d?.languages) && d.languages.length === 1)) return "Multi-country targeting requires a demographics entry with a single languages entry";
    for (const d of demo) {
      if (d?.min_age !== undefined && !(Number.isInteger(Number(d.min_age)) && Number(d.min_age) >= 13)) return "min_age must be at least 13";
      if (d?.min_age !== undefined && d?.max_age !== undefined && Number(d.max_age) < Number(d.min_age)) return "max_age must not be below min_age";
    }
    if (t.interests !== undefined && !Array.isArray(t.interests)) return "targeting.interests must be a list";
    for (const e of t.interests ?? []) {
      if (!Array.isArray(e?.category_id) || !e.category_id.length) return "targeting.interests[].category_id must be a non-empty list";
      if (e.operation !== undefined && e.operation !== "INCLUDE" && e.operation !== "EXCLUDE") return `Invalid interest operation ${JSON.stringify(e.operation)}`;
      for (const id of e.category_id) if (String(id).startsWith("SLC_") && (!interests.has(String(id)) || retired.has(String(id)))) return `Invalid interest category id ${id}`;
    }
    return null;
  }

  function putSquad(campaign: SnapCampaign, sent: any, patch: boolean): { ok: true; adsquad: SnapAdSquad } | { ok: false; reason: string } {
    const fail = (code: string, msg: string) => ({ ok: false as const, reason: `${code}: ${msg}` });
    if (!sent || typeof sent !== "object") return fail(SNAP_CODES.badRequest, "Each ad squad must be an object");
    const current = typeof sent.id === "string" ? squads.get(sent.id) : undefined;
    if (!current || current.campaign_id !== campaign.id) return fail(SNAP_CODES.notFound, `Ad Squad ${String(sent.id)} not found in campaign ${campaign.id}`);
    const readOnly = SNAP_READ_ONLY.filter((f) => f in sent);
    if (readOnly.length) return fail(SNAP_CODES.immutable, `${readOnly.join(", ")} ${readOnly.length > 1 ? "are" : "is"} read-only`);
    // A PATCH changes the fields sent; the ad squad it leaves must pass what a PUT of it would.
    const input = patch ? { ...clone(current), ...sent } : sent;
    if (patch) for (const f of SNAP_READ_ONLY) delete input[f];
    if (input.campaign_id !== campaign.id) return fail(SNAP_CODES.immutable, "campaign_id cannot be changed");
    for (const f of REQUIRED) if (input[f] === undefined || input[f] === null || input[f] === "") return fail(SNAP_CODES.required, `The value for field ${f} is required`);
    if (input.daily_budget_micro === undefined && input.lifetime_budget_micro === undefined) return fail(SNAP_CODES.required, "One of daily_budget_micro or lifetime_budget_micro is required");
    if (!STATUSES.includes(input.status)) return fail(SNAP_CODES.badRequest, `Invalid status ${JSON.stringify(input.status)}`);
    for (const f of IMMUTABLE) if (input[f] !== current[f]) return fail(SNAP_CODES.immutable, `${f} is immutable`);
    const problem = targetingProblem(input.targeting);
    if (problem) return fail(SNAP_CODES.invalidTargeting, problem);
    if (refused.has(current.id)) return fail(SNAP_CODES.inReview, "Ad Squad cannot be updated while its ads are in review");
    // The whole ad squad is replaced: what was not sent is gone; Snap's own fields are kept.
    const next = { id: current.id, created_at: current.created_at, delivery_status: current.delivery_status } as unknown as SnapAdSquad;
    for (const [k, v] of Object.entries(input)) if (!SERVER_FIELDS.has(k)) (next as any)[k] = clone(v);
    next.updated_at = now();
    squads.set(current.id, next);
    return { ok: true, adsquad: clone(next) };
  }

  // ---- routing -----------------------------------------------------------------------------------------------------
  function route(method: string, parts: string[], url: URL, body: any, visible: (acct: string | null) => boolean): unknown {
    const [a, id, edge, ...more] = parts;
    const notFound = (what: string) => new SnapError(404, SNAP_CODES.notFound, `${what} not found`);
    const forbidden = () => new SnapError(403, SNAP_CODES.forbidden, "You do not have access to this resource");
    if (more.length) throw notFound("Resource");
    if (method === "GET" && a === "targeting" && id === "interests" && edge === "scls") {
      const country = url.searchParams.get("country_code");
      if (country !== null && !/^[a-z]{2}$/i.test(country)) throw new SnapError(400, SNAP_CODES.badRequest, "Invalid country_code");
      return { targeting_dimensions: [...interests.values()].filter((i) => !retired.has(i.id)).map((i) => ({ sub_request_status: "SUCCESS", scls: clone(i) })) };
    }
    if (method === "GET" && edge === "stats" && (a === "adaccounts" || a === "campaigns" || a === "adsquads" || a === "ads")) {
      const owner = a === "adaccounts" ? (accounts.has(id) ? id : null) : a === "campaigns" ? ownerOfCampaign(id) : a === "adsquads" ? ownerOfSquad(id) : ownerOfAd(id);
      if (!owner) throw notFound(TYPES[a].replace("_", " ").toLowerCase().replace(/^./, (x) => x.toUpperCase()));
      if (!visible(owner)) throw forbidden();
      return statsOf(a, id, accounts.get(owner)!, url);
    }
    if (method === "GET" && a === "me" && id === "organizations" && !edge) {
      // The member's organizations; with_ad_accounts=true nests the ad accounts the token may see.
      const mine = [...accounts.values()].filter((x) => visible(x.id));
      const orgs = [...new Set(mine.map((x) => x.organization_id))];
      const withAccounts = url.searchParams.get("with_ad_accounts") === "true";
      return { organizations: orgs.map((org) => ({ sub_request_status: "SUCCESS", organization: { id: org, name: `Organization ${org.slice(0, 8)}`, ...(withAccounts ? { ad_accounts: mine.filter((x) => x.organization_id === org).map(clone) } : {}) } })) };
    }
    if (a === "adaccounts" && id) {
      const acct = accounts.get(id);
      if (!acct) throw notFound("Ad Account");
      if (!visible(acct.id)) throw forbidden();
      if (method === "GET" && edge === "ads") {
        return list([...ads.values()].filter((x) => ownerOfAd(x.id) === acct.id), "ads", "ad", url);
      }
      if (method === "GET" && !edge) return { adaccounts: [{ sub_request_status: "SUCCESS", adaccount: clone(acct) }] };
      if (method === "GET" && edge === "campaigns") return list([...campaigns.values()].filter((c) => c.ad_account_id === acct.id), "campaigns", "campaign", url);
      if (method === "GET" && edge === "adsquads") {
        return list([...squads.values()].filter((s) => ownerOfCampaign(s.campaign_id) === acct.id), "adsquads", "adsquad", url);
      }
    }
    if (a === "campaigns" && id && edge === "adsquads") {
      const c = campaigns.get(id);
      if (!c) throw notFound("Campaign");
      if (!visible(c.ad_account_id)) throw forbidden();
      if (method === "GET") return list([...squads.values()].filter((s) => s.campaign_id === c.id), "adsquads", "adsquad", url);
      if (method === "PUT" || method === "PATCH") {
        const items = body?.adsquads;
        if (!Array.isArray(items) || !items.length) throw new SnapError(400, SNAP_CODES.badRequest, "Request body must be {\"adsquads\": [...]}");
        const answers = items.map((input: any) => {
          const r = putSquad(c, input, method === "PATCH");
          writes.push({ method: method as SnapWrite["method"], campaignId: c.id, adsquad: clone(input), ok: r.ok, ...(r.ok ? {} : { reason: r.reason }) });
          return r.ok ? { sub_request_status: "SUCCESS", adsquad: r.adsquad } : { sub_request_status: "ERROR", sub_request_error_reason: r.reason };
        });
        const good = answers.filter((x: any) => x.sub_request_status === "SUCCESS").length;
        const status = good === answers.length ? "SUCCESS" : good ? "PARTIAL" : "ERROR";
        return { __status: good ? 200 : 400, request_status: status, adsquads: answers };
      }
    }
    if (method === "GET" && a === "adsquads" && id && !edge) {
      const s = squads.get(id);
      if (!s) throw notFound("Ad Squad");
      if (!visible(ownerOfSquad(id))) throw forbidden();
      return { adsquads: [{ sub_request_status: "SUCCESS", adsquad: clone(s) }] };
    }
    throw notFound("Resource");
  }

  function accountOfPath(parts: string[]): string | null {
    const [a, id] = parts;
    if (a === "adaccounts") return accounts.has(id) ? id : null;
    if (a === "campaigns") return ownerOfCampaign(id);
    if (a === "adsquads") return ownerOfSquad(id);
    if (a === "ads") return ownerOfAd(id);
    return null;
  }

  const authorize = authorizeEndpoint({
    provider: "Snapchat", clientId: app.clientId,
    grants: () => [...accounts.values()].map((a) => `Ad account ${a.id} (${a.name})`),
    issue(q) {
      const code = crypto.randomBytes(24).toString("base64url");
      codes.set(code, { redirectUri: q.get("redirect_uri")!, accounts: null, used: false });
      return { code };
    },
  });

  const server = bodyServer((req, res, url, raw) => {
    if (url.pathname === "/login/oauth2/authorize") return authorize(req, res, url, raw);
    const method = (req.method ?? "GET").toUpperCase();
    const rid = requestId();
    const { authorization, ...headers } = req.headers;
    const record: SnapRequest = { method, path: url.pathname, query: Object.fromEntries(url.searchParams), headers, body: null, requestId: rid, at: Date.now(), adAccountId: null };
    requests.push(record);
    const send = (status: number, body: unknown, type = "application/json") => {
      record.status = status;
      res.writeHead(status, { "content-type": type });
      res.end(typeof body === "string" ? body : JSON.stringify(body));
    };
    const fail = (e: SnapError) => send(e.status, { request_status: "ERROR", request_id: rid, debug_message: e.debug, display_message: e.display, error_code: e.code });

    if (url.pathname === "/login/oauth2/access_token") {
      if (method !== "POST") return send(405, { error: "invalid_request", error_description: "POST only" });
      const form = new URLSearchParams(raw);
      record.body = Object.fromEntries([...form].filter(([k]) => !/secret|code|token/.test(k)));
      const r = oauth(form);
      return send(r.status, r.body);
    }
    const m = /^\/v1\/(.*)$/.exec(url.pathname);
    if (!m) return send(404, "<html><body>Not Found</body></html>", "text/html");
    const parts = m[1].split("/").filter(Boolean).map(decodeURIComponent);
    record.adAccountId = accountOfPath(parts);
    try {
      if (raw) {
        try { record.body = JSON.parse(raw); } catch { throw new SnapError(400, SNAP_CODES.badRequest, "Malformed JSON body"); }
      }
      const bearer = /^Bearer\s+(.+)$/i.exec(authorization ?? "")?.[1]?.trim();
      const t = bearer ? tokens.get(bearer) : undefined;
      if (!t || (t.expiresAt !== null && t.expiresAt <= Date.now())) {
        throw new SnapError(401, SNAP_CODES.unauthorized, "Unauthorized", !bearer ? "Missing access token" : !t ? "Invalid access token" : "Access token expired");
      }
      if (fault && fault.n > 0 && (!fault.only || fault.only.test(url.pathname))) {
        fault.n--;
        if (fault.kind === "throttle") { record.throttled = true; return send(429, { request_status: "ERROR", request_id: rid, debug_message: "Too many requests", display_message: "Too many requests", error_code: SNAP_CODES.throttled }); }
        throw new SnapError(503, "E9001", "Service unavailable, please retry");
      }
      if (opts.perTokenPerSecond) {
        const times = (recent.get(bearer!) ?? []).filter((x) => x > Date.now() - 1000);
        if (times.length >= opts.perTokenPerSecond) { recent.set(bearer!, times); record.throttled = true; return send(429, { request_status: "ERROR", request_id: rid, debug_message: "Too many requests", display_message: "Too many requests", error_code: SNAP_CODES.throttled }); }
        recent.set(bearer!, [...times, Date.now()]);
      }
      const visible = (acct: string | null) => !!acct && (t.accounts === null || t.accounts.includes(acct));
      if (method !== "GET" && method !== "PUT" && method !== "PATCH") throw new SnapError(405, SNAP_CODES.badRequest, `${method} is not supported here`);
      const answer = route(method, parts, url, record.body, visible) as Record<string, unknown>;
      const { __status, ...rest } = answer;
      return send(typeof __status === "number" ? __status : 200, { request_status: "SUCCESS", request_id: rid, ...rest });
    } catch (e) {
      if (e instanceof SnapError) return fail(e);
      return send(500, { request_status: "ERROR", request_id: rid, debug_message: "Internal error", display_message: "Something went wrong", error_code: "E9000" });
    }
  });

  const base = await listenLocal(server, opts.port);
  const api: SnapAdsServer = {
    faults: peerFaults(server, (m) => m === "PUT" || m === "PATCH"),
    url: base, authorizeUrl: `${base}/login/oauth2/authorize`, tokenUrl: `${base}/login/oauth2/access_token`, app, requests, writes, counts,
    addToken(value, o = {}) { tokens.set(value, { expiresAt: o.expiresInS === undefined ? null : Date.now() + o.expiresInS * 1000, accounts: o.accounts ?? null }); },
    expireToken(value) { const t = tokens.get(value); if (t) t.expiresAt = Date.now() - 1000; },
    addCode(code, o) { codes.set(code, { redirectUri: o.redirectUri, accounts: o.accounts ?? null, used: false }); },
    addAdAccount(a = {}) {
      const t = now();
      const acct: SnapAdAccount = { id: a.id ?? crypto.randomUUID(), name: a.name ?? "Ad account", organization_id: crypto.randomUUID(), currency: a.currency ?? "USD", timezone: a.timezone ?? "America/Los_Angeles", status: "ACTIVE", type: "PARTNER", created_at: t, updated_at: t };
      accounts.set(acct.id, acct);
      return clone(acct);
    },
    addCampaign(c) {
      const t = now();
      const camp: SnapCampaign = { id: c.id ?? crypto.randomUUID(), ad_account_id: c.adAccountId, name: c.name, status: c.status ?? "ACTIVE", objective: "AWARENESS", start_time: t, created_at: t, updated_at: t };
      campaigns.set(camp.id, camp);
      return clone(camp);
    },
    addAdSquad(s) {
      const t = now();
      const squad: SnapAdSquad = {
        id: s.id ?? crypto.randomUUID(), updated_at: t, created_at: t, name: s.name, status: "ACTIVE", campaign_id: s.campaignId, type: "SNAP_ADS",
        targeting: clone(s.targeting), placement_v2: { config: "AUTOMATIC" }, billing_event: "IMPRESSION", bid_strategy: "AUTO_BID", auto_bid: true,
        optimization_goal: "IMPRESSIONS", daily_budget_micro: 50_000_000, start_time: t, delivery_constraint: "DAILY_BUDGET", pacing_type: "STANDARD",
        delivery_status: ["VALID"], ...clone(s.extra ?? {}),
      };
      squads.set(squad.id, squad);
      return clone(squad);
    },
    addAd(x) {
      if (!squads.has(x.adSquadId)) throw new Error(`no ad squad ${x.adSquadId}`);
      const t = now();
      const ad: SnapAd = { id: x.id ?? crypto.randomUUID(), ad_squad_id: x.adSquadId, name: x.name, type: "SNAP_AD", status: "ACTIVE", creative_id: crypto.randomUUID(), created_at: t, updated_at: t };
      ads.set(ad.id, ad);
      return clone(ad);
    },
    addStats(x) {
      if (!ads.has(x.adId)) throw new Error(`no ad ${x.adId}`);
      if (x.spend !== undefined && !Number.isSafeInteger(x.spend)) throw new Error("spend is integer micros");
      const k = `${x.adId} ${x.date}`;
      const cur = stats.get(k) ?? { impressions: 0, swipes: 0, spend: 0, conversion_purchases: 0 };
      stats.set(k, { impressions: cur.impressions + (x.impressions ?? 0), swipes: cur.swipes + (x.swipes ?? 0), spend: cur.spend + (x.spend ?? 0), conversion_purchases: cur.conversion_purchases + (x.conversion_purchases ?? 0) });
    },
    adSquad: (id) => (squads.has(id) ? clone(squads.get(id)!) : undefined),
    targetingOf: (id) => (squads.has(id) ? clone(squads.get(id)!.targeting) : undefined),
    setTargeting(id, t) { const s = squads.get(id); if (!s) throw new Error(`no ad squad ${id}`); s.targeting = clone(t); s.updated_at = now(); },
    addInterest(i) { const full = { id: i.id, name: i.name, path: `/${i.name}`, parent_id: "SLC_0", source: "SNAPCHAT" }; interests.set(i.id, full); return clone(full); },
    interestName: (id) => interests.get(id)?.name,
    retireInterest(id) { retired.add(id); },
    refuseAdSquad(id) { refused.add(id); },
    failNext(kind, n = 1, only) { fault = { kind, n, only }; },
    resetLog() { requests.length = 0; writes.length = 0; fault = null; recent.clear(); counts.authorization_code = 0; counts.refresh_token = 0; counts.refused = 0; },
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
  return api;
}
