import crypto from "node:crypto";
import type http from "node:http";
import { bodyServer, listenLocal } from "./listen.ts";
import { peerFaults, type PeerFaults } from "./faults.ts";

// A local stand-in for the Google Ads API REST interface, strict where a connector could get it
// wrong against the real service:
// - Version pinned by path: only `/v{N}/` for the configured N (default 25) answers; any other version gets the
//   front end's HTML 404, which is what a sunset version looks like, so a connector must not assume JSON errors.
// - Auth: `Authorization: Bearer <token>` for a token registered with addToken. No credential: the front end's 401
//   (no GoogleAdsFailure); an unknown token: 401 UNAUTHENTICATED with a GoogleAdsFailure (OAUTH_TOKEN_INVALID).
//   `developer-token` is accepted and ignored (developer tokens were retired on 9 Sep 2026). `login-customer-id` is
//   digits only: with dashes it is a 400 headerError INVALID_LOGIN_CUSTOMER_ID; when given, it must be the customer
//   itself or the manager the customer sits under, and the token must reach that manager.
// - Access level: a token whose Cloud project is Test level reaches test accounts only; any other customer answers
//   403 authorizationError CLOUD_PROJECT_NOT_APPROVED_FOR_PRODUCTION (v25 behaviour).
// - Every answer carries a `request-id` header, repeated as `requestId` in GoogleAdsFailure details.
// - GET /v{N}/customers:listAccessibleCustomers -> {resourceNames}.
// - POST /v{N}/customers/{cid}/googleAds:search {query, pageToken?}: a small GAQL parser (SELECT / FROM / WHERE with
//   = != IN NOT IN joined by AND / ORDER BY / LIMIT) over customer, campaign, ad_group and ad_group_criterion (plus
//   their attributed parents), refusing anything else with a queryError. Rows are camelCase, int64 ids as strings,
//   each selected resource carries its resourceName; an empty result has no `results` key at all (proto3 JSON).
//   Pages are `pageSize` rows (Google fixes 10,000; tests lower it) linked by nextPageToken. Sending `pageSize` is a
//   400 requestError PAGE_SIZE_NOT_SUPPORTED, as in every version since v17. Removed campaigns, ad groups and
//   keywords stay visible with status REMOVED, as Google keeps removed entities, and campaigns of every channel
//   (Performance Max, Display, ...) are listed: a connector has to filter them. An enum field compared in WHERE
//   with a constant its enum does not have is a queryError BAD_ENUM_CONSTANT.
// - POST /v{N}/customers/{cid}/adGroupCriteria:mutate {operations, partialFailure?, validateOnly?,
//   responseContentType?}: keyword create / update (status only; text and match type are immutable) / remove.
//   validateOnly checks without changing anything ({} or the 400 failure); partialFailure false is all-or-nothing;
//   partialFailure true applies the valid operations and reports the others in partialFailureError (code 3) with
//   per-operation locations. Keyword criterion ids depend only on (text, match type), so re-adding a removed keyword
//   gives back the same resource name (what a rollback of a removal relies on).
// - Quota: every search request and every mutate operation (validateOnly included) counts one operation against a
//   daily limit; past it, 429 quotaError RESOURCE_EXHAUSTED with no retry delay (wait for the 24-hour window).
//   failNext("RESOURCE_TEMPORARILY_EXHAUSTED") answers 429 with quotaErrorDetails.retryDelay "5s".
// - Everything is recorded in `requests` (headers without authorization).
// - Reporting: the same googleAds:search answers report queries, i.e. queries that select or filter
//   `segments.date` or `metrics.{impressions,clicks,cost_micros,conversions}` FROM customer, campaign, ad_group or
//   ad_group_ad. Stats are stored as Google keeps them: one row per ad per day, the day in the account's time zone,
//   cost in micros of the account's currency, conversions a double (addStats). Metrics are summed over whatever is
//   not selected: without `segments.date` in SELECT a row covers the whole filtered range; FROM campaign sums its ad
//   groups' ads. Only entities with stats in the range give rows (Google leaves zero-metric rows out). Selecting
//   `segments.date` without a finite date filter is refused (EXPECTED_FILTERS_ON_DATE_RANGE; approximate code).
//   WHERE also takes BETWEEN and > >= < <=. Metrics are int64 (JSON strings) except conversions (a JSON number).
//   Search answers honour Google's `prettyPrint` system parameter (default true: indented JSON) and are written a
//   chunk of rows at a time, so a 10,000-row page is never held as one string.
// - generateStats({customerId, adGroups, days}) serves a very large report without storing it: its entities and
//   rows are computed by index from deterministic formulas, page by page, so a million rows cost only the page
//   being answered. `expected()` on the returned handle computes a report's row count and totals for tests.

export type MatchType = "BROAD" | "PHRASE" | "EXACT";
export type EntityStatus = "ENABLED" | "PAUSED" | "REMOVED";

export interface AdsCustomer { id: string; descriptiveName: string; currencyCode: string; timeZone: string; testAccount: boolean; manager: boolean; managerId?: string }
export interface AdsCampaign { customerId: string; id: string; name: string; status: EntityStatus; advertisingChannelType: string }
export interface AdsAdGroup { customerId: string; campaignId: string; id: string; name: string; status: EntityStatus }
export interface AdsKeyword { resourceName: string; customerId: string; adGroupId: string; criterionId: string; text: string; matchType: MatchType; status: EntityStatus; negative: boolean }

/** An ad (ad_group_ad). Search ads have no name: `name` stays undefined, as Google leaves it out. */
export interface AdsAd { customerId: string; campaignId: string; adGroupId: string; id: string; name?: string; type: string; status: EntityStatus }
/** One ad's stats for one day, as Google stores them: the date in the account's time zone, cost in micros. */
export interface AdsStats { adId: string; date: string; impressions: number; clicks: number; costMicros: bigint; conversions: number }

/** A generated account's report, computed on the fly (generateStats). */
export interface GeneratedStats {
  customerId: string;
  /** The i-th campaign / ad group / ad id (ids ascend in that order; ad groups fill campaigns in order). */
  campaignId(i: number): string;
  adGroupId(i: number): string;
  adId(i: number): string;
  /** The first and last date of the generated days (YYYY-MM-DD, account time zone). */
  from: string;
  to: string;
  /** What a report over these stats must come to: its row count and totals (cost as a micros decimal string). */
  expected(q?: { level?: "campaign" | "ad_group" | "ad"; granularity?: "day" | "total"; from?: string; to?: string; adGroupIds?: string[] }):
    { rows: number; impressions: number; clicks: number; costMicros: string; conversions: number };
}

export interface RecordedAdsRequest { method: string; path: string; query: string; headers: http.IncomingHttpHeaders; body: any; status: number; requestId: string; at: Date }

/** Faults the next n API calls (after authentication) answer with. */
export type AdsFault = "RESOURCE_TEMPORARILY_EXHAUSTED" | "RESOURCE_EXHAUSTED" | "INTERNAL" | "UNAVAILABLE";

export interface GoogleAdsServerOptions {
  /** The API version served (the N of /v{N}/); default 25. */
  version?: number;
  /** Operations per day before RESOURCE_EXHAUSTED (default 15,000: Basic / Test level). */
  dailyOperationLimit?: number;
  /** Rows per search page (Google: 10,000). */
  pageSize?: number;
  /** A fixed port (the sandbox); default a free one. OAuth is the oidc-provider peer's (oauth-server.ts) with Google's paths. */
  port?: number;
}

export interface GoogleAdsServer {
  url: string;
  version: number;
  /** Registers an OAuth access token. testLevel: its Cloud project is Test level. customers: ids it reaches directly (default: all). */
  addToken(token: string, opts?: { testLevel?: boolean; customers?: string[] }): void;
  /** Forgets a token (revoked or expired): it then answers 401. */
  revokeToken(token: string): void;
  addCustomer(c?: Partial<AdsCustomer>): AdsCustomer;
  addCampaign(c: { customerId: string; id?: string; name: string; status?: EntityStatus; advertisingChannelType?: string }): AdsCampaign;
  addAdGroup(g: { campaignId: string; id?: string; name: string; status?: EntityStatus }): AdsAdGroup;
  /** Seeds a keyword directly (no validation, no quota). The returned object is live: tests may change it between preview and apply. */
  addKeyword(k: { adGroupId: string; text: string; matchType?: MatchType; status?: EntityStatus; negative?: boolean }): AdsKeyword;
  /** Copies of an ad group's keywords in creation order, REMOVED ones only when asked. */
  keywordsOf(adGroupId: string, opts?: { includeRemoved?: boolean }): AdsKeyword[];
  /** The live keyword with this resource name. */
  keyword(resourceName: string): AdsKeyword | undefined;
  requests: RecordedAdsRequest[];
  /** The next n API calls (after authentication) answer this fault. */
  failNext(kind: AdsFault, n?: number): void;
  /** Creating a keyword with this text (case-insensitive) is refused by policy (policyFindingError POLICY_FINDING). */
  refuseText(text: string): void;
  /** Creating keywords in this ad group is refused from now on (CANNOT_ADD_CRITERIA_TYPE, as for a Display-only group). */
  refuseAdGroup(adGroupId: string): void;
  /** Real mutates are applied at once but answered `ms` later (a caller that dies meanwhile never hears of them). */
  holdWrites(ms: number): void;
  /** googleAds:search answers are sent `ms` later (a slow report). */
  slowSearches(ms: number): void;
  /** Seeds an ad (ad_group_ad) in an ad group. */
  addAd(a: { adGroupId: string; id?: string; name?: string; type?: string; status?: EntityStatus }): AdsAd;
  /**
   * Seeds one day of an ad's stats in Google's own units (cost in micros, int64 as number, string or bigint). Without
   * adId, the ad group's first ad (created when it has none). The same ad and date again replaces the row.
   */
  addStats(s: { adId?: string; adGroupId?: string; date: string; impressions: number; clicks: number; costMicros: number | string | bigint; conversions?: number }): AdsStats;
  /**
   * Makes the customer's report a generated one (its seeded entities and stats are then not reported): `campaigns`
   * (default 1) campaigns holding `adGroups` ad groups, `adsPerAdGroup` ads each (default 1), `days` days from
   * `from` (default 2026-01-01). Report queries over it may filter by segments.date, campaign.id, ad_group.id and
   * ad_group_ad.ad.id, and order by nothing but the natural order (campaign, ad group, ad, date).
   */
  generateStats(g: { customerId: string; adGroups: number; days: number; campaigns?: number; adsPerAdGroup?: number; from?: string }): GeneratedStats;
  dailyOperationLimit: number;
  pageSize: number;
  /** Operations counted today. */
  operationsToday(): number;
  /** A new quota day begins. */
  resetDay(): void;
  /** Failures around a write, on request (faults.ts): its answer lost after it was applied, applied late, a restart. */
  faults: PeerFaults;
  close(): Promise<void>;
}

const MATCH_TYPES = new Set(["BROAD", "PHRASE", "EXACT"]);
// Enum values the REST JSON parser knows: anything else fails the whole request before any operation is looked at.
const MATCH_TYPE_ENUM = new Set(["UNSPECIFIED", "UNKNOWN", ...MATCH_TYPES]);
const STATUS_ENUM = new Set(["UNSPECIFIED", "UNKNOWN", "ENABLED", "PAUSED", "REMOVED"]);
const CHANNEL_ENUM = new Set(["UNSPECIFIED", "UNKNOWN", "SEARCH", "DISPLAY", "SHOPPING", "HOTEL", "VIDEO", "MULTI_CHANNEL", "LOCAL", "SMART", "PERFORMANCE_MAX", "LOCAL_SERVICES", "TRAVEL", "DEMAND_GEN"]);
/** The enum fields a WHERE may compare, and their constants. */
const WHERE_ENUMS: Record<string, Set<string>> = {
  "campaign.status": STATUS_ENUM, "ad_group.status": STATUS_ENUM, "ad_group_criterion.status": STATUS_ENUM, "ad_group_ad.status": STATUS_ENUM,
  "campaign.advertising_channel_type": CHANNEL_ENUM, "ad_group_criterion.keyword.match_type": MATCH_TYPE_ENUM,
};
// Symbols Google refuses in keyword text (KEYWORD_HAS_INVALID_CHARS); match-type punctuation ("", []) belongs to the
// UI syntax, not to the API's text field.
const FORBIDDEN_CHARS = /[!@%,*^=;~`|<>(){}[\]\\?"]/;
const MAX_KEYWORD_CHARS = 80;
const MAX_KEYWORD_WORDS = 10;
const MAX_OPERATIONS = 10_000;
const AUTH_HELP = "Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.";

type Res = "customer" | "campaign" | "ad_group" | "ad_group_criterion" | "ad_group_ad";
/** What a query may select fields of: resources, plus the report's segments and metrics. */
type FieldRes = Res | "segments" | "metrics";
interface Metrics { impressions: number; clicks: number; costMicros: bigint; conversions: number }
/** A row joins the FROM resource with its attributed parents (and, in a report, its date and summed metrics). */
interface Row {
  customer: AdsCustomer; campaign?: AdsCampaign; ad_group?: AdsAdGroup; ad_group_criterion?: AdsKeyword; ad_group_ad?: AdsAd;
  date?: string; metrics?: Metrics;
}
type Getter = (row: Row) => unknown;

// GAQL fields served, per resource, as getters on a row. Ids are int64: proto3 JSON writes them as strings.
const rn = {
  customer: (c: AdsCustomer) => `customers/${c.id}`,
  campaign: (c: AdsCampaign) => `customers/${c.customerId}/campaigns/${c.id}`,
  adGroup: (g: AdsAdGroup) => `customers/${g.customerId}/adGroups/${g.id}`,
};
const FIELDS: Record<FieldRes, Record<string, Getter>> = {
  customer: {
    resource_name: (r) => rn.customer(r.customer), id: (r) => r.customer.id, descriptive_name: (r) => r.customer.descriptiveName,
    currency_code: (r) => r.customer.currencyCode, time_zone: (r) => r.customer.timeZone, manager: (r) => r.customer.manager, test_account: (r) => r.customer.testAccount,
  },
  campaign: {
    resource_name: (r) => rn.campaign(r.campaign!), id: (r) => r.campaign!.id, name: (r) => r.campaign!.name, status: (r) => r.campaign!.status,
    advertising_channel_type: (r) => r.campaign!.advertisingChannelType,
  },
  ad_group: {
    resource_name: (r) => rn.adGroup(r.ad_group!), id: (r) => r.ad_group!.id, name: (r) => r.ad_group!.name, status: (r) => r.ad_group!.status,
    campaign: (r) => rn.campaign(r.campaign!), type: () => "SEARCH_STANDARD",
  },
  ad_group_criterion: {
    resource_name: (r) => r.ad_group_criterion!.resourceName, criterion_id: (r) => r.ad_group_criterion!.criterionId,
    ad_group: (r) => rn.adGroup(r.ad_group!), status: (r) => r.ad_group_criterion!.status, negative: (r) => r.ad_group_criterion!.negative,
    type: () => "KEYWORD", "keyword.text": (r) => r.ad_group_criterion!.text, "keyword.match_type": (r) => r.ad_group_criterion!.matchType,
  },
  ad_group_ad: {
    resource_name: (r) => `customers/${r.ad_group_ad!.customerId}/adGroupAds/${r.ad_group_ad!.adGroupId}~${r.ad_group_ad!.id}`,
    ad_group: (r) => rn.adGroup(r.ad_group!), status: (r) => r.ad_group_ad!.status,
    "ad.id": (r) => r.ad_group_ad!.id, "ad.name": (r) => r.ad_group_ad!.name, "ad.type": (r) => r.ad_group_ad!.type,
  },
  segments: { date: (r) => r.date },
  // int64 metrics are JSON strings; conversions is a double (a JSON number).
  metrics: {
    impressions: (r) => String(r.metrics!.impressions), clicks: (r) => String(r.metrics!.clicks),
    cost_micros: (r) => r.metrics!.costMicros.toString(), conversions: (r) => r.metrics!.conversions,
  },
};
const FROM_RESOURCES = new Set<string>(["customer", "campaign", "ad_group", "ad_group_criterion", "ad_group_ad"]);
const isReportField = (f: string) => f.startsWith("segments.") || f.startsWith("metrics.");
// Which resources a FROM resource may select fields of (itself and its attributed parents).
const ATTRIBUTED: Record<Res, FieldRes[]> = {
  customer: ["customer", "segments", "metrics"], campaign: ["campaign", "customer", "segments", "metrics"],
  ad_group: ["ad_group", "campaign", "customer", "segments", "metrics"],
  ad_group_criterion: ["ad_group_criterion", "ad_group", "campaign", "customer"],
  ad_group_ad: ["ad_group_ad", "ad_group", "campaign", "customer", "segments", "metrics"],
};
const camel = (s: string) => s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

// ---- GAQL: tokenizer and parser (enough for a connector's reads; anything else is a queryError) -------------------

class QueryError extends Error { constructor(public code: string, message: string) { super(message); } }
type Tok = { kind: "word" | "str" | "num" | "sym"; v: string };
interface Cond { field: string; op: "=" | "!=" | "IN" | "NOT IN" | "BETWEEN" | ">" | ">=" | "<" | "<="; values: string[] }
interface Query { fields: string[]; from: Res; where: Cond[]; orderBy: { field: string; desc: boolean }[]; limit?: number }

function tokenize(q: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < q.length) {
    const c = q[i];
    if (/\s/.test(c)) { i++; continue; }
    if (c === "'" || c === '"') {
      let v = ""; let j = i + 1;
      for (; j < q.length && q[j] !== c; j++) { if (q[j] === "\\" && j + 1 < q.length) j++; v += q[j]; }
      if (j >= q.length) throw new QueryError("STRING_NOT_TERMINATED", "Error in query: unterminated string.");
      out.push({ kind: "str", v }); i = j + 1; continue;
    }
    const m = /^(-?\d+(?:\.\d+)?)|^([A-Za-z_][\w.]*)|^(!=|>=|<=|[=(),<>])/.exec(q.slice(i));
    if (!m) throw new QueryError("BAD_SYMBOL", `Error in query: unexpected symbol '${c}'.`);
    out.push(m[1] !== undefined ? { kind: "num", v: m[1] } : m[2] !== undefined ? { kind: "word", v: m[2] } : { kind: "sym", v: m[3] });
    i += m[0].length;
  }
  return out;
}

function parseQuery(q: string): Query {
  const t = tokenize(q);
  let i = 0;
  const kw = (w: string) => t[i]?.kind === "word" && t[i].v.toUpperCase() === w;
  const expectKw = (w: string, code: string) => { if (!kw(w)) throw new QueryError(code, `Error in query: expected ${w}.`); i++; };
  const fieldTok = () => {
    if (t[i]?.kind !== "word") throw new QueryError("BAD_FIELD_NAME", "Error in query: expected a field name.");
    return t[i++].v;
  };
  const value = () => {
    const v = t[i];
    if (!v || v.kind === "sym") throw new QueryError("BAD_VALUE", "Error in query: expected a value.");
    i++;
    return v.kind === "word" ? v.v.toUpperCase() === "TRUE" ? "true" : v.v.toUpperCase() === "FALSE" ? "false" : v.v : v.v;
  };
  expectKw("SELECT", "EXPECTED_SELECT");
  const fields = [fieldTok()];
  while (t[i]?.v === ",") { i++; fields.push(fieldTok()); }
  expectKw("FROM", "EXPECTED_FROM");
  const fromTok = t[i++];
  if (!fromTok || fromTok.kind !== "word" || !FROM_RESOURCES.has(fromTok.v)) throw new QueryError("BAD_RESOURCE_TYPE_IN_FROM_CLAUSE", `Error in query: invalid resource type '${fromTok?.v ?? ""}' in FROM clause.`);
  const from = fromTok.v as Res;
  const known = (f: string) => {
    const dot = f.indexOf(".");
    const res = f.slice(0, dot) as FieldRes;
    if (dot < 0 || !ATTRIBUTED[from].includes(res) || !(f.slice(dot + 1) in FIELDS[res])) throw new QueryError("UNRECOGNIZED_FIELD", `Error in query: unrecognized field in the query: '${f}'.`);
    return f;
  };
  fields.forEach(known);
  const where: Cond[] = [];
  if (kw("WHERE")) {
    i++;
    do {
      const field = known(fieldTok());
      let op: Cond["op"];
      if (t[i]?.kind === "sym" && ["=", "!=", ">", ">=", "<", "<="].includes(t[i].v)) op = t[i++].v as Cond["op"];
      else if (kw("BETWEEN")) { i++; op = "BETWEEN"; }
      else if (kw("IN")) { i++; op = "IN"; }
      else if (kw("NOT") && t[i + 1]?.kind === "word" && t[i + 1].v.toUpperCase() === "IN") { i += 2; op = "NOT IN"; }
      else throw new QueryError("BAD_OPERATOR", `Error in query: invalid operator after '${field}'.`);
      const values: string[] = [];
      if (op === "IN" || op === "NOT IN") {
        if (t[i]?.v !== "(") throw new QueryError("EXPECTED_LIST", "Error in query: expected a list.");
        i++;
        if (t[i]?.v === ")") throw new QueryError("PROHIBITED_EMPTY_LIST_IN_CONDITION", "Error in query: empty list.");
        values.push(value());
        while (t[i]?.v === ",") { i++; values.push(value()); }
        if (t[i]?.v !== ")") throw new QueryError("UNEXPECTED_INPUT", "Error in query: expected ')'.");
        i++;
      } else if (op === "BETWEEN") {
        values.push(value());
        expectKw("AND", "EXPECTED_AND");
        values.push(value());
      } else values.push(value());
      const constants = WHERE_ENUMS[field];
      const wrong = constants ? values.find((v) => !constants.has(v)) : undefined;
      if (wrong !== undefined) throw new QueryError("BAD_ENUM_CONSTANT", `Error in query: '${wrong}' is not a value of ${field}.`);
      where.push({ field, op, values });
    } while (kw("AND") && ++i);
  }
  const orderBy: Query["orderBy"] = [];
  if (kw("ORDER")) {
    i++;
    expectKw("BY", "EXPECTED_BY");
    do {
      const field = known(fieldTok());
      let desc = false;
      if (kw("ASC") || kw("DESC")) desc = t[i++].v.toUpperCase() === "DESC";
      orderBy.push({ field, desc });
    } while (t[i]?.v === "," && ++i);
  }
  let limit: number | undefined;
  if (kw("LIMIT")) {
    i++;
    const n = t[i++];
    if (n?.kind !== "num" || !/^\d+$/.test(n.v) || Number(n.v) < 1) throw new QueryError("BAD_LIMIT_VALUE", "Error in query: invalid LIMIT value.");
    limit = Number(n.v);
  }
  if (i < t.length) throw new QueryError("UNEXPECTED_INPUT", `Error in query: unexpected input '${t[i].v}'.`);
  return { fields, from, where, orderBy, limit };
}

const getter = (f: string): Getter => { const dot = f.indexOf("."); return FIELDS[f.slice(0, dot) as FieldRes][f.slice(dot + 1)]; };

/** Compares two field values: numerically when both are integers (ids, int64 metrics), else as strings (dates sort as text). */
const compare = (x: unknown, y: unknown): number => {
  const a = String(x), b = String(y);
  if (/^-?\d+$/.test(a) && /^-?\d+$/.test(b)) { const d = BigInt(a) - BigInt(b); return d < 0n ? -1 : d > 0n ? 1 : 0; }
  if (/^-?\d+(\.\d+)?$/.test(a) && /^-?\d+(\.\d+)?$/.test(b)) return Math.sign(Number(a) - Number(b)); // doubles (conversions)
  return a < b ? -1 : a > b ? 1 : 0;
};
function matches(c: Cond, row: Row): boolean {
  const v = getter(c.field)(row);
  switch (c.op) {
    case "=": case "IN": return c.values.some((x) => String(v) === x);
    case "!=": case "NOT IN": return !c.values.some((x) => String(v) === x);
    case "BETWEEN": return compare(v, c.values[0]) >= 0 && compare(v, c.values[1]) <= 0;
    case ">": return compare(v, c.values[0]) > 0;
    case ">=": return compare(v, c.values[0]) >= 0;
    case "<": return compare(v, c.values[0]) < 0;
    case "<=": return compare(v, c.values[0]) <= 0;
  }
}

// ---- dates as day numbers (UTC epoch days: calendar arithmetic only, no time zone involved) ----
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const dayOf = (d: string) => Math.floor(Date.parse(`${d}T00:00:00Z`) / 86_400_000);
const dateOf = (n: number) => new Date(n * 86_400_000).toISOString().slice(0, 10);
const validDate = (d: string) => DATE.test(d) && !Number.isNaN(dayOf(d)) && dateOf(dayOf(d)) === d;

// ---- errors ------------------------------------------------------------------------------------------------------

interface AdsError { errorCode: Record<string, string>; message: string; trigger?: { stringValue: string }; location?: { fieldPathElements: { fieldName: string; index?: number }[] }; details?: Record<string, unknown> }
/** A page's rows, serialised a chunk at a time as the answer is written (a 10,000-row page is never one string). */
class LazyRows { constructor(public from: number, public to: number, public row: (i: number) => Record<string, any>) {} }

class Refusal { constructor(public status: number, public grpc: string, public message: string, public errors: AdsError[] | null, public headers: Record<string, string> = {}) {} }
const opPath = (i: number, ...names: string[]) => ({ fieldPathElements: [{ fieldName: "operations", index: i }, ...names.map((fieldName) => ({ fieldName }))] });
const invalid = (errors: AdsError[]) => new Refusal(400, "INVALID_ARGUMENT", "Request contains an invalid argument.", errors);
// A body the REST JSON parser refuses: Google answers before the Ads service sees it, with BadRequest details only.
class JsonRefusal { constructor(public description: string) {} }

// ---- generated stats (generateStats): a large report computed by index, never stored ---------------------------

interface Generator { table(q: Query): { count: number; at(i: number): Row }; handle: GeneratedStats }

const GEN_CAMPAIGN_BASE = 5_000_000_000;
const GEN_AD_GROUP_BASE = 6_000_000_000;
const GEN_AD_BASE = 7_000_000_000;

/**
 * One ad's stats on day d (0 = the first generated day): deterministic, cheap, every row non-zero. Clicks stay below
 * impressions, cost is clicks x a CPC of 0.05 to 1.045 in micros, conversions are quarters (exact in binary floating
 * point, so sums compare exactly).
 */
export function generatedAdDay(ad: number, d: number): { impressions: number; clicks: number; costMicros: number; conversions: number } {
  const impressions = 100 + ((ad * 7919 + d * 104_729) % 900);
  const clicks = (ad * 31 + d * 17) % 50;
  const cpcMicros = 50_000 + ((ad * 13 + d * 7) % 200) * 5_000;
  return { impressions, clicks, costMicros: clicks * cpcMicros, conversions: ((ad + d) % 4) * 0.25 };
}

function makeGenerator(customer: AdsCustomer, g: { adGroups: number; days: number; campaigns?: number; adsPerAdGroup?: number; from?: string }): Generator {
  const G = g.adGroups, A = g.adsPerAdGroup ?? 1, days = g.days;
  const start = dayOf(g.from ?? "2026-01-01");
  if (!(G >= 1 && A >= 1 && days >= 1) || G > 999_999_999 || G * A > 999_999_999 || Number.isNaN(start)) throw new Error("generateStats: adGroups, adsPerAdGroup, days >= 1 and a YYYY-MM-DD from");
  const gpc = Math.ceil(G / Math.min(g.campaigns ?? 1, G)); // ad groups per campaign, filled in order
  const C = Math.ceil(G / gpc);
  const cid = customer.id;
  const campaignOf = (grp: number) => Math.floor(grp / gpc);
  const ids = { campaign: (i: number) => String(GEN_CAMPAIGN_BASE + i), adGroup: (i: number) => String(GEN_AD_GROUP_BASE + i), ad: (i: number) => String(GEN_AD_BASE + i) };
  const indexOf = (base: number, n: number, id: string) => { const i = /^\d+$/.test(id) ? Number(id) - base : -1; return i >= 0 && i < n ? i : -1; };
  const campaignObj = (c: number): AdsCampaign => ({ customerId: cid, id: ids.campaign(c), name: `Generated campaign ${c}`, status: "ENABLED", advertisingChannelType: "SEARCH" });
  const groupObj = (grp: number): AdsAdGroup => ({ customerId: cid, campaignId: ids.campaign(campaignOf(grp)), id: ids.adGroup(grp), name: `Generated ad group ${grp}`, status: "ENABLED" });
  const adObj = (a: number): AdsAd => ({ customerId: cid, campaignId: ids.campaign(campaignOf(Math.floor(a / A))), adGroupId: ids.adGroup(Math.floor(a / A)), id: ids.ad(a), type: "RESPONSIVE_SEARCH_AD", status: "ENABLED" });
  /** Ads [a0, a1) summed over days [d0, d1]. */
  const sum = (a0: number, a1: number, d0: number, d1: number): Metrics => {
    let impressions = 0, clicks = 0, cost = 0, conversions = 0;
    for (let a = a0; a < a1; a++) for (let d = d0; d <= d1; d++) {
      const m = generatedAdDay(a, d);
      impressions += m.impressions; clicks += m.clicks; cost += m.costMicros; conversions += m.conversions;
    }
    return { impressions, clicks, costMicros: BigInt(cost), conversions };
  };
  const adsOfGroup = (grp: number): [number, number] => [grp * A, grp * A + A];
  const adsOfCampaign = (c: number): [number, number] => [c * gpc * A, Math.min(G, (c + 1) * gpc) * A];

  function table(q: Query) {
    const level: Res = q.from;
    if (level === "ad_group_criterion") throw new Error("generated stats report on customer, campaign, ad_group and ad_group_ad");
    const byDate = q.fields.includes("segments.date");
    // Natural order only: (campaign, ad group, ad[, date]); an ORDER BY must be a run of these keys it already follows.
    const keys = [...(level === "customer" ? ["customer.id"] : ["campaign.id", ...(level !== "campaign" ? ["ad_group.id"] : []), ...(level === "ad_group_ad" ? ["ad_group_ad.ad.id"] : [])]), ...(byDate ? ["segments.date"] : [])];
    const entityKeys = keys.length - (byDate ? 1 : 0);
    const ob = q.orderBy.map((o) => (o.desc ? "-" : "") + o.field).join(",");
    let followed = !ob;
    for (let j = 0; j < entityKeys; j++) for (let k = j + 1; k <= keys.length; k++) if (keys.slice(j, k).join(",") === ob) followed = true;
    // Also served: by campaign, then date, then entity (what a campaign roll-up of ad-group rows asks for).
    const campaignThenDate = byDate && level !== "campaign" && level !== "customer" && ob === "campaign.id,segments.date";
    if (!followed && !campaignThenDate) throw new Error(`generated stats are served in their natural order only, not ORDER BY ${ob}`);
    let lo = 0, hi = days - 1;
    let camps: Set<number> | null = null, groups: Set<number> | null = null, adSet: Set<number> | null = null;
    const restrict = (prev: Set<number> | null, next: number[]) => new Set(next.filter((x) => x >= 0 && (!prev || prev.has(x))));
    for (const c of q.where) {
      if (c.field === "segments.date") {
        const v = c.values.map((x) => dayOf(x) - start);
        if (c.op === "=" || (c.op === "IN" && v.length === 1)) { lo = Math.max(lo, v[0]); hi = Math.min(hi, v[0]); }
        else if (c.op === "BETWEEN") { lo = Math.max(lo, v[0]); hi = Math.min(hi, v[1]); }
        else if (c.op === ">=" || c.op === ">") lo = Math.max(lo, v[0] + (c.op === ">" ? 1 : 0));
        else if (c.op === "<=" || c.op === "<") hi = Math.min(hi, v[0] - (c.op === "<" ? 1 : 0));
        else throw new Error(`generated stats: segments.date ${c.op} is not served`);
      } else if (c.op === "=" || c.op === "IN") {
        if (c.field === "campaign.id") camps = restrict(camps, c.values.map((id) => indexOf(GEN_CAMPAIGN_BASE, C, id)));
        else if (c.field === "ad_group.id") groups = restrict(groups, c.values.map((id) => indexOf(GEN_AD_GROUP_BASE, G, id)));
        else if (c.field === "ad_group_ad.ad.id") adSet = restrict(adSet, c.values.map((id) => indexOf(GEN_AD_BASE, G * A, id)));
        else throw new Error(`generated stats: a filter on ${c.field} is not served`);
      } else throw new Error(`generated stats: ${c.field} ${c.op} is not served`);
    }
    const nd = Math.max(0, hi - lo + 1);
    // The level's entities, as a count and an index accessor (a range unless filtered, then a small sorted list).
    const keep = (grp: number) => (!groups || groups.has(grp)) && (!camps || camps.has(campaignOf(grp)));
    let n: number, entity: (k: number) => number;
    const list = (xs: number[]) => { const s = [...new Set(xs)].sort((x, y) => x - y); n = s.length; entity = (k) => s[k]; };
    if (level === "customer") { n = 1; entity = () => 0; }
    else if (level === "campaign") { if (camps) list([...camps]); else { n = C; entity = (k) => k; } }
    else if (level === "ad_group") {
      if (groups) list([...groups].filter(keep));
      else if (camps) list([...camps].flatMap((c) => Array.from({ length: Math.max(0, Math.min(G, (c + 1) * gpc) - c * gpc) }, (_, k) => c * gpc + k)));
      else { n = G; entity = (k) => k; }
    } else {
      if (adSet) list([...adSet].filter((a) => keep(Math.floor(a / A))));
      else if (groups || camps) {
        const gs = groups ? [...groups].filter(keep) : [...camps!].flatMap((c) => Array.from({ length: Math.max(0, Math.min(G, (c + 1) * gpc) - c * gpc) }, (_, k) => c * gpc + k));
        list(gs.flatMap((grp) => Array.from({ length: A }, (_, k) => grp * A + k)));
      } else { n = G * A; entity = (k) => k; }
    }
    const count = nd === 0 ? 0 : byDate ? n! * nd : n!;
    // campaignThenDate: the entity list in campaign blocks (entities ascend with their campaign), each block day-major.
    const blocks: { first: number; size: number; rowStart: number }[] = [];
    if (campaignThenDate) {
      const campaignOfEntity = (e: number) => campaignOf(level === "ad_group" ? e : Math.floor(e / A));
      for (let k = 0; k < n!; k++) {
        const last = blocks.at(-1);
        if (last && campaignOfEntity(entity!(k)) === campaignOfEntity(entity!(last.first))) last.size++;
        else blocks.push({ first: k, size: 1, rowStart: 0 });
      }
      blocks.forEach((b, k) => { b.rowStart = k ? blocks[k - 1].rowStart + blocks[k - 1].size * nd : 0; });
    }
    const locate = (i: number): [number, number] => {
      if (!campaignThenDate) return byDate ? [entity(Math.floor(i / nd)), i % nd] : [entity(i), 0];
      let a = 0, b = blocks.length - 1;
      while (a < b) { const mid = (a + b + 1) >> 1; if (blocks[mid].rowStart <= i) a = mid; else b = mid - 1; }
      const blk = blocks[a], j = i - blk.rowStart;
      return [entity(blk.first + (j % blk.size)), Math.floor(j / blk.size)];
    };
    const at = (i: number): Row => {
      const [e, dd] = locate(i);
      const d0 = byDate ? lo + dd : lo, d1 = byDate ? d0 : hi;
      const row: Row = { customer, ...(byDate ? { date: dateOf(start + d0) } : {}), metrics: undefined };
      if (level === "customer") row.metrics = sum(0, G * A, d0, d1);
      else if (level === "campaign") { row.campaign = campaignObj(e); row.metrics = sum(...adsOfCampaign(e), d0, d1); }
      else if (level === "ad_group") { row.ad_group = groupObj(e); row.campaign = campaignObj(campaignOf(e)); row.metrics = sum(...adsOfGroup(e), d0, d1); }
      else { const grp = Math.floor(e / A); row.ad_group_ad = adObj(e); row.ad_group = groupObj(grp); row.campaign = campaignObj(campaignOf(grp)); row.metrics = sum(e, e + 1, d0, d1); }
      return row;
    };
    return { count, at };
  }

  const handle: GeneratedStats = {
    customerId: cid, campaignId: ids.campaign, adGroupId: ids.adGroup, adId: ids.ad, from: dateOf(start), to: dateOf(start + days - 1),
    expected(o = {}) {
      // Straight from the formula, one ad-day at a time (independent of the paging above).
      const d0 = Math.max(0, o.from ? dayOf(o.from) - start : 0), d1 = Math.min(days - 1, o.to ? dayOf(o.to) - start : days - 1);
      const grps = o.adGroupIds ? [...new Set(o.adGroupIds.map((id) => indexOf(GEN_AD_GROUP_BASE, G, id)).filter((x) => x >= 0))] : null;
      const groupList = grps ?? Array.from({ length: G }, (_, k) => k);
      let impressions = 0, clicks = 0, cost = 0n, conversions = 0;
      for (const grp of groupList) for (let a = grp * A; a < grp * A + A; a++) for (let d = d0; d <= d1; d++) {
        const m = generatedAdDay(a, d);
        impressions += m.impressions; clicks += m.clicks; cost += BigInt(m.costMicros); conversions += m.conversions;
      }
      const nd = Math.max(0, d1 - d0 + 1);
      const level = o.level ?? "ad_group";
      const entities = level === "ad" ? groupList.length * A : level === "ad_group" ? groupList.length : new Set(groupList.map(campaignOf)).size;
      const rows = nd === 0 ? 0 : (o.granularity ?? "day") === "day" ? entities * nd : entities;
      return { rows, impressions, clicks, costMicros: cost.toString(), conversions };
    },
  };
  return { table, handle };
}

// ---- the server --------------------------------------------------------------------------------------------------

export async function startGoogleAdsServer(opts: GoogleAdsServerOptions = {}): Promise<GoogleAdsServer> {
  const version = opts.version ?? 25;
  const tokens = new Map<string, { testLevel: boolean; customers: Set<string> | null }>();
  const customers = new Map<string, AdsCustomer>();
  const campaigns = new Map<string, AdsCampaign>();
  const adGroups = new Map<string, AdsAdGroup>();
  const keywords = new Map<string, AdsKeyword>(); // by resource name, creation order
  const ads = new Map<string, AdsAd>();
  const stats = new Map<string, AdsStats>(); // by `${adId}|${date}`
  const generated = new Map<string, Generator>(); // by customer id
  const criterionIds = new Map<string, string>(); // (match type, normalized text) -> criterion id, as Google shares them
  const refused = new Set<string>();
  const refusedGroups = new Set<string>();
  let holdMs = 0;
  let searchDelayMs = 0;
  const requests: RecordedAdsRequest[] = [];
  let fault: { kind: AdsFault; n: number } = { kind: "INTERNAL", n: 0 };
  let opsToday = 0;
  let nextId = 1000;
  let nextCustomer = 0;
  const norm = (text: string) => text.trim().replace(/\s+/g, " ").toLowerCase();
  const criterionIdFor = (text: string, matchType: string) => {
    const key = `${matchType}|${norm(text)}`;
    if (!criterionIds.has(key)) criterionIds.set(key, String(300_000_000 + criterionIds.size * 7919 + 11));
    return criterionIds.get(key)!;
  };
  const failureType = `type.googleapis.com/google.ads.googleads.v${version}.errors.GoogleAdsFailure`;

  function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
    res.writeHead(status, { "content-type": "application/json; charset=UTF-8", ...headers });
    res.end(JSON.stringify(body, null, 2));
  }
  /** Writes a search answer, its rows a chunk at a time, waiting for the socket to drain between chunks. */
  async function streamAnswer(res: http.ServerResponse, answer: Record<string, unknown>, rows: LazyRows, pretty: boolean, headers: Record<string, string>) {
    res.writeHead(200, { "content-type": "application/json; charset=UTF-8", ...headers });
    const rest = { ...answer };
    delete rest.results;
    const tail = JSON.stringify(rest, null, pretty ? 2 : undefined).slice(1); // "...}" after the results
    res.write(pretty ? `{\n  "results": [` : `{"results":[`);
    const CHUNK = 500;
    for (let i = rows.from; i < rows.to && !res.destroyed; i += CHUNK) {
      const parts: string[] = [];
      for (let j = i; j < Math.min(rows.to, i + CHUNK); j++) {
        const row = rows.row(j);
        parts.push(pretty ? `\n    ${JSON.stringify(row, null, 2).replace(/\n/g, "\n    ")}` : JSON.stringify(row));
      }
      if (!res.write((i > rows.from ? "," : "") + parts.join(","))) {
        await new Promise<void>((r) => { const done = () => { res.off("drain", done); res.off("close", done); r(); }; res.once("drain", done); res.once("close", done); });
      }
    }
    if (!res.destroyed) res.end(`${pretty ? "\n  ]" : "]"}${tail.length > 1 ? "," : ""}${tail}`);
  }
  function refusalBody(r: Refusal, requestId: string) {
    return { error: { code: r.status, message: r.message, status: r.grpc, ...(r.errors ? { details: [{ "@type": failureType, errors: r.errors, requestId }] } : {}) } };
  }

  function faultRefusal(kind: AdsFault): Refusal {
    switch (kind) {
      case "RESOURCE_TEMPORARILY_EXHAUSTED":
        return new Refusal(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota).", [{
          errorCode: { quotaError: "RESOURCE_TEMPORARILY_EXHAUSTED" }, message: "Too many requests. Retry in 5 seconds.",
          details: { quotaErrorDetails: { rateScope: "ACCOUNT", rateName: "Requests per service per method", retryDelay: "5s" } },
        }]);
      case "RESOURCE_EXHAUSTED": return dailyExhausted();
      case "INTERNAL": return new Refusal(500, "INTERNAL", "Internal error encountered.", [{ errorCode: { internalError: "INTERNAL_ERROR" }, message: "An internal error has occurred." }]);
      case "UNAVAILABLE": return new Refusal(503, "UNAVAILABLE", "The service is currently unavailable.", null);
    }
  }
  // The daily cap has no retry delay: the client must wait for the 24-hour window, not back off.
  const dailyExhausted = () => new Refusal(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota).", [{
    errorCode: { quotaError: "RESOURCE_EXHAUSTED" }, message: "Number of operations for this Cloud project's access level has been exceeded for today.",
    details: { quotaErrorDetails: { rateScope: "DEVELOPER", rateName: "Number of operations per day" } },
  }]);
  function countOperations(n: number) {
    if (opsToday + n > server.dailyOperationLimit) throw dailyExhausted();
    opsToday += n;
  }

  /** Checks the bearer token; returns its grant. */
  function authenticate(req: http.IncomingMessage) {
    const auth = req.headers.authorization;
    if (!auth) throw new Refusal(401, "UNAUTHENTICATED", `Request is missing required authentication credential. ${AUTH_HELP}`, null);
    const grant = tokens.get(/^Bearer (\S+)$/.exec(auth)?.[1] ?? "");
    if (!grant) throw new Refusal(401, "UNAUTHENTICATED", `Request had invalid authentication credentials. ${AUTH_HELP}`, [{ errorCode: { authenticationError: "OAUTH_TOKEN_INVALID" }, message: "OAuth token in the header is not valid." }]);
    return grant;
  }

  /** The checks of a customer-scoped call: header shapes, reach (directly or through the login manager), access level. */
  function authorize(req: http.IncomingMessage, grant: { testLevel: boolean; customers: Set<string> | null }, cid: string): AdsCustomer {
    const login = req.headers["login-customer-id"] as string | undefined;
    if (login !== undefined && !/^\d+$/.test(login)) throw invalid([{ errorCode: { headerError: "INVALID_LOGIN_CUSTOMER_ID" }, message: "The login customer ID could not be validated. Please send the ID without dashes." }]);
    if (!/^\d+$/.test(cid)) throw invalid([{ errorCode: { requestError: "INVALID_CUSTOMER_ID" }, message: "Customer id is invalid." }]);
    const customer = customers.get(cid);
    if (!customer) throw new Refusal(401, "UNAUTHENTICATED", "The caller does not have permission", [{ errorCode: { authenticationError: "CUSTOMER_NOT_FOUND" }, message: "No customer found for the provided customer id." }]);
    const reaches = (id: string) => !grant.customers || grant.customers.has(id);
    const ok = login === undefined ? reaches(cid) : reaches(login) && (login === cid || customer.managerId === login);
    if (!ok) throw new Refusal(403, "PERMISSION_DENIED", "The caller does not have permission", [{ errorCode: { authorizationError: "USER_PERMISSION_DENIED" }, message: "User doesn't have permission to access customer. Note: If you're accessing a client customer, the manager's customer id must be set in the 'login-customer-id' header." }]);
    if (grant.testLevel && !customer.testAccount) throw new Refusal(403, "PERMISSION_DENIED", "The caller does not have permission", [{ errorCode: { authorizationError: "CLOUD_PROJECT_NOT_APPROVED_FOR_PRODUCTION" }, message: "The Google Cloud project sending this request has Test access level and can only reach test accounts." }]);
    return customer;
  }

  function parseBody(raw: string, allowed: Set<string>): Record<string, any> {
    let body: any;
    try { body = raw ? JSON.parse(raw) : {}; } catch { throw new JsonRefusal("Invalid JSON payload received. Unexpected token."); }
    if (!body || typeof body !== "object" || Array.isArray(body)) throw new JsonRefusal("Invalid JSON payload received. Expected an object.");
    for (const k of Object.keys(body)) if (!allowed.has(k)) throw new JsonRefusal(`Invalid JSON payload received. Unknown name "${k}": Cannot find field.`);
    return body;
  }

  // ---- googleAds:search ----

  function rowsOf(cid: string, from: Res): Row[] {
    const customer = customers.get(cid)!;
    const camps = [...campaigns.values()].filter((c) => c.customerId === cid);
    const groups = [...adGroups.values()].filter((g) => g.customerId === cid);
    switch (from) {
      case "customer": return [{ customer }];
      case "campaign": return camps.map((campaign) => ({ customer, campaign }));
      case "ad_group": return groups.map((ad_group) => ({ customer, ad_group, campaign: campaigns.get(ad_group.campaignId) }));
      case "ad_group_criterion": return [...keywords.values()].filter((k) => k.customerId === cid).map((k) => {
        const ad_group = adGroups.get(k.adGroupId)!;
        return { customer, ad_group, campaign: campaigns.get(ad_group.campaignId), ad_group_criterion: k };
      });
      case "ad_group_ad": return [...ads.values()].filter((a) => a.customerId === cid)
        .map((ad_group_ad) => ({ customer, ad_group_ad, ad_group: adGroups.get(ad_group_ad.adGroupId), campaign: campaigns.get(ad_group_ad.campaignId) }));
    }
  }

  /** Report-query checks Google makes before running it: date literals, and a finite range when segmenting by date. */
  function checkReportQuery(q: Query) {
    const dateConds = q.where.filter((c) => c.field === "segments.date");
    for (const c of dateConds) for (const v of c.values) {
      // approximate code: Google names the bad literal in a queryError
      if (!validDate(v)) throw invalid([{ errorCode: { queryError: "BAD_VALUE_IN_WHERE_CLAUSE" }, message: `Error in query: invalid date '${v}' (expected YYYY-MM-DD).` }]);
    }
    const finite = dateConds.some((c) => ["=", "IN", "BETWEEN"].includes(c.op))
      || (dateConds.some((c) => c.op === ">" || c.op === ">=") && dateConds.some((c) => c.op === "<" || c.op === "<="));
    if (q.fields.includes("segments.date") && !finite) throw invalid([{ errorCode: { queryError: "EXPECTED_FILTERS_ON_DATE_RANGE" }, message: "Error in query: a finite date range filter on segments.date is required when it is selected." }]);
  }

  /** A seeded customer's report rows: stats rows filtered, then summed per FROM entity (and date when selected). */
  function reportRows(cid: string, q: Query): Row[] {
    const customer = customers.get(cid)!;
    const byDate = q.fields.includes("segments.date");
    const metricConds = q.where.filter((c) => c.field.startsWith("metrics."));
    const rowConds = q.where.filter((c) => !c.field.startsWith("metrics."));
    const out = new Map<string, Row>();
    for (const s of stats.values()) {
      const ad = ads.get(s.adId)!;
      if (ad.customerId !== cid) continue;
      const ad_group = adGroups.get(ad.adGroupId)!;
      const campaign = campaigns.get(ad.campaignId)!;
      if (!rowConds.every((c) => matches(c, { customer, campaign, ad_group, ad_group_ad: ad, date: s.date }))) continue;
      const entity = q.from === "customer" ? cid : q.from === "campaign" ? campaign.id : q.from === "ad_group" ? ad_group.id : ad.id;
      const key = `${entity}|${byDate ? s.date : ""}`;
      let row = out.get(key);
      if (!row) {
        row = {
          customer, ...(q.from !== "customer" ? { campaign } : {}), ...(q.from === "ad_group" || q.from === "ad_group_ad" ? { ad_group } : {}),
          ...(q.from === "ad_group_ad" ? { ad_group_ad: ad } : {}), ...(byDate ? { date: s.date } : {}),
          metrics: { impressions: 0, clicks: 0, costMicros: 0n, conversions: 0 },
        };
        out.set(key, row);
      }
      const m = row.metrics!;
      m.impressions += s.impressions; m.clicks += s.clicks; m.costMicros += s.costMicros; m.conversions += s.conversions;
    }
    return [...out.values()].filter((r) => metricConds.every((c) => matches(c, r)));
  }

  function search(cid: string, body: Record<string, any>) {
    if (typeof body.query !== "string" || !body.query.trim()) throw invalid([{ errorCode: { queryError: "QUERY_ERROR" }, message: "Error in query: the query is empty." }]);
    if (body.pageSize !== undefined && body.pageSize !== 0) throw invalid([{ errorCode: { requestError: "PAGE_SIZE_NOT_SUPPORTED" }, message: "Setting the page size is not supported. Search Responses will have fixed page size of '10000' rows." }]);
    let q: Query;
    try { q = parseQuery(body.query); } catch (e) {
      if (e instanceof QueryError) throw invalid([{ errorCode: { queryError: e.code }, message: e.message }]);
      throw e;
    }
    const queryHash = crypto.createHash("sha256").update(`${cid}\n${body.query}`).digest("base64url").slice(0, 16);
    let offset = 0;
    if (body.pageToken !== undefined && body.pageToken !== "") {
      // Page tokens belong to one query of one customer: anything else is refused, not silently restarted.
      let tok: { q?: string; o?: number } = {};
      try { tok = JSON.parse(Buffer.from(String(body.pageToken), "base64url").toString("utf8")); } catch { /* refused below */ }
      if (tok.q !== queryHash || !Number.isInteger(tok.o)) throw invalid([{ errorCode: { requestError: "INVALID_PAGE_TOKEN" }, message: "Page token is invalid." }]);
      offset = tok.o!;
    }
    countOperations(1);
    const report = [...q.fields, ...q.where.map((c) => c.field), ...q.orderBy.map((o) => o.field)].some(isReportField);
    if (report) checkReportQuery(q);
    const gen = report ? generated.get(cid) : undefined;
    let table: { count: number; at(i: number): Row };
    if (gen) table = gen.table(q); // computed by index: nothing but the page is built
    else {
      let rows = report ? reportRows(cid, q) : rowsOf(cid, q.from).filter((row) => q.where.every((c) => matches(c, row)));
      // Stable order: ORDER BY when given, else by the resource's id (and date) (what Google effectively returns).
      const idField = q.from === "ad_group_criterion" ? "criterion_id" : q.from === "ad_group_ad" ? "ad.id" : "id";
      const keys = q.orderBy.length ? q.orderBy
        : [{ field: `${q.from}.${idField}`, desc: false }, ...(report && q.fields.includes("segments.date") ? [{ field: "segments.date", desc: false }] : [])];
      rows = rows.sort((a, b) => {
        for (const k of keys) {
          const cmp = compare(getter(k.field)(a), getter(k.field)(b));
          if (cmp) return k.desc ? -cmp : cmp;
        }
        return 0;
      });
      table = { count: rows.length, at: (i) => rows[i] };
    }
    const count = q.limit !== undefined ? Math.min(q.limit, table.count) : table.count;
    const end = Math.min(count, offset + server.pageSize);
    // Each selected field's place in the nested camelCase row, worked out once per query rather than per row.
    const plan = q.fields.map((f) => {
      const [res, ...path] = f.split(".");
      return { key: camel(res), rn: res === "segments" || res === "metrics" ? null : FIELDS[res as Res].resource_name, path: path.slice(0, -1).map(camel), leaf: camel(path[path.length - 1]), get: getter(f) };
    });
    const serialize = (i: number) => {
      const row = table.at(i);
      const out: Record<string, any> = {};
      for (const p of plan) {
        let at = (out[p.key] ??= p.rn ? { resourceName: p.rn(row) } : {});
        for (const k of p.path) at = at[k] ??= {};
        at[p.leaf] = p.get(row);
      }
      return out;
    };
    const answer: Record<string, unknown> = {};
    // proto3 JSON leaves an empty list out. Rows are built while the answer is written (see LazyRows).
    if (end > offset) answer.results = new LazyRows(offset, end, serialize);
    if (end < count) answer.nextPageToken = Buffer.from(JSON.stringify({ q: queryHash, o: end })).toString("base64url");
    answer.fieldMask = q.fields.map((f) => f.split(".").map(camel).join(".")).join(",");
    answer.queryResourceConsumption = String(1 + end - offset);
    return answer;
  }

  // ---- adGroupCriteria:mutate ----

  const KEYWORD_RN = /^customers\/(\d+)\/adGroupCriteria\/(\d+)~(\d+)$/;
  const CREATE_KEYS = new Set(["adGroup", "status", "keyword", "negative", "cpcBidMicros"]);
  const UPDATE_KEYS = new Set(["resourceName", "status", "keyword", "negative", "cpcBidMicros"]);

  /** JSON-level shape checks (what the REST transcoder refuses for the whole request, before any operation runs). */
  function checkShape(ops: unknown) {
    if (!Array.isArray(ops)) throw new JsonRefusal("Invalid value at 'operations': expected a list.");
    ops.forEach((op: any, i) => {
      if (!op || typeof op !== "object") throw new JsonRefusal(`Invalid value at 'operations[${i}]': expected an object.`);
      for (const k of Object.keys(op)) if (!["create", "update", "remove", "updateMask", "exemptPolicyViolationKeys"].includes(k)) throw new JsonRefusal(`Invalid JSON payload received. Unknown name "${k}" at 'operations[${i}]': Cannot find field.`);
      const entity = op.create ?? op.update;
      if (entity && typeof entity === "object") {
        const keys = op.create ? CREATE_KEYS : UPDATE_KEYS;
        for (const k of Object.keys(entity)) if (!keys.has(k)) throw new JsonRefusal(`Invalid JSON payload received. Unknown name "${k}" at 'operations[${i}].${op.create ? "create" : "update"}': Cannot find field.`);
        if (entity.status !== undefined && !STATUS_ENUM.has(entity.status)) throw new JsonRefusal(`Invalid value at 'operations[${i}].${op.create ? "create" : "update"}.status' (type.googleapis.com/google.ads.googleads.v${version}.enums.AdGroupCriterionStatusEnum.AdGroupCriterionStatus), "${entity.status}"`);
        const mt = entity.keyword?.matchType;
        if (mt !== undefined && !MATCH_TYPE_ENUM.has(mt)) throw new JsonRefusal(`Invalid value at 'operations[${i}].${op.create ? "create" : "update"}.keyword.match_type' (type.googleapis.com/google.ads.googleads.v${version}.enums.KeywordMatchTypeEnum.KeywordMatchType), "${mt}"`);
      }
    });
  }

  function keywordTextErrors(text: unknown, i: number): AdsError[] {
    const loc = opPath(i, "create", "keyword", "text");
    if (typeof text !== "string" || !text.trim()) return [{ errorCode: { fieldError: "REQUIRED" }, message: "The required field was not present.", location: loc }];
    const trigger = { stringValue: text };
    const out: AdsError[] = [];
    if (text.length > MAX_KEYWORD_CHARS) out.push({ errorCode: { criterionError: "KEYWORD_TEXT_TOO_LONG" }, message: "Keyword text should be less than 80 characters.", trigger, location: loc });
    if (text.trim().split(/\s+/).length > MAX_KEYWORD_WORDS) out.push({ errorCode: { criterionError: "KEYWORD_HAS_TOO_MANY_WORDS" }, message: "Keyword text has too many words.", trigger, location: loc });
    if (FORBIDDEN_CHARS.test(text)) out.push({ errorCode: { criterionError: "KEYWORD_HAS_INVALID_CHARS" }, message: "Keyword text has invalid characters or symbols.", trigger, location: loc });
    if (!out.length && refused.has(norm(text))) out.push({
      errorCode: { policyFindingError: "POLICY_FINDING" }, message: "A policy was violated. See PolicyFindingDetails for more detail.", trigger, location: loc,
      details: { policyFindingDetails: { policyTopicEntries: [{ topic: "TRADEMARKS_IN_AD_TEXT", type: "PROHIBITED" }] } },
    });
    return out;
  }

  /** One operation against the working copy: its errors, or its result after applying it to `work`. */
  function applyOp(cid: string, op: any, i: number, work: Map<string, AdsKeyword>, full: boolean): { errors: AdsError[]; result?: Record<string, unknown> } {
    const kinds = ["create", "update", "remove"].filter((k) => op[k] !== undefined);
    if (kinds.length !== 1) return { errors: [{ errorCode: { requestError: "OPERATION_REQUIRED" }, message: "An operation must have exactly one of create, update or remove.", location: opPath(i) }] };
    const result = (k: AdsKeyword) => ({ resourceName: k.resourceName, ...(full ? { adGroupCriterion: publicKeyword(k) } : {}) });
    if (op.create !== undefined) {
      const c = op.create;
      const m = /^customers\/(\d+)\/adGroups\/(\d+)$/.exec(String(c.adGroup ?? ""));
      if (c.adGroup === undefined) return { errors: [{ errorCode: { fieldError: "REQUIRED" }, message: "The required field was not present.", location: opPath(i, "create", "ad_group") }] };
      if (!m) return { errors: [{ errorCode: { requestError: "RESOURCE_NAME_MALFORMED" }, message: "Resource name is malformed.", trigger: { stringValue: String(c.adGroup) }, location: opPath(i, "create", "ad_group") }] };
      const group = adGroups.get(m[2]);
      if (m[1] !== cid || !group || group.customerId !== cid || group.status === "REMOVED") return { errors: [{ errorCode: { mutateError: "RESOURCE_NOT_FOUND" }, message: "Resource was not found.", trigger: { stringValue: c.adGroup }, location: opPath(i, "create", "ad_group") }] };
      if (!c.keyword || typeof c.keyword !== "object") return { errors: [{ errorCode: { fieldError: "REQUIRED" }, message: "The required field was not present.", location: opPath(i, "create", "keyword") }] };
      const errors = keywordTextErrors(c.keyword.text, i);
      if (refusedGroups.has(group.id)) errors.push({ errorCode: { criterionError: "CANNOT_ADD_CRITERIA_TYPE" }, message: "Criteria type can not be targeted for the ad group.", location: opPath(i, "create", "ad_group") });
      if (c.keyword.matchType === undefined) errors.push({ errorCode: { fieldError: "REQUIRED" }, message: "The required field was not present.", location: opPath(i, "create", "keyword", "match_type") });
      else if (!MATCH_TYPES.has(c.keyword.matchType)) errors.push({ errorCode: { fieldError: "INVALID_VALUE" }, message: "The field's value is invalid.", location: opPath(i, "create", "keyword", "match_type") });
      if (c.status === "REMOVED" || c.status === "UNSPECIFIED" || c.status === "UNKNOWN") errors.push({ errorCode: { fieldError: "INVALID_VALUE" }, message: "The field's value is invalid.", location: opPath(i, "create", "status") });
      if (c.negative !== undefined && typeof c.negative !== "boolean") errors.push({ errorCode: { fieldError: "INVALID_VALUE" }, message: "The field's value is invalid.", location: opPath(i, "create", "negative") });
      if (errors.length) return { errors };
      const critId = criterionIdFor(c.keyword.text, c.keyword.matchType);
      const resourceName = `customers/${cid}/adGroupCriteria/${group.id}~${critId}`;
      const existing = work.get(resourceName);
      // Same text and match type in the same ad group is the same criterion: a live one already exists.
      if (existing && existing.status !== "REMOVED") return { errors: [{ errorCode: { mutateError: "RESOURCE_ALREADY_EXISTS" }, message: "The resource being created already exists.", trigger: { stringValue: c.keyword.text }, location: opPath(i, "create", "keyword", "text") }] };
      const k: AdsKeyword = { resourceName, customerId: cid, adGroupId: group.id, criterionId: critId, text: c.keyword.text.trim().replace(/\s+/g, " "), matchType: c.keyword.matchType, status: c.status ?? "ENABLED", negative: c.negative ?? false };
      work.set(resourceName, k);
      return { errors: [], result: result(k) };
    }
    if (op.remove !== undefined) {
      if (typeof op.remove !== "string" || !KEYWORD_RN.test(op.remove)) return { errors: [{ errorCode: { requestError: "RESOURCE_NAME_MALFORMED" }, message: "Resource name is malformed.", trigger: { stringValue: String(op.remove) }, location: opPath(i, "remove") }] };
      const k = work.get(op.remove);
      if (!k || k.customerId !== cid || k.status === "REMOVED") return { errors: [{ errorCode: { mutateError: "RESOURCE_NOT_FOUND" }, message: "Resource was not found.", trigger: { stringValue: op.remove }, location: opPath(i, "remove") }] };
      work.set(op.remove, { ...k, status: "REMOVED" });
      return { errors: [], result: { resourceName: op.remove } };
    }
    const u = op.update;
    if (!u || typeof u !== "object" || typeof u.resourceName !== "string") return { errors: [{ errorCode: { fieldError: "REQUIRED" }, message: "The required field was not present.", location: opPath(i, "update", "resource_name") }] };
    if (!KEYWORD_RN.test(u.resourceName)) return { errors: [{ errorCode: { requestError: "RESOURCE_NAME_MALFORMED" }, message: "Resource name is malformed.", trigger: { stringValue: u.resourceName }, location: opPath(i, "update", "resource_name") }] };
    if (typeof op.updateMask !== "string" || !op.updateMask) return { errors: [{ errorCode: { fieldMaskError: "FIELD_MASK_MISSING" }, message: "The field mask must be provided for update operations.", location: opPath(i, "update_mask") }] };
    const k = work.get(u.resourceName);
    if (!k || k.customerId !== cid || k.status === "REMOVED") return { errors: [{ errorCode: { mutateError: "RESOURCE_NOT_FOUND" }, message: "Resource was not found.", trigger: { stringValue: u.resourceName }, location: opPath(i, "update") }] };
    if (k.negative) return { errors: [{ errorCode: { adGroupCriterionError: "CANT_UPDATE_NEGATIVE" }, message: "Negative ad group criteria are not updateable.", location: opPath(i, "update") }] };
    const next = { ...k };
    for (const path of op.updateMask.split(",").map((s: string) => s.trim())) {
      if (path === "status") {
        if (u.status !== "ENABLED" && u.status !== "PAUSED") return { errors: [{ errorCode: { fieldError: "INVALID_VALUE" }, message: "The field's value is invalid.", location: opPath(i, "update", "status") }] };
        next.status = u.status;
      } else if (["keyword", "keyword.text", "keyword.matchType", "keyword.match_type", "negative", "adGroup", "ad_group"].includes(path)) {
        // Keyword text and match type are part of the criterion's identity: change means remove + create.
        return { errors: [{ errorCode: { fieldError: "IMMUTABLE_FIELD" }, message: "The field cannot be modified.", location: opPath(i, "update", ...path.split(".").map((p: string) => p.replace(/[A-Z]/g, (c) => "_" + c.toLowerCase()))) }] };
      } else if (path !== "cpcBidMicros" && path !== "cpc_bid_micros") {
        return { errors: [{ errorCode: { fieldMaskError: "FIELD_NOT_FOUND" }, message: "The field mask contained an invalid field.", trigger: { stringValue: path }, location: opPath(i, "update_mask") }] };
      }
    }
    work.set(k.resourceName, next);
    return { errors: [], result: result(next) };
  }

  function mutate(cid: string, body: Record<string, any>) {
    checkShape(body.operations);
    const ops: any[] = body.operations;
    if (!ops.length) throw invalid([{ errorCode: { fieldError: "REQUIRED_NONEMPTY_LIST" }, message: "The field must contain at least one element.", location: { fieldPathElements: [{ fieldName: "operations" }] } }]);
    if (ops.length > MAX_OPERATIONS) throw invalid([{ errorCode: { requestError: "TOO_MANY_MUTATE_OPERATIONS" }, message: "Too many mutate operations in one request.", location: { fieldPathElements: [{ fieldName: "operations" }] } }]);
    const rct = body.responseContentType ?? "RESOURCE_NAME_ONLY";
    if (!["RESOURCE_NAME_ONLY", "MUTABLE_RESOURCE", "UNSPECIFIED"].includes(rct)) throw new JsonRefusal(`Invalid value at 'response_content_type' (type.googleapis.com/google.ads.googleads.v${version}.enums.ResponseContentTypeEnum.ResponseContentType), "${rct}"`);
    countOperations(ops.length); // every operation sent counts, whatever becomes of it
    const work = new Map([...keywords].map(([k, v]) => [k, { ...v }]));
    const errors: AdsError[] = [];
    const results = ops.map((op, i) => {
      const r = applyOp(cid, op, i, work, rct === "MUTABLE_RESOURCE");
      errors.push(...r.errors);
      return r.result ?? {};
    });
    // validateOnly and all-or-nothing both refuse the whole request on any error; nothing is applied.
    if (errors.length && (body.validateOnly || !body.partialFailure)) throw invalid(errors);
    if (body.validateOnly) return {};
    for (const [name, k] of work) {
      const live = keywords.get(name);
      if (live) Object.assign(live, k); else keywords.set(name, k);
    }
    if (!errors.length) return { results };
    const first = errors[0];
    const at = first.location?.fieldPathElements.map((e) => e.index !== undefined ? `${e.fieldName}[${e.index}]` : e.fieldName).join(".");
    return {
      results,
      partialFailureError: {
        code: 3,
        message: `${errors.length > 1 ? "Multiple errors in ‘details’. First error: " : ""}${first.message}${at ? `, at ${at}` : ""}`,
        details: [{ "@type": failureType, errors, requestId: "" }],
      },
    };
  }

  const publicKeyword = (k: AdsKeyword) => ({
    resourceName: k.resourceName, criterionId: k.criterionId, adGroup: `customers/${k.customerId}/adGroups/${k.adGroupId}`,
    status: k.status, negative: k.negative, type: "KEYWORD", keyword: { text: k.text, matchType: k.matchType },
  });

  // ---- routing ----

  const srv = bodyServer(async (req, res, url, raw) => {
    const requestId = crypto.randomBytes(16).toString("base64url").slice(0, 22);
    const headers = { ...req.headers };
    delete headers.authorization;
    let parsed: any = raw;
    try { parsed = raw ? JSON.parse(raw) : undefined; } catch { /* recorded raw */ }
    const rec: RecordedAdsRequest = { method: req.method ?? "GET", path: url.pathname, query: url.search, headers, body: parsed, status: 0, requestId, at: new Date() };
    requests.push(rec);
    const reply = (status: number, body: unknown, extra: Record<string, string> = {}) => { rec.status = status; send(res, status, body, { "request-id": requestId, ...extra }); };
    const notFound = () => {
      rec.status = 404;
      res.writeHead(404, { "content-type": "text/html; charset=UTF-8", "request-id": requestId });
      res.end(`<!DOCTYPE html>\n<html lang=en><title>Error 404 (Not Found)!!1</title><p><b>404.</b> <ins>That’s an error.</ins><p>The requested URL <code>${url.pathname.replace(/[<>&]/g, "")}</code> was not found on this server. <ins>That’s all we know.</ins>`);
    };

    const prefix = `/v${version}/`;
    if (!url.pathname.startsWith(prefix)) return notFound();
    const rest = url.pathname.slice(prefix.length);
    const route = req.method === "GET" && rest === "customers:listAccessibleCustomers" ? { kind: "list" as const, cid: "" }
      : req.method === "POST" && /^customers\/([^/]+)\/googleAds:search$/.test(rest) ? { kind: "search" as const, cid: /^customers\/([^/]+)\//.exec(rest)![1] }
      : req.method === "POST" && /^customers\/([^/]+)\/adGroupCriteria:mutate$/.test(rest) ? { kind: "mutate" as const, cid: /^customers\/([^/]+)\//.exec(rest)![1] }
      : null;
    if (!route) return notFound();
    try {
      const grant = authenticate(req);
      if (route.kind !== "list") authorize(req, grant, route.cid);
      if (fault.n > 0) { fault.n--; throw faultRefusal(fault.kind); }
      if (route.kind === "list") {
        const ids = [...customers.keys()].filter((id) => !grant.customers || grant.customers.has(id));
        return reply(200, ids.length ? { resourceNames: ids.map((id) => `customers/${id}`) } : {});
      }
      if (route.kind === "search") {
        if (searchDelayMs > 0) await new Promise((r) => setTimeout(r, searchDelayMs));
        if (res.destroyed) return;
        const answer = search(route.cid, parseBody(raw, new Set(["query", "pageToken", "pageSize", "validateOnly", "returnTotalResultsCount", "summaryRowSetting", "searchSettings"])));
        if (!(answer.results instanceof LazyRows)) return reply(200, answer);
        rec.status = 200;
        // Google's `prettyPrint` system parameter (default true) decides the indentation, as on every Google REST API.
        return void streamAnswer(res, answer, answer.results, url.searchParams.get("prettyPrint") !== "false", { "request-id": requestId });
      }
      const answer: any = mutate(route.cid, parseBody(raw, new Set(["operations", "partialFailure", "validateOnly", "responseContentType"])));
      if (answer.partialFailureError) answer.partialFailureError.details[0].requestId = requestId;
      if (holdMs > 0 && !rec.body?.validateOnly) { setTimeout(() => { if (!res.destroyed) reply(200, answer); }, holdMs); return; }
      return reply(200, answer);
    } catch (e) {
      if (e instanceof Refusal) return reply(e.status, refusalBody(e, requestId), e.headers);
      if (e instanceof JsonRefusal) return reply(400, { error: { code: 400, message: e.description, status: "INVALID_ARGUMENT", details: [{ "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: [{ description: e.description }] }] } });
      return reply(500, { error: { code: 500, message: String((e as Error)?.message ?? e), status: "INTERNAL" } });
    }
  });

  const base = await listenLocal(srv, opts.port);
  const server: GoogleAdsServer = {
    faults: peerFaults(srv, (m, url, body) => m === "POST" && url.pathname.endsWith(":mutate") && !/"validateOnly"\s*:\s*true/.test(body)),
    url: base, version, requests, dailyOperationLimit: opts.dailyOperationLimit ?? 15_000, pageSize: opts.pageSize ?? 10_000,
    addToken(token, o = {}) { tokens.set(token, { testLevel: o.testLevel ?? false, customers: o.customers ? new Set(o.customers) : null }); },
    revokeToken(token) { tokens.delete(token); },
    addCustomer(c = {}) {
      const id = c.id ?? String(1_000_000_000 + ++nextCustomer * 1_234_567);
      const customer: AdsCustomer = { id, descriptiveName: c.descriptiveName ?? `Customer ${id}`, currencyCode: c.currencyCode ?? "USD", timeZone: c.timeZone ?? "America/New_York", testAccount: c.testAccount ?? false, manager: c.manager ?? false, ...(c.managerId ? { managerId: c.managerId } : {}) };
      customers.set(id, customer);
      return customer;
    },
    addCampaign(c) {
      if (!customers.has(c.customerId)) throw new Error(`unknown customer ${c.customerId}`);
      const campaign: AdsCampaign = { customerId: c.customerId, id: c.id ?? String(++nextId), name: c.name, status: c.status ?? "ENABLED", advertisingChannelType: c.advertisingChannelType ?? "SEARCH" };
      campaigns.set(campaign.id, campaign);
      return campaign;
    },
    addAdGroup(g) {
      const campaign = campaigns.get(g.campaignId);
      if (!campaign) throw new Error(`unknown campaign ${g.campaignId}`);
      const group: AdsAdGroup = { customerId: campaign.customerId, campaignId: campaign.id, id: g.id ?? String(++nextId), name: g.name, status: g.status ?? "ENABLED" };
      adGroups.set(group.id, group);
      return group;
    },
    addKeyword(k) {
      const group = adGroups.get(k.adGroupId);
      if (!group) throw new Error(`unknown ad group ${k.adGroupId}`);
      const matchType = k.matchType ?? "BROAD";
      const criterionId = criterionIdFor(k.text, matchType);
      const kw: AdsKeyword = { resourceName: `customers/${group.customerId}/adGroupCriteria/${group.id}~${criterionId}`, customerId: group.customerId, adGroupId: group.id, criterionId, text: k.text, matchType, status: k.status ?? "ENABLED", negative: k.negative ?? false };
      const live = keywords.get(kw.resourceName);
      if (live) { Object.assign(live, kw); return live; }
      keywords.set(kw.resourceName, kw);
      return kw;
    },
    keywordsOf(adGroupId, o = {}) { return [...keywords.values()].filter((k) => k.adGroupId === adGroupId && (o.includeRemoved || k.status !== "REMOVED")).map((k) => ({ ...k })); },
    keyword(resourceName) { return keywords.get(resourceName); },
    failNext(kind, n = 1) { fault = { kind, n }; },
    refuseText(text) { refused.add(norm(text)); },
    refuseAdGroup(adGroupId) { refusedGroups.add(adGroupId); },
    holdWrites(ms) { holdMs = ms; },
    slowSearches(ms) { searchDelayMs = ms; },
    addAd(a) {
      const group = adGroups.get(a.adGroupId);
      if (!group) throw new Error(`unknown ad group ${a.adGroupId}`);
      const ad: AdsAd = { customerId: group.customerId, campaignId: group.campaignId, adGroupId: group.id, id: a.id ?? String(++nextId), ...(a.name !== undefined ? { name: a.name } : {}), type: a.type ?? "RESPONSIVE_SEARCH_AD", status: a.status ?? "ENABLED" };
      ads.set(ad.id, ad);
      return ad;
    },
    addStats(s) {
      if (!validDate(s.date)) throw new Error(`date ${s.date}: YYYY-MM-DD expected`);
      let adId = s.adId;
      if (!adId) {
        if (!s.adGroupId || !adGroups.has(s.adGroupId)) throw new Error(`addStats needs adId or a known adGroupId`);
        adId = [...ads.values()].find((a) => a.adGroupId === s.adGroupId)?.id ?? server.addAd({ adGroupId: s.adGroupId }).id;
      }
      if (!ads.has(adId)) throw new Error(`unknown ad ${adId}`);
      const row: AdsStats = { adId, date: s.date, impressions: s.impressions, clicks: s.clicks, costMicros: BigInt(s.costMicros), conversions: s.conversions ?? 0 };
      stats.set(`${adId}|${s.date}`, row);
      return row;
    },
    generateStats(g) {
      if (!customers.has(g.customerId)) throw new Error(`unknown customer ${g.customerId}`);
      const gen = makeGenerator(customers.get(g.customerId)!, g);
      generated.set(g.customerId, gen);
      return gen.handle;
    },
    operationsToday: () => opsToday,
    resetDay() { opsToday = 0; },
    close: () => new Promise((r) => { srv.closeAllConnections(); srv.close(() => r()); }),
  };
  return server;
}
