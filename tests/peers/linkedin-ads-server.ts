import crypto from "node:crypto";
import type http from "node:http";
import { authorizeEndpoint } from "./consent-page.ts";
import { bodyServer, listenLocal, type StandInOptions } from "./listen.ts";
import { peerFaults, type PeerFaults } from "./faults.ts";

// A local stand-in for the LinkedIn Marketing API, strict where a connector could get it
// wrong:
// - Versioned headers on EVERY API call: no `Linkedin-Version` is a 400 (VERSION_MISSING); a version LinkedIn did
//   not publish (it skips months), one older than ~12 months, in the future or malformed is a 426
//   (NONEXISTENT_VERSION). Served: the PUBLISHED versions within 12 months of the newest (`version`). No `X-Restli-Protocol-Version: 2.0.0`
//   is a 400 (LinkedIn would fall back to Rest.li 1.0 and mis-read 2.0-encoded parameters; refusing outright makes a
//   forgotten header show).
// - Structured query parameters in Rest.li 2.0 encoding (`(k:v)`, `List(a,b)`, URNs percent-encoded inside): a raw
//   `urn:li:...` inside a record does not parse (400).
// - Auth: `Authorization: Bearer` only; missing, unknown, expired and revoked tokens are 401 with LinkedIn's flat
//   error body. A member sees the ad accounts it has a role on; VIEWER (or a token without rw_ads) cannot write (403).
// - OAuth: `POST /oauth/v2/accessToken` (form body, client id and secret IN the body): authorization_code gives a
//   60-day token (5,184,000 s) and a refresh token valid 365 days from first consent; refresh_token gives a new
//   access token, the SAME refresh token and its remaining lifetime (refreshing does not extend it). No token_type.
// - `GET adAccounts?q=search` (paged like the searches below): the accounts the token's member has a role on.
// - Reads: `adAccounts/{id}/adCampaignGroups` and `adAccounts/{id}/adCampaigns` (`q=search`, optional
//   `search=(status:(values:List(...)))`). From version 202401 these search finders page with cursors, not the
//   start/count of older docs (LinkedIn's "Cursor Based Pagination For Search APIs"): `pageSize` (default 100; over
//   1,000 a 400, as count was) and `pageToken` from the last answer's `metadata.nextPageToken`, absent at the end.
//   start/count on a search finder is a 400 here, so a client paging by index shows. Also
//   `adAccounts/{id}/adCampaigns/{id}`; `adTargetingEntities` (`q=typeahead&facet&query` with
//   `queryVersion=QUERY_USES_URNS`, `q=urns&urns=List(...)`) over a seeded catalogue; and
//   `audienceCounts?q=targetingCriteriaV2&targetingCriteria=...` answering `{elements:[{active,total}]}`, totals
//   under 300 reported as 0.
// - Writes: `POST adAccounts/{id}/adCampaigns/{id}` with `X-RestLi-Method: PARTIAL_UPDATE` and
//   `{patch:{$set:{...}}}`: a `$set` of targetingCriteria REPLACES it whole (no merge with what is stored). Criteria
//   are checked like LinkedIn does: AND-of-OR shape, known facets and entities, a location facet required; an ACTIVE
//   campaign's audience must stay at or above 300. Answer 204 with no body. Budget fields are accepted and recorded.
// - Every answer carries `x-li-uuid` (LinkedIn's request id). Throttles are 429 WITHOUT Retry-After or any
//   rate-limit header (from a third-party summary; LinkedIn's limits are daily and unpublished).
// - Reporting: `GET adAnalytics?q=analytics&pivot=CAMPAIGN_GROUP|CAMPAIGN|CREATIVE|ACCOUNT` with
//   `timeGranularity` DAILY or ALL, a Rest.li `dateRange=(start:(year,month,day),end:(...))`, at least one facet
//   (`accounts`, `campaignGroups`, `campaigns`, `creatives`: Lists of URNs, ANDed) and `fields` (a plain comma list,
//   at most 20; only the fields asked for come back). Stats are seeded per creative and day (`addStats`, LinkedIn's
//   own units: `costInLocalCurrency` a decimal string of the account's currency) and rolled up to the pivot, summed
//   exactly. Days are UTC days; only entities with activity answer. No paging: ONE answer, silently cut at 15,000
//   elements (a third-party changelog reports the cut; the stand-in keeps the first 15,000 in date order, which
//   ones LinkedIn keeps is not documented). Needs the `r_ads_reporting` scope (403 without it) and a role on the
//   accounts. Also `GET adAccounts/{id}` (its currency) and the BATCH_GETs `adAccounts/{id}/adCampaignGroups?ids=`,
//   `adCampaigns?ids=` and `creatives?ids=List(<creative URNs>)` answering `{results, statuses, errors}`.
// Where LinkedIn's docs are silent the stand-in follows LinkedIn's public docs as remembered; error `code` strings and
// `serviceErrorCode` numbers marked "approximate" were not verified (clients should branch on the HTTP status).

export const LINKEDIN_FACETS = {
  locations: "urn:li:adTargetingFacet:locations",
  profileLocations: "urn:li:adTargetingFacet:profileLocations",
  interests: "urn:li:adTargetingFacet:interests",
  skills: "urn:li:adTargetingFacet:skills",
  interfaceLocales: "urn:li:adTargetingFacet:interfaceLocales",
} as const;
/** Facets accepted with any well-formed entity URN (not catalogued here). */
const OPEN_FACETS = ["interfaceLocales", "industries", "seniorities", "titles", "employers", "ageRanges", "genders", "memberBehaviors", "staffCountRanges",
  "degrees", "fieldsOfStudy", "schools", "groups", "audienceMatchingSegments", "dynamicSegments", "yearsOfExperienceRanges"].map((f) => `urn:li:adTargetingFacet:${f}`);
const CATALOGUED = new Set<string>([LINKEDIN_FACETS.locations, LINKEDIN_FACETS.profileLocations, LINKEDIN_FACETS.interests, LINKEDIN_FACETS.skills]);
const LOCATION_FACETS: string[] = [LINKEDIN_FACETS.locations, LINKEDIN_FACETS.profileLocations];
const MEMBERS = 1_000_000_000;
const MIN_AUDIENCE = 300;
const STATUSES = ["ACTIVE", "PAUSED", "ARCHIVED", "COMPLETED", "CANCELED", "DRAFT", "PENDING_DELETION", "REMOVED"];
const SETTABLE = ["targetingCriteria", "name", "status", "dailyBudget", "totalBudget", "unitCost", "runSchedule"];
const BUDGET_FIELDS = ["dailyBudget", "totalBudget", "unitCost"];

export interface LinkedInEntity { urn: string; facetUrn: string; name: string; members: number }
export type Criteria = { include?: { and?: { or?: Record<string, string[]> }[] }; exclude?: { or?: Record<string, string[]> } };
export type Role = "ACCOUNT_BILLING_ADMIN" | "ACCOUNT_MANAGER" | "CAMPAIGN_MANAGER" | "CREATIVE_MANAGER" | "VIEWER";
export interface LinkedInAccount { id: string; name: string; test: boolean; currency: string; status: string }
export interface LinkedInCreative { id: string; account: string; campaign: string; name: string }
/** One creative's day as LinkedIn stores it (the day is a UTC day; cost a decimal string of the account's currency). */
export interface LinkedInStat { creative: string; date: string; impressions: number; clicks: number; costInLocalCurrency: string; externalWebsiteConversions: number }
/** LinkedIn's cap on one adAnalytics answer (no paging: the rest is dropped). */
export const LINKEDIN_ANALYTICS_CAP = 15_000;
export interface LinkedInGroup { id: string; account: string; name: string; status: string }
export interface LinkedInCampaign {
  id: string; account: string; campaignGroup: string; name: string; status: string; type: string; targetingCriteria: Criteria;
  dailyBudget: { amount: string; currencyCode: string }; changeAuditStamps: { created: { time: number }; lastModified: { time: number } };
}

export interface LinkedInRequest {
  method: string;
  /** Path as sent (`/rest/...`). */
  path: string;
  /** Query parameters, percent-decoded text (still Rest.li syntax for structured ones). */
  query: Record<string, string>;
  /** Request headers, authorization removed. */
  headers: http.IncomingHttpHeaders;
  /** Parsed JSON or form body; the token endpoint's client_secret removed. */
  body: Record<string, any> | null;
  status?: number;
  liUuid: string;
  at: number;
  throttled?: boolean;
}

export interface LinkedInWrite { campaignId: string; set: Record<string, unknown>; ok: boolean }

export interface LinkedInAdsServer {
  url: string;
  /** The consent page (LINKEDIN_ADS_AUTHORIZE_URL): approving issues a code reaching every ad account, as CAMPAIGN_MANAGER. */
  authorizeUrl: string;
  tokenUrl: string;
  /** The newest version served; published versions of the 11 months before it are served too. */
  version: string;
  app: { clientId: string; clientSecret: string };
  /** Registers a token seeing these ad accounts with these roles; `expiresInS` <= 0 is expired. */
  addToken(token: string, opts: { accounts: Record<string, Role>; expiresInS?: number; scopes?: string[] }): void;
  expireToken(token: string): void;
  revokeToken(token: string): void;
  /** An authorization code as the consent page would have issued it. */
  addCode(code: string, opts: { redirectUri: string; accounts: Record<string, Role>; scopes?: string[] }): void;
  /** Makes a refresh token's 365 days run out now. */
  expireRefreshToken(refreshToken: string): void;
  addAccount(a: { id: string; name: string; test?: boolean; currency?: string }): LinkedInAccount;
  /** A creative (our `ad`) of a campaign; its id is the digits of urn:li:sponsoredCreative:<id>. */
  addCreative(a: { account: string; campaign: string; name?: string; id?: string }): LinkedInCreative;
  /** Seeds creatives' daily stats, in LinkedIn's units; adAnalytics rolls them up to the pivot asked for. */
  addStats(rows: LinkedInStat | LinkedInStat[]): void;
  /** adAnalytics answers wait this long (abort tests). */
  setAnalyticsDelay(ms: number): void;
  addGroup(a: { account: string; name: string; id?: string; status?: string }): LinkedInGroup;
  addCampaign(a: { account: string; group: string; name: string; targetingCriteria: Criteria; id?: string; status?: string }): LinkedInCampaign;
  addEntity(e: { urn: string; name: string; members?: number }): LinkedInEntity;
  campaign(id: string): LinkedInCampaign | undefined;
  /** A copy of the stored criteria. */
  criteriaOf(id: string): Criteria | undefined;
  /** Changes criteria behind the client's back. */
  setCriteria(id: string, c: Criteria): void;
  /** Catalogue names of the member interests and skills in a criteria's first clause that has any. */
  planNames(c: Criteria | undefined): string[];
  /** Targeting writes to this campaign are refused from now on (its creatives are in review). */
  lockCampaign(id: string): void;
  /** The next n API calls answer this fault. */
  failNext(kind: "throttle" | "unavailable", n: number): void;
  requests: LinkedInRequest[];
  /** PARTIAL_UPDATEs that passed auth and throttling, refused ones included. */
  writes: LinkedInWrite[];
  budgetWrites: { campaignId: string; field: string; value: unknown }[];
  counts: { authorization_code: number; refresh_token: number; refused: number };
  resetLog(): void;
  /** Failures around a write, on request (faults.ts): its answer lost after it was applied, applied late, a restart. */
  faults: PeerFaults;
  close(): Promise<void>;
}

/** Ids look like LinkedIn's; geo ids are LinkedIn's real ones, interest and skill ids are made up. */
const SEED: LinkedInEntity[] = [
  { urn: "urn:li:geo:103644278", facetUrn: LINKEDIN_FACETS.locations, name: "United States", members: 230_000_000 },
  { urn: "urn:li:geo:101165590", facetUrn: LINKEDIN_FACETS.locations, name: "United Kingdom", members: 42_000_000 },
  { urn: "urn:li:geo:101282230", facetUrn: LINKEDIN_FACETS.locations, name: "Germany", members: 24_000_000 },
  { urn: "urn:li:geo:105015875", facetUrn: LINKEDIN_FACETS.locations, name: "France", members: 28_000_000 },
  { urn: "urn:li:interest:1001", facetUrn: LINKEDIN_FACETS.interests, name: "Artificial Intelligence", members: 120_000_000 },
  { urn: "urn:li:interest:1002", facetUrn: LINKEDIN_FACETS.interests, name: "Cloud Computing", members: 80_000_000 },
  { urn: "urn:li:interest:1003", facetUrn: LINKEDIN_FACETS.interests, name: "Cybersecurity", members: 60_000_000 },
  { urn: "urn:li:interest:1004", facetUrn: LINKEDIN_FACETS.interests, name: "Electric Vehicles", members: 30_000_000 },
  { urn: "urn:li:interest:1005", facetUrn: LINKEDIN_FACETS.interests, name: "Marketing", members: 150_000_000 },
  { urn: "urn:li:skill:2001", facetUrn: LINKEDIN_FACETS.skills, name: "Machine Learning", members: 25_000_000 },
  { urn: "urn:li:skill:2002", facetUrn: LINKEDIN_FACETS.skills, name: "Python (Programming Language)", members: 35_000_000 },
  { urn: "urn:li:skill:2003", facetUrn: LINKEDIN_FACETS.skills, name: "Project Management", members: 80_000_000 },
  { urn: "urn:li:skill:2004", facetUrn: LINKEDIN_FACETS.skills, name: "Cloud Security", members: 4_000_000 },
  { urn: "urn:li:skill:2005", facetUrn: LINKEDIN_FACETS.skills, name: "Quantum Error Correction", members: 900 },
];

class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly serviceErrorCode = 100) { super(message); }
}
const clone = <T>(v: T): T => structuredClone(v);

/** Rest.li 2.0 query value decoding: records, List(...), percent-decoded leaves; anything else is a 400. */
export function parseRestli(raw: string): unknown {
  let i = 0;
  const fail = (): never => { throw new ApiError(400, "ILLEGAL_ARGUMENT", `Invalid Rest.li 2.0 value at position ${i}: ${raw.slice(0, 120)}`); };
  const leaf = (): string => {
    const m = /^[^(),:]*/.exec(raw.slice(i))![0];
    i += m.length;
    if (m === "''" || m === "%27%27") return "";
    try { return decodeURIComponent(m); } catch { return fail(); }
  };
  const value = (): unknown => {
    if (raw.startsWith("List(", i)) {
      i += 5;
      const out: unknown[] = [];
      if (raw[i] === ")") { i++; return out; }
      for (;;) {
        out.push(value());
        if (raw[i] === ",") { i++; continue; }
        if (raw[i] === ")") { i++; return out; }
        fail();
      }
    }
    if (raw[i] === "(") {
      i++;
      const out: Record<string, unknown> = {};
      if (raw[i] === ")") { i++; return out; }
      for (;;) {
        const k = leaf();
        if (raw[i] !== ":") fail();
        i++;
        out[k] = value();
        if (raw[i] === ",") { i++; continue; }
        if (raw[i] === ")") { i++; return out; }
        fail();
      }
    }
    return leaf();
  };
  const v = value();
  if (i !== raw.length) fail();
  return v;
}

const monthIndex = (v: string) => Number(v.slice(0, 4)) * 12 + Number(v.slice(4, 6)) - 1;

/**
 * The versions the stand-in serves, oldest first, ending at 202608 (the newest confirmed release). Update from
 * LinkedIn's versioning page when the default pin moves: a pin to a month missing here is a 426, as at LinkedIn.
 * LinkedIn released no December version: its migrations table goes from 202511 to 202601.
 */
export const PUBLISHED_VERSIONS = ["202509", "202510", "202511", "202601", "202602", "202603", "202604", "202605", "202606", "202607", "202608"] as const;

export async function startLinkedInAdsServer(opts: { version?: string; published?: readonly string[]; grantableScopes?: string[] } & StandInOptions = {}): Promise<LinkedInAdsServer> {
  const published = new Set(opts.published ?? PUBLISHED_VERSIONS);
  const version = opts.version ?? [...published].sort().at(-1)!;
  const app = opts.app ?? { clientId: `86${crypto.randomBytes(6).toString("hex")}`, clientSecret: crypto.randomBytes(12).toString("base64url") };
  const tokens = new Map<string, { expiresAt: number; revoked: boolean; accounts: Record<string, Role>; scopes: string[] }>();
  const refreshTokens = new Map<string, { expiresAt: number; accounts: Record<string, Role>; scopes: string[] }>();
  const codes = new Map<string, { redirectUri: string; accounts: Record<string, Role>; scopes: string[]; used: boolean }>();
  // LinkedIn grants the scopes asked for that the app's products give it (Advertising API: r_ads, rw_ads; its
  // reporting: r_ads_reporting); an app without a product's access gets its scopes refused at consent.
  const grantable = new Set(opts.grantableScopes ?? ["r_ads", "rw_ads", "r_ads_reporting"]);
  const accounts = new Map<string, LinkedInAccount>();
  const groups = new Map<string, LinkedInGroup>();
  const campaigns = new Map<string, LinkedInCampaign>();
  const creatives = new Map<string, LinkedInCreative>();
  const stats: LinkedInStat[] = [];
  let analyticsDelay = 0;
  const delayed = new Set<NodeJS.Timeout>();
  const entities = new Map<string, LinkedInEntity>(SEED.map((e) => [e.urn, clone(e)]));
  const locked = new Set<string>();
  const requests: LinkedInRequest[] = [];
  const writes: LinkedInWrite[] = [];
  const budgetWrites: LinkedInAdsServer["budgetWrites"] = [];
  const counts = { authorization_code: 0, refresh_token: 0, refused: 0 };
  let fault: { kind: "throttle" | "unavailable"; n: number } | null = null;
  let nextId = 500_000_000;

  // ---- headers and auth ------------------------------------------------------------------------------------------
  function checkVersion(req: http.IncomingMessage) {
    const v = req.headers["linkedin-version"];
    if (v === undefined) throw new ApiError(400, "VERSION_MISSING", "A version must be present. Please specify a version by adding the LinkedIn-Version header.", 0);
    const s = String(v);
    const ok = published.has(s) && monthIndex(s) <= monthIndex(version) && monthIndex(s) > monthIndex(version) - 12;
    if (!ok) throw new ApiError(426, "NONEXISTENT_VERSION", `Requested version ${s} is not active`, 0);
    if (req.headers["x-restli-protocol-version"] !== "2.0.0") {
      throw new ApiError(400, "ILLEGAL_ARGUMENT", "This API takes Rest.li protocol 2.0.0: send X-Restli-Protocol-Version: 2.0.0");
    }
  }

  function checkToken(req: http.IncomingMessage) {
    const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? "")?.[1]?.trim();
    // serviceErrorCodes of the 401s: approximate.
    if (!bearer) throw new ApiError(401, "EMPTY_ACCESS_TOKEN", "Empty oauth2 access token", 65604);
    const t = tokens.get(bearer);
    if (!t) throw new ApiError(401, "INVALID_ACCESS_TOKEN", "Invalid access token", 65600);
    if (t.revoked) throw new ApiError(401, "REVOKED_ACCESS_TOKEN", "The token used in the request has been revoked by the user", 65602);
    if (t.expiresAt <= Date.now()) throw new ApiError(401, "EXPIRED_ACCESS_TOKEN", "The token used in the request has expired", 65601);
    return t;
  }

  // ---- query parameters ------------------------------------------------------------------------------------------
  function readQuery(url: URL): { raw: Record<string, string>; text: Record<string, string> } {
    const raw: Record<string, string> = {};
    const text: Record<string, string> = {};
    for (const part of url.search.slice(1).split("&").filter(Boolean)) {
      const eq = part.indexOf("=");
      const k = decodeURIComponent(eq < 0 ? part : part.slice(0, eq));
      raw[k] = eq < 0 ? "" : part.slice(eq + 1);
      try { text[k] = decodeURIComponent(raw[k]); } catch { text[k] = raw[k]; }
    }
    return { raw, text };
  }
  const param = (q: Record<string, string>, name: string) => (q[name] === undefined ? undefined : parseRestli(q[name]));
  const intParam = (q: Record<string, string>, name: string): number | undefined => {
    if (q[name] === undefined) return undefined;
    if (!/^\d+$/.test(q[name])) throw new ApiError(400, "ILLEGAL_ARGUMENT", `Invalid value for param: ${name}`);
    return Number(q[name]);
  };

  /** Cursor paging of the search finders (202401 on): pageSize and an opaque pageToken. */
  function paged<T>(items: T[], q: Record<string, string>, finder: string) {
    if (q.start !== undefined || q.count !== undefined) throw new ApiError(400, "ILLEGAL_ARGUMENT", "Search APIs page with pageSize and pageToken (start and count are not supported)");
    const size = intParam(q, "pageSize") ?? 100;
    if (size < 1 || size > 1000) throw new ApiError(400, "ILLEGAL_ARGUMENT", "Specified pageSize must be between 1 and 1000");
    let offset = 0;
    if (q.pageToken !== undefined) {
      const raw = String(parseRestli(q.pageToken));
      const m = /^(\w+):(\d+)$/.exec(Buffer.from(raw, "base64url").toString());
      if (!m || m[1] !== finder) throw new ApiError(400, "ILLEGAL_ARGUMENT", "Invalid pageToken");
      offset = Number(m[2]);
    }
    const elements = items.slice(offset, offset + size);
    const next = offset + size < items.length ? Buffer.from(`${finder}:${offset + size}`).toString("base64url") : undefined;
    return { elements, metadata: next ? { nextPageToken: next } : {} };
  }

  function statusFilter(q: Record<string, string>): ((s: string) => boolean) {
    const search = param(q, "search") as { status?: { values?: unknown } } | undefined;
    if (search === undefined) return () => true;
    const values = search?.status?.values;
    if (!search || typeof search !== "object" || (search.status !== undefined && (!Array.isArray(values) || values.some((v) => !STATUSES.includes(String(v)))))) {
      throw new ApiError(400, "ILLEGAL_ARGUMENT", "Invalid value for param: search");
    }
    return (s) => !Array.isArray(values) || values.includes(s);
  }

  // ---- targeting criteria ------------------------------------------------------------------------------------------
  /** Checks criteria like LinkedIn does (shape, facets, entities, the required location). */
  function validateCriteria(input: unknown): Criteria {
    const bad = (m: string): never => { throw new ApiError(400, "INVALID_TARGETING_CRITERIA", m); }; // code approximate
    const c = input as Criteria;
    if (!c || typeof c !== "object" || Array.isArray(c)) bad("targetingCriteria must be a record");
    const checkOr = (or: unknown, where: string) => {
      if (!or || typeof or !== "object" || Array.isArray(or) || !Object.keys(or).length) bad(`${where}.or must map facet URNs to entity URNs`);
      for (const [facet, values] of Object.entries(or as object)) {
        if (!CATALOGUED.has(facet) && !OPEN_FACETS.includes(facet)) bad(`Unknown targeting facet ${facet}`);
        if (!Array.isArray(values) || !values.length) bad(`${where}: facet ${facet} has no values`);
        for (const v of values as unknown[]) {
          if (typeof v !== "string" || !/^urn:li:[A-Za-z]+:\S+$/.test(v)) bad(`${where}: ${JSON.stringify(v)} is not an entity URN`);
          const known = entities.get(v as string);
          if (CATALOGUED.has(facet) && (!known || (known.facetUrn !== facet && !(LOCATION_FACETS.includes(facet) && LOCATION_FACETS.includes(known.facetUrn))))) {
            bad(`Targeting entity ${v} is not valid for facet ${facet}`);
          }
        }
      }
    };
    const and = c.include?.and;
    if (!Array.isArray(and) || !and.length) bad("targetingCriteria.include.and must have at least one clause");
    and!.forEach((cl, n) => checkOr(cl?.or, `include.and[${n}]`));
    if (c.exclude !== undefined) checkOr(c.exclude?.or, "exclude");
    const keys = Object.keys(c).filter((k) => k !== "include" && k !== "exclude");
    if (keys.length) bad(`Unknown field(s) in targetingCriteria: ${keys.join(", ")}`);
    if (!and!.some((cl) => LOCATION_FACETS.some((f) => Array.isArray(cl.or?.[f]) && cl.or![f].length))) {
      throw new ApiError(400, "MISSING_LOCATION_FACET", "Targeting criteria must include a location: urn:li:adTargetingFacet:locations or urn:li:adTargetingFacet:profileLocations"); // code approximate
    }
    return clone(c);
  }

  /** Members matched: each clause narrows (OR within, AND across), exclusions take their share out. */
  function audience(c: Criteria): { active: number; total: number } {
    const size = (or: Record<string, string[]> = {}) => Math.min(MEMBERS, Object.values(or).flat().reduce((s, u) => s + (entities.get(u)?.members ?? MEMBERS / 2), 0));
    let total = MEMBERS;
    for (const cl of c.include?.and ?? []) total *= size(cl.or) / MEMBERS;
    if (c.exclude?.or) total *= 1 - size(c.exclude.or) / MEMBERS;
    total = Math.round(total);
    return total < MIN_AUDIENCE ? { active: 0, total: 0 } : { active: Math.round(total * 0.4), total };
  }

  function planNames(c: Criteria | undefined): string[] {
    const planFacets: string[] = [LINKEDIN_FACETS.interests, LINKEDIN_FACETS.skills];
    const cl = (c?.include?.and ?? []).find((x) => Object.keys(x.or ?? {}).some((f) => planFacets.includes(f)));
    return Object.entries(cl?.or ?? {}).filter(([f]) => planFacets.includes(f)).flatMap(([, v]) => v.map((u) => entities.get(u)?.name ?? u));
  }

  // ---- reporting ---------------------------------------------------------------------------------------------------
  const METRICS = ["impressions", "clicks", "costInLocalCurrency", "externalWebsiteConversions"] as const;
  /** Fields the stand-in serves (LinkedIn has ~100 metrics; others are refused here, not by LinkedIn). */
  const FIELDS = new Set<string>([...METRICS, "pivotValues", "dateRange"]);
  const PIVOTS = ["ACCOUNT", "CAMPAIGN_GROUP", "CAMPAIGN", "CREATIVE"];
  const FACET_URNS: Record<string, string> = { accounts: "sponsoredAccount", campaignGroups: "sponsoredCampaignGroup", campaigns: "sponsoredCampaign", creatives: "sponsoredCreative" };

  /** Exact decimal addition of LinkedIn's money strings. */
  function addDecimal(a: string, b: string): string {
    const parse = (x: string) => { const [i, f = ""] = x.split("."); return { i, f }; };
    const pa = parse(a), pb = parse(b);
    const scale = Math.max(pa.f.length, pb.f.length);
    const sum = (BigInt(pa.i + pa.f.padEnd(scale, "0")) + BigInt(pb.i + pb.f.padEnd(scale, "0"))).toString().padStart(scale + 1, "0");
    return scale ? `${sum.slice(0, -scale)}.${sum.slice(-scale)}` : sum;
  }

  function ymd(v: unknown, what: string): string {
    const d = v as { year?: unknown; month?: unknown; day?: unknown } | undefined;
    const [y, m, dd] = [d?.year, d?.month, d?.day].map((x) => (typeof x === "string" && /^\d+$/.test(x) ? Number(x) : NaN));
    const t = Date.UTC(y, m - 1, dd);
    const iso = Number.isNaN(t) ? "" : new Date(t).toISOString().slice(0, 10);
    if (!iso || iso !== `${String(y).padStart(4, "0")}-${String(m).padStart(2, "0")}-${String(dd).padStart(2, "0")}`) throw new ApiError(400, "ILLEGAL_ARGUMENT", `Invalid ${what} in dateRange`);
    return iso;
  }
  const dateOf = (iso: string) => { const [year, month, day] = iso.split("-").map(Number); return { year, month, day }; };

  function analytics(q: Record<string, string>, t: ReturnType<typeof checkToken>): unknown {
    if (q.q !== "analytics") throw new ApiError(400, "ILLEGAL_ARGUMENT", "q must be analytics (statistics is not served by this stand-in)");
    // LinkedIn: reporting needs r_ads_reporting on top of r_ads (serviceErrorCode approximate).
    if (!t.scopes.includes("r_ads_reporting")) throw new ApiError(403, "ACCESS_DENIED", "Not enough permissions to access: adAnalytics.analytics (r_ads_reporting)");
    const pivot = String(param(q, "pivot") ?? "");
    if (!PIVOTS.includes(pivot)) throw new ApiError(400, "ILLEGAL_ARGUMENT", `Invalid value for param: pivot (${pivot})`);
    const granularity = String(param(q, "timeGranularity") ?? "");
    if (granularity !== "DAILY" && granularity !== "ALL") throw new ApiError(400, "ILLEGAL_ARGUMENT", `timeGranularity ${granularity || "(missing)"}: the stand-in serves DAILY and ALL`);
    const range = param(q, "dateRange") as { start?: unknown; end?: unknown } | undefined;
    if (!range || typeof range !== "object" || !range.start) throw new ApiError(400, "ILLEGAL_ARGUMENT", "dateRange with a start is required");
    const from = ymd(range.start, "start");
    const to = range.end === undefined ? new Date().toISOString().slice(0, 10) : ymd(range.end, "end");
    if (to < from) throw new ApiError(400, "ILLEGAL_ARGUMENT", "dateRange end is before its start");
    // fields: a projection, a plain comma list (NOT Rest.li encoded: %2C would be one field with a comma in it).
    const fields = (q.fields ?? "").split(",").filter(Boolean);
    if (!fields.length || fields.length > 20 || fields.some((f) => !FIELDS.has(f))) throw new ApiError(400, "ILLEGAL_ARGUMENT", `fields must list 1 to 20 known metrics, comma separated: ${q.fields ?? ""}`);
    const facets: Record<string, Set<string>> = {};
    for (const [facet, type] of Object.entries(FACET_URNS)) {
      if (q[facet] === undefined) continue;
      const list = param(q, facet);
      const re = new RegExp(`^urn:li:${type}:(\\d+)$`);
      if (!Array.isArray(list) || !list.length || list.some((u) => !re.test(String(u)))) throw new ApiError(400, "ILLEGAL_ARGUMENT", `${facet} must be a List of urn:li:${type} URNs`);
      facets[facet] = new Set(list.map((u) => re.exec(String(u))![1]));
    }
    if (!Object.keys(facets).length) throw new ApiError(400, "ILLEGAL_ARGUMENT", "At least one of accounts, campaignGroups, campaigns, creatives is required");
    for (const acc of facets.accounts ?? []) if (!accounts.has(acc) || !t.accounts[acc]) throw new ApiError(403, "ACCESS_DENIED", `Not enough permissions to access: adAnalytics for urn:li:sponsoredAccount:${acc}`);
    const daily = granularity === "DAILY";
    const sums = new Map<string, { date: string; urn: string; impressions: number; clicks: number; costInLocalCurrency: string; externalWebsiteConversions: number }>();
    for (const s of stats) {
      if (s.date < from || s.date > to) continue;
      const cr = creatives.get(s.creative);
      const camp = cr && campaigns.get(cr.campaign);
      if (!cr || !camp) continue;
      const ids = { accounts: cr.account, campaignGroups: camp.campaignGroup, campaigns: camp.id, creatives: cr.id };
      if (Object.entries(facets).some(([f, set]) => !set.has(ids[f as keyof typeof ids]))) continue;
      if (!t.accounts[cr.account]) throw new ApiError(403, "ACCESS_DENIED", `Not enough permissions to access: adAnalytics for urn:li:sponsoredAccount:${cr.account}`);
      const urn = pivot === "ACCOUNT" ? `urn:li:sponsoredAccount:${cr.account}` : pivot === "CAMPAIGN_GROUP" ? `urn:li:sponsoredCampaignGroup:${camp.campaignGroup}`
        : pivot === "CAMPAIGN" ? `urn:li:sponsoredCampaign:${camp.id}` : `urn:li:sponsoredCreative:${cr.id}`;
      const key = `${daily ? s.date : ""}|${urn}`;
      const sum = sums.get(key) ?? { date: s.date, urn, impressions: 0, clicks: 0, costInLocalCurrency: "0", externalWebsiteConversions: 0 };
      sum.impressions += s.impressions; sum.clicks += s.clicks; sum.externalWebsiteConversions += s.externalWebsiteConversions;
      sum.costInLocalCurrency = addDecimal(sum.costInLocalCurrency, s.costInLocalCurrency);
      sums.set(key, sum);
    }
    const rows = [...sums.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, v]) => v).slice(0, LINKEDIN_ANALYTICS_CAP);
    const elements = rows.map((r) => {
      const e: Record<string, unknown> = {};
      for (const f of fields) {
        if (f === "pivotValues") e.pivotValues = [r.urn];
        else if (f === "dateRange") e.dateRange = daily ? { start: dateOf(r.date), end: dateOf(r.date) } : { start: dateOf(from), end: dateOf(to) };
        else e[f] = r[f as (typeof METRICS)[number]];
      }
      return e;
    });
    return { paging: { start: 0, count: 10, links: [] }, elements };
  }

  /** Rest.li BATCH_GET: `{results, statuses, errors}` keyed by the ids as asked. */
  function batchGet(q: Record<string, string>, find: (id: string) => unknown | undefined) {
    const ids = param(q, "ids");
    if (!Array.isArray(ids) || !ids.length) throw new ApiError(400, "ILLEGAL_ARGUMENT", "ids must be a List");
    const out = { results: {} as Record<string, unknown>, statuses: {} as Record<string, number>, errors: {} as Record<string, unknown> };
    for (const raw of ids) {
      const id = String(raw);
      const found = find(id);
      if (found) { out.results[id] = found; out.statuses[id] = 200; } else {
        out.statuses[id] = 404;
        out.errors[id] = { status: 404, message: `Entity ${id} not found` };
      }
    }
    return out;
  }

  // ---- OAuth -------------------------------------------------------------------------------------------------------
  function oauthToken(form: Record<string, string>): { status: number; body: unknown } {
    const err = (status: number, error: string, error_description: string) => { counts.refused++; return { status, body: { error, error_description } }; };
    for (const p of ["grant_type", "client_id", "client_secret"]) if (!form[p]) return err(400, "invalid_request", `A required parameter "${p}" is missing`);
    if (form.client_id !== app.clientId || form.client_secret !== app.clientSecret) return err(401, "invalid_client", "Client authentication failed");
    const issue = (grant: { accounts: Record<string, Role>; scopes: string[] }) => {
      const value = `AQ${crypto.randomBytes(30).toString("base64url")}`;
      tokens.set(value, { expiresAt: Date.now() + 5_184_000_000, revoked: false, accounts: clone(grant.accounts), scopes: grant.scopes });
      return value;
    };
    if (form.grant_type === "authorization_code") {
      const code = codes.get(form.code ?? "");
      // LinkedIn answers a wrong, used or expired code and a redirect_uri mismatch with one message.
      if (!code || code.used || code.redirectUri !== form.redirect_uri) {
        return err(400, "invalid_request", "Unable to retrieve access token: appid/redirect uri/code verifier does not match authorization code. Or authorization code expired.");
      }
      code.used = true;
      counts.authorization_code++;
      const grant = { accounts: code.accounts, scopes: code.scopes };
      const refresh = `AQ-r${crypto.randomBytes(30).toString("base64url")}`;
      refreshTokens.set(refresh, { expiresAt: Date.now() + 31_536_000_000, ...clone(grant) });
      return { status: 200, body: { access_token: issue(grant), expires_in: 5_184_000, refresh_token: refresh, refresh_token_expires_in: 31_536_000, scope: grant.scopes.join(",") } };
    }
    if (form.grant_type === "refresh_token") {
      const r = refreshTokens.get(form.refresh_token ?? "");
      if (!r || r.expiresAt <= Date.now()) return err(400, "invalid_request", "The provided refresh token is invalid, expired or revoked"); // approximate
      counts.refresh_token++;
      return {
        status: 200,
        body: { access_token: issue(r), expires_in: 5_184_000, refresh_token: form.refresh_token, refresh_token_expires_in: Math.floor((r.expiresAt - Date.now()) / 1000), scope: r.scopes.join(",") },
      };
    }
    return err(400, "unsupported_grant_type", `Grant type ${form.grant_type} is not supported`);
  }

  // ---- routing -----------------------------------------------------------------------------------------------------
  const campaignView = (c: LinkedInCampaign) => ({
    ...clone(c), id: Number(c.id), account: `urn:li:sponsoredAccount:${c.account}`, campaignGroup: `urn:li:sponsoredCampaignGroup:${c.campaignGroup}`,
  });
  const groupView = (g: LinkedInGroup) => ({ ...clone(g), id: Number(g.id), account: `urn:li:sponsoredAccount:${g.account}` });

  function route(req: http.IncomingMessage, method: string, parts: string[], q: Record<string, string>, body: Record<string, any> | null, t: ReturnType<typeof checkToken>): { status: number; body?: unknown; delay?: number } {
    const [root, accId, edge, id, ...more] = parts;
    const denied = (what: string) => new ApiError(403, "ACCESS_DENIED", `Not enough permissions to access: ${what}`);
    if (method === "GET" && root === "adTargetingEntities" && parts.length === 1) {
      if (q.q === "typeahead") {
        const facet = param(q, "facet");
        const query = String(param(q, "query") ?? "").trim().toLowerCase();
        if (typeof facet !== "string" || !CATALOGUED.has(facet) || !query) throw new ApiError(400, "ILLEGAL_ARGUMENT", "typeahead needs a catalogued facet and a query");
        // Third-party references of LinkedIn's docs show typeahead with queryVersion=QUERY_USES_URNS (URN answers).
        if (q.queryVersion !== "QUERY_USES_URNS") throw new ApiError(400, "ILLEGAL_ARGUMENT", "typeahead needs queryVersion=QUERY_USES_URNS");
        const hits = [...entities.values()].filter((e) => e.facetUrn === facet && e.name.toLowerCase().includes(query)).sort((a, b) => b.members - a.members).slice(0, 10);
        return { status: 200, body: { elements: hits.map((e) => ({ urn: e.urn, facetUrn: e.facetUrn, name: e.name })), paging: { start: 0, count: 10, links: [] } } };
      }
      if (q.q === "urns") {
        const urns = param(q, "urns");
        if (!Array.isArray(urns) || !urns.length) throw new ApiError(400, "ILLEGAL_ARGUMENT", "urns must be a List of URNs");
        const found = urns.map((u) => entities.get(String(u))).filter((e): e is LinkedInEntity => !!e);
        return { status: 200, body: { elements: found.map((e) => ({ urn: e.urn, facetUrn: e.facetUrn, name: e.name })), paging: { start: 0, count: found.length, links: [] } } };
      }
      throw new ApiError(400, "ILLEGAL_ARGUMENT", "q must be one of typeahead, urns, adTargetingFacet");
    }
    if (method === "GET" && root === "audienceCounts" && parts.length === 1) {
      if (q.q !== "targetingCriteriaV2") throw new ApiError(400, "ILLEGAL_ARGUMENT", "q must be targetingCriteriaV2");
      if (q.targetingCriteria === undefined) throw new ApiError(400, "ILLEGAL_ARGUMENT", "targetingCriteria is required");
      return { status: 200, body: { elements: [audience(validateCriteria(param(q, "targetingCriteria")))], paging: { start: 0, count: 10, links: [] } } };
    }
    if (method === "GET" && root === "adAnalytics" && parts.length === 1) return { status: 200, body: analytics(q, t), delay: analyticsDelay };
    if (method === "GET" && root === "adAccounts" && parts.length === 1) {
      // Search answers only the accounts the member has a role on.
      if (q.q !== "search") throw new ApiError(400, "ILLEGAL_ARGUMENT", "q must be search");
      return { status: 200, body: paged([...accounts.values()].filter((a) => t.accounts[a.id]).map((a) => ({ ...clone(a), id: Number(a.id) })), q, "accounts") };
    }
    if (root !== "adAccounts" || !accId || more.length) throw new ApiError(404, "NOT_FOUND", "Not Found", 0);
    const account = accounts.get(accId);
    const role = t.accounts[accId];
    if (!account || !role) throw denied(`${method === "GET" ? "get" : "partialUpdate"} /adAccounts/${accId}`);
    if (method === "GET" && !edge) return { status: 200, body: { ...clone(account), id: Number(account.id), reference: null, type: "BUSINESS", servingStatuses: ["RUNNABLE"] } };
    if (method === "GET" && edge === "adCampaignGroups" && !id && q.ids !== undefined && q.q === undefined) {
      return { status: 200, body: batchGet(q, (gid) => { const g = groups.get(gid); return g && g.account === accId ? groupView(g) : undefined; }) };
    }
    if (method === "GET" && edge === "adCampaigns" && !id && q.ids !== undefined && q.q === undefined) {
      return { status: 200, body: batchGet(q, (cid) => { const c = campaigns.get(cid); return c && c.account === accId ? campaignView(c) : undefined; }) };
    }
    if (method === "GET" && edge === "creatives" && !id) {
      if (q.ids === undefined || q.q !== undefined) throw new ApiError(400, "ILLEGAL_ARGUMENT", "the stand-in serves the creatives BATCH_GET (ids=List(<creative URNs>)) only");
      return {
        status: 200,
        body: batchGet(q, (urn) => {
          const cr = creatives.get(/^urn:li:sponsoredCreative:(\d+)$/.exec(urn)?.[1] ?? "");
          return cr && cr.account === accId ? { id: `urn:li:sponsoredCreative:${cr.id}`, account: `urn:li:sponsoredAccount:${cr.account}`, campaign: `urn:li:sponsoredCampaign:${cr.campaign}`, name: cr.name, intendedStatus: "ACTIVE" } : undefined;
        }),
      };
    }
    if (method === "GET" && edge === "adCampaignGroups" && !id) {
      if (q.q !== "search") throw new ApiError(400, "ILLEGAL_ARGUMENT", "q must be search");
      const keep = statusFilter(q);
      return { status: 200, body: paged([...groups.values()].filter((g) => g.account === accId && keep(g.status)).map(groupView), q, "groups") };
    }
    if (edge !== "adCampaigns") throw new ApiError(404, "NOT_FOUND", "Not Found", 0);
    if (method === "GET" && !id) {
      if (q.q !== "search") throw new ApiError(400, "ILLEGAL_ARGUMENT", "q must be search");
      const keep = statusFilter(q);
      return { status: 200, body: paged([...campaigns.values()].filter((c) => c.account === accId && keep(c.status)).map(campaignView), q, "campaigns") };
    }
    const c = campaigns.get(id ?? "");
    if (!c || c.account !== accId) throw new ApiError(404, "NOT_FOUND", `Campaign ${id} not found`, 0);
    if (method === "GET") return { status: 200, body: campaignView(c) };
    if (method !== "POST") throw new ApiError(405, "METHOD_NOT_ALLOWED", `${method} is not supported on this resource`, 0);
    if (req.headers["x-restli-method"] !== "PARTIAL_UPDATE") {
      throw new ApiError(400, "ILLEGAL_ARGUMENT", "POST on an entity needs X-RestLi-Method: PARTIAL_UPDATE");
    }
    if (role === "VIEWER" || !t.scopes.includes("rw_ads")) throw denied(`partialUpdate /adAccounts/${accId}/adCampaigns/${c.id}`);
    return { status: 204, body: partialUpdate(c, body) };
  }

  function partialUpdate(c: LinkedInCampaign, body: Record<string, any> | null): undefined {
    const set = body?.patch?.$set;
    const record: LinkedInWrite = { campaignId: c.id, set: clone(set ?? {}), ok: false };
    writes.push(record);
    const patchKeys = Object.keys(body?.patch ?? {});
    if (!body || Object.keys(body).join() !== "patch" || !set || typeof set !== "object" || patchKeys.some((k) => k !== "$set")) {
      throw new ApiError(400, "ILLEGAL_ARGUMENT", "Body must be {\"patch\":{\"$set\":{...}}}");
    }
    for (const k of Object.keys(set)) if (!SETTABLE.includes(k)) throw new ApiError(400, "ILLEGAL_ARGUMENT", `Field ${k} cannot be updated`);
    for (const f of BUDGET_FIELDS) if (set[f] !== undefined) budgetWrites.push({ campaignId: c.id, field: f, value: clone(set[f]) });
    if (set.status !== undefined && !STATUSES.includes(set.status)) throw new ApiError(400, "ILLEGAL_ARGUMENT", `Invalid status ${set.status}`);
    const next: Partial<LinkedInCampaign> = {};
    if (set.targetingCriteria !== undefined) {
      // $set replaces the whole criteria: nothing of the stored one survives (the client's read-merge-write job).
      next.targetingCriteria = validateCriteria(set.targetingCriteria);
      if (locked.has(c.id)) throw new ApiError(400, "CAMPAIGN_NOT_EDITABLE", `Targeting of campaign urn:li:sponsoredCampaign:${c.id} cannot be changed while its creatives are in review`); // code approximate
      if ((set.status ?? c.status) === "ACTIVE" && audience(next.targetingCriteria).total < MIN_AUDIENCE) {
        throw new ApiError(400, "AUDIENCE_TOO_SMALL", `The audience of an active campaign must be at least ${MIN_AUDIENCE} members`); // code approximate
      }
    }
    for (const k of ["name", "status", "dailyBudget", "totalBudget", "unitCost", "runSchedule"]) if (set[k] !== undefined) (next as any)[k] = clone(set[k]);
    record.ok = true;
    Object.assign(c, next);
    c.changeAuditStamps.lastModified.time = Date.now();
    return undefined;
  }

  const authorize = authorizeEndpoint({
    provider: "LinkedIn", clientId: app.clientId,
    grants: () => [...accounts.values()].map((a) => `Ad account ${a.id} (${a.name})`),
    issue(q) {
      const code = `AQ${crypto.randomBytes(24).toString("base64url")}`;
      const scopes = (q.get("scope") ?? "").split(/[ ,]+/).filter((x) => grantable.has(x));
      codes.set(code, { redirectUri: q.get("redirect_uri")!, accounts: Object.fromEntries([...accounts.keys()].map((id) => [id, "CAMPAIGN_MANAGER" as Role])), scopes, used: false });
      return { code };
    },
  });

  const server = bodyServer((req, res, url, raw) => {
    if (url.pathname === "/oauth/v2/authorization") return authorize(req, res, url, raw);
    const method = (req.method ?? "GET").toUpperCase();
    const liUuid = crypto.randomBytes(16).toString("base64");
    const { authorization: _a, ...headers } = req.headers;
    const { raw: q, text } = readQuery(url);
    const record: LinkedInRequest = { method, path: url.pathname, query: text, headers, body: null, liUuid, at: Date.now() };
    requests.push(record);
    const send = (status: number, body?: unknown) => {
      record.status = status;
      const h: Record<string, string> = { "x-li-uuid": liUuid, "x-restli-protocol-version": "2.0.0" };
      if (body === undefined) { res.writeHead(status, h); return res.end(); }
      res.writeHead(status, { ...h, "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    try {
      const type = String(req.headers["content-type"] ?? "");
      let body: Record<string, any> | null = null;
      if (raw.trim()) {
        if (type.includes("application/json")) {
          try { body = JSON.parse(raw); } catch { throw new ApiError(400, "ILLEGAL_ARGUMENT", "Invalid JSON body"); }
        } else body = Object.fromEntries(new URLSearchParams(raw));
      }
      if (url.pathname === "/oauth/v2/accessToken") {
        if (body) { const { client_secret: _s, ...rest } = body; record.body = rest; }
        if (method !== "POST" || !type.includes("application/x-www-form-urlencoded")) return send(400, { error: "invalid_request", error_description: "POST a form-encoded body" });
        const r = oauthToken((body ?? {}) as Record<string, string>);
        return send(r.status, r.body);
      }
      record.body = body;
      if (!url.pathname.startsWith("/rest/")) throw new ApiError(404, "NOT_FOUND", "Not Found", 0);
      checkVersion(req);
      const t = checkToken(req);
      if (fault && fault.n > 0) {
        fault.n--;
        if (fault.kind === "throttle") {
          record.throttled = true;
          throw new ApiError(429, "TOO_MANY_REQUESTS", "Resource level throttle APPLICATION DAY limit for calls to this resource is reached.", 101); // wording approximate
        }
        throw new ApiError(503, "SERVICE_UNAVAILABLE", "Service Unavailable", 0);
      }
      const parts = url.pathname.slice("/rest/".length).split("/").filter(Boolean).map(decodeURIComponent);
      const answer = route(req, method, parts, q, body, t);
      if (answer.delay) {
        const timer = setTimeout(() => { delayed.delete(timer); if (!res.destroyed) send(answer.status, answer.body); }, answer.delay);
        delayed.add(timer);
        return;
      }
      return send(answer.status, answer.body);
    } catch (e) {
      if (e instanceof ApiError) return send(e.status, { status: e.status, serviceErrorCode: e.serviceErrorCode, code: e.code, message: e.message });
      return send(500, { status: 500, serviceErrorCode: 0, code: "INTERNAL_SERVER_ERROR", message: "Internal Server Error" });
    }
  });

  const base = await listenLocal(server, opts.port);
  return {
    faults: peerFaults(server, (m, url) => m === "POST" && /^\/rest\/adAccounts\/\d+\/adCampaigns\/\d+$/.test(url.pathname)),
    url: base, authorizeUrl: `${base}/oauth/v2/authorization`, tokenUrl: `${base}/oauth/v2/accessToken`, version, app, requests, writes, budgetWrites, counts,
    addToken(value, o) {
      tokens.set(value, { expiresAt: Date.now() + (o.expiresInS ?? 5_184_000) * 1000, revoked: false, accounts: { ...o.accounts }, scopes: o.scopes ?? ["r_ads", "rw_ads"] });
    },
    expireToken(value) { const t = tokens.get(value); if (t) t.expiresAt = Date.now() - 1000; },
    revokeToken(value) { const t = tokens.get(value); if (t) t.revoked = true; },
    addCode(code, o) { codes.set(code, { redirectUri: o.redirectUri, accounts: { ...o.accounts }, scopes: o.scopes ?? ["r_ads", "rw_ads"], used: false }); },
    expireRefreshToken(value) { const r = refreshTokens.get(value); if (r) r.expiresAt = Date.now() - 1000; },
    addAccount(a) {
      const acc: LinkedInAccount = { id: a.id, name: a.name, test: a.test ?? false, currency: a.currency ?? "USD", status: "ACTIVE" };
      accounts.set(a.id, acc);
      return clone(acc);
    },
    addGroup(a) {
      const g: LinkedInGroup = { id: a.id ?? String(nextId++), account: a.account, name: a.name, status: a.status ?? "ACTIVE" };
      groups.set(g.id, g);
      return clone(g);
    },
    addCampaign(a) {
      const now = Date.now();
      const c: LinkedInCampaign = {
        id: a.id ?? String(nextId++), account: a.account, campaignGroup: a.group, name: a.name, status: a.status ?? "ACTIVE", type: "SPONSORED_UPDATES",
        targetingCriteria: clone(a.targetingCriteria), dailyBudget: { amount: "50.00", currencyCode: "USD" }, changeAuditStamps: { created: { time: now }, lastModified: { time: now } },
      };
      campaigns.set(c.id, c);
      return clone(c);
    },
    addEntity(e) {
      const facetUrn = e.urn.startsWith("urn:li:skill:") ? LINKEDIN_FACETS.skills : e.urn.startsWith("urn:li:geo:") ? LINKEDIN_FACETS.locations : LINKEDIN_FACETS.interests;
      const full: LinkedInEntity = { urn: e.urn, facetUrn, name: e.name, members: e.members ?? 5_000_000 };
      entities.set(e.urn, full);
      return clone(full);
    },
    campaign: (id) => (campaigns.has(id) ? clone(campaigns.get(id)!) : undefined),
    criteriaOf: (id) => (campaigns.has(id) ? clone(campaigns.get(id)!.targetingCriteria) : undefined),
    setCriteria(id, c) {
      const camp = campaigns.get(id);
      if (!camp) throw new Error(`no campaign ${id}`);
      camp.targetingCriteria = clone(c);
      camp.changeAuditStamps.lastModified.time = Date.now();
    },
    planNames,
    lockCampaign(id) { locked.add(id); },
    failNext(kind, n) { fault = { kind, n }; },
    addCreative(a) {
      const cr: LinkedInCreative = { id: a.id ?? String(nextId++), account: a.account, campaign: a.campaign, name: a.name ?? "" };
      creatives.set(cr.id, cr);
      return clone(cr);
    },
    addStats(rows) {
      for (const r of Array.isArray(rows) ? rows : [rows]) {
        if (!/^\d+(\.\d+)?$/.test(r.costInLocalCurrency)) throw new Error(`costInLocalCurrency ${r.costInLocalCurrency}: a decimal string`);
        stats.push({ ...r });
      }
    },
    setAnalyticsDelay(ms) { analyticsDelay = ms; },
    resetLog() {
      requests.length = 0; writes.length = 0; budgetWrites.length = 0; fault = null;
      counts.authorization_code = 0; counts.refresh_token = 0; counts.refused = 0;
    },
    close: () => new Promise<void>((r) => { for (const t of delayed) clearTimeout(t); delayed.clear(); server.closeAllConnections(); server.close(() => r()); }),
  };
}
