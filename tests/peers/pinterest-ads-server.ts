import crypto from "node:crypto";
import Ajv, { type ValidateFunction } from "ajv-draft-04";
import { authorizeEndpoint } from "./consent-page.ts";
import { bodyServer, listenLocal, type StandInOptions } from "./listen.ts";
import { peerFaults, type PeerFaults } from "./faults.ts";
import { readVendorSpec, vendorSpecFile } from "./vendor-spec-file.ts";

// A local stand-in for Pinterest API v5, checked against Pinterest's own published API
// description (pinterest/api-description v5.23.0, MIT; the operations served here, tests/peers/vendor-specs/): every
// request it receives and every answer it gives are validated against that document (PinterestSpec below) and any
// mismatch is recorded in `specViolations`, which tests assert empty. Strict where a connector could get it wrong:
// - Paths under `/v5`. `Authorization: Bearer` on the API; missing, unknown or expired: 401 `{code:2,"Authentication
//   failed."}`; a token without `ads:write` on a write: 401 `{code:3, ...sufficient permissions...}` (both from the
//   description's examples). An ad account the token cannot see: 403 `{code:29}`.
// - OAuth `POST /v5/oauth/token`: HTTP Basic client authentication only (`security: basic`), form body,
//   `authorization_code` and `refresh_token` grants. Access tokens ~30 days. Refresh tokens are
//   "continuous" (the description: 60-day refresh tokens, refreshable indefinitely, default for apps since Sep 2025;
//   older apps send `continuous_refresh=true`): each refresh returns a NEW refresh token and the used one stops
//   working, so a client must keep the new one. (The "~1-year refresh token" some summaries cite is the retired legacy kind.)
// - `GET /ad_accounts` (bookmark paging): the ad accounts the token may use.
// - Reads: campaigns and ad groups of an ad account (`bookmark` + `page_size` paging, default 25, max 250,
//   `entity_statuses` default ACTIVE,PAUSED), ad-group keywords (`ad_group_id`; archived ones are gone), the INTEREST
//   targeting options (`GET /resources/targeting/INTEREST`: `[{ "<id>": "<name>", ... }]`, as the description's sample).
// - Writes: `PATCH /ad_accounts/{id}/ad_groups` takes 1-30 ad groups; each item's fields replace the stored ones and
//   `targeting_spec` is replaced WHOLE; the answer is `{items:[{data}|{exceptions}]}` aligned with
//   the input, HTTP 200 even when items fail. Keywords: `POST .../keywords` `{parent_id, keywords}` ->
//   `{keywords, errors:[{data, error_messages}]}`; `PATCH .../keywords` archives by id. Budget and bid fields are
//   accepted (Pinterest would) and recorded in `budgetWrites`, so tests can prove the connector never sends them.
//   Failed keywords come back with only the fields the description's Keyword schema allows (its prose example shows
//   `null`s the schema forbids).
// - Audience sizing (`POST /ad_accounts/{id}/ad_groups/audience_sizing`, in the description):
//   a rough model (people per LOCATION country or GEO region, narrowed by ages and genders, and by INTEREST to the
//   share of people the listed interests reach: no INTEREST is all interests), refusing a spec Pinterest would refuse.
// - Every answer carries `x-pinterest-rid` (Pinterest's request id, as Pinterest's responses carry it)
//   and, on the API, Envoy's rate-limit headers `x-ratelimit-limit: <n>, <n>;w=<window s>`, `x-ratelimit-remaining`,
//   `x-ratelimit-reset` (seconds); a throttle is a 429 `{code:8}` with `x-envoy-ratelimited` (the body from the
//   description; the headers as integrators observed them, e.g. airbytehq/airbyte#16161: reset in seconds, a daily
//   cap's reset many hours away). Limits are per category, the one the description names (`x-ratelimit-category`).
// - Faults: the next n API calls (optionally of one category) are throttled per minute, or hit the Trial tier's
//   1,000-a-day cap, or fail with a 500.
// - Reporting: the ad account (`GET /ad_accounts/{id}`: its `currency`; Pinterest's AdAccount has no time
//   zone field), its ads (`GET .../ads`, bookmark paging), the sync analytics of campaigns, ad groups and ads
//   (`GET .../{campaigns|ad_groups|ads}/analytics`: ids required, 1-250 of them; `columns` comma-separated
//   (`explode: false`); `start_date`/`end_date` UTC days, at most 90 days back and 90 days long; one JSON array, no
//   paging; rows whose metrics are all 0 are left out and a metric without value is not returned), and the async
//   reports (`POST .../reports` -> token; `GET .../reports?token=` IN_PROGRESS until the job is done, then FINISHED
//   with a `url` valid 5 minutes; up to 914 days back and 186 days long). Stats are seeded per ad and per UTC day in
//   Pinterest's own columns (`addStats`: IMPRESSION_1, CLICKTHROUGH_1, SPEND_IN_MICRO_DOLLAR in micro-units of the
//   account's currency, TOTAL_CONVERSIONS) and rolled up to ad groups and campaigns as Pinterest does. The download
//   is a pre-signed object-store URL outside the API (no Authorization header: S3 refuses a second auth mechanism);
//   the file's layout is approximate (the description does not describe it): CSV with the requested column names as
//   the header (DATE first for DAY), metrics zero-filled; JSON an object keyed by entity id, zero metrics left out.
// Exception codes and messages marked "approximate" are not from Pinterest's documentation.

export const PINTEREST_SPEC_FILE = vendorSpecFile("pinterest-v5.subset.json", "pinterest-v5.openapi.json");

// ---- the published description as a checker ------------------------------------------------------------------------

type Schema = Record<string, any>;
interface Op { template: string; method: string; op: Schema; pathParams: Record<string, string> }

const fixRefs = (x: unknown): unknown => {
  if (Array.isArray(x)) return x.map(fixRefs);
  if (!x || typeof x !== "object") return x;
  const o: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(x)) o[k] = k === "$ref" && typeof v === "string" && v.startsWith("#/") ? `pinterest${v}` : fixRefs(v);
  return o;
};

/**
 * Pinterest's OpenAPI 3.0 description as request and response checks, with ajv (draft-04, which OpenAPI 3.0's
 * schema objects extend; `nullable` is understood). Two things the document says in words rather than schema are
 * applied here: a `discriminator` picks the mapped schema (the OAuth token request and response), and form-style
 * query arrays are repeated keys (OpenAPI's default `explode: true`).
 */
export class PinterestSpec {
  readonly doc: Schema;
  private readonly ajv: Ajv;
  private readonly cache = new Map<string, ValidateFunction>();
  private readonly templates: { re: RegExp; names: string[]; template: string; literal: number }[];

  constructor(file: URL | string = PINTEREST_SPEC_FILE) {
    this.doc = readVendorSpec("Pinterest", file);
    this.ajv = new Ajv({ strict: false, allErrors: true, logger: false, unicodeRegExp: false, validateFormats: false });
    this.ajv.addSchema({ components: fixRefs(this.doc.components) }, "pinterest");
    this.templates = Object.keys(this.doc.paths).map((template) => {
      const names: string[] = [];
      const re = new RegExp(`^${template.replace(/\{([^}]+)\}/g, (_m, n) => { names.push(n); return "([^/]+)"; })}$`);
      return { re, names, template, literal: template.split("/").filter((s) => s && !s.startsWith("{")).length };
    }).sort((a, b) => b.literal - a.literal); // `/ad_groups/analytics` before `/ad_groups/{ad_group_id}`
  }

  /** The operation a request addresses (path below `/v5`), or null. */
  operation(method: string, apiPath: string): Op | null {
    for (const t of this.templates) {
      const m = t.re.exec(apiPath);
      const op = m && this.doc.paths[t.template][method.toLowerCase()];
      if (m && op) return { template: t.template, method: method.toUpperCase(), op, pathParams: Object.fromEntries(t.names.map((n, i) => [n, decodeURIComponent(m[i + 1])])) };
    }
    return null;
  }

  private deref(s: Schema): Schema {
    let x = s;
    for (let i = 0; x?.$ref && i < 20; i++) x = x.$ref.split("/").slice(1).reduce((o: any, k: string) => o[k], this.doc);
    return x;
  }

  private validate(schema: Schema, value: unknown, where: string): string[] {
    const key = JSON.stringify(schema);
    let v = this.cache.get(key);
    if (!v) { v = this.ajv.compile(fixRefs(schema) as object); this.cache.set(key, v); }
    const out = v(value) ? [] : (v.errors ?? []).map((e) => `${where}${e.instancePath} ${e.message}${e.params && "allowedValues" in e.params ? ` (${(e.params as any).allowedValues})` : ""}`);
    // A discriminator names the schema the value must also satisfy (ajv ignores the keyword without oneOf).
    const d = this.deref(schema);
    const mapped = d?.discriminator?.mapping?.[(value as any)?.[d.discriminator.propertyName]];
    if (mapped) out.push(...this.validate({ $ref: mapped }, value, where));
    return out;
  }

  private params(op: Op): Schema[] {
    const shared = this.doc.paths[op.template].parameters ?? [];
    return [...shared, ...(op.op.parameters ?? [])].map((p: Schema) => this.deref(p));
  }

  /** What is wrong with a request by the description ([] when nothing). `apiPath` is below `/v5`. */
  checkRequest(r: { method: string; apiPath: string; query: URLSearchParams; headers: Record<string, string | string[] | undefined>; body: string }): string[] {
    const op = this.operation(r.method, r.apiPath);
    if (!op) return [`${r.method} ${r.apiPath}: no such operation in the description`];
    const name = `${op.method} ${op.template}`;
    const out: string[] = [];
    const params = this.params(op);
    for (const p of params) {
      if (p.in === "path") out.push(...this.validate(p.schema, op.pathParams[p.name], `${name} path ${p.name}`));
      if (p.in !== "query") continue;
      // `explode: false` (the analytics `columns`) is one comma-separated value rather than repeated keys.
      const raw = p.explode === false ? r.query.getAll(p.name).flatMap((x) => x.split(",")) : r.query.getAll(p.name);
      if (!raw.length) { if (p.required) out.push(`${name}: query ${p.name} is required`); continue; }
      const coerce = (s: string, t: string | undefined) => (t === "integer" || t === "number" ? (/^-?\d+(\.\d+)?$/.test(s) ? Number(s) : s) : t === "boolean" ? (s === "true" ? true : s === "false" ? false : s) : s);
      const schema = this.deref(p.schema);
      const value = schema.type === "array" ? raw.map((s) => coerce(s, this.deref(schema.items ?? {}).type)) : raw.length > 1 ? raw : coerce(raw[0], schema.type);
      out.push(...this.validate(p.schema, value, `${name} query ${p.name}`));
    }
    const known = new Set(params.filter((p) => p.in === "query").map((p) => p.name));
    for (const k of new Set(r.query.keys())) if (!known.has(k)) out.push(`${name}: query ${k} is not a parameter of this operation`);
    // Security: which credentials the operation takes.
    const auth = String(r.headers.authorization ?? "");
    const schemes = new Set((op.op.security ?? this.doc.security ?? []).flatMap((s: Schema) => Object.keys(s)));
    const ok = (schemes.has("pinterest_oauth2") || schemes.has("client_credentials") || schemes.has("conversion_token")) && /^Bearer \S+$/.test(auth) || schemes.has("basic") && /^Basic \S+$/.test(auth);
    if (schemes.size && !ok) out.push(`${name}: credentials must be ${[...schemes].join(" or ")}`);
    const rb = op.op.requestBody && this.deref(op.op.requestBody);
    if (rb) {
      const type = String(r.headers["content-type"] ?? "").split(";")[0].trim();
      const media = rb.content?.[type];
      if (!r.body) { if (rb.required) out.push(`${name}: a request body is required`); }
      else if (!media) out.push(`${name}: content type ${type || "(none)"} is not one of ${Object.keys(rb.content ?? {}).join(", ")}`);
      else {
        let value: unknown;
        try { value = type === "application/json" ? JSON.parse(r.body) : Object.fromEntries(new URLSearchParams(r.body)); } catch { out.push(`${name}: the body is not ${type}`); }
        if (value !== undefined) out.push(...this.validate(media.schema, value, `${name} body`));
      }
    } else if (r.body) out.push(`${name}: this operation takes no body`);
    return out;
  }

  /** What is wrong with an answer by the description ([] when nothing). */
  checkResponse(r: { method: string; apiPath: string; status: number; body: unknown }): string[] {
    const op = this.operation(r.method, r.apiPath);
    if (!op) return [];
    const res = this.deref(op.op.responses?.[String(r.status)] ?? op.op.responses?.default ?? {});
    const schema = res.content?.["application/json"]?.schema;
    if (!res.description) return [`${op.method} ${op.template}: status ${r.status} is not described`];
    return schema ? this.validate(schema, r.body, `${op.method} ${op.template} -> ${r.status}`) : [];
  }

  /** The operation's rate-limit category (`x-ratelimit-category`). */
  category(method: string, apiPath: string): string | null {
    return this.operation(method, apiPath)?.op["x-ratelimit-category"] ?? null;
  }
}

let sharedSpec: PinterestSpec | null = null;
const specOnce = () => (sharedSpec ??= new PinterestSpec());

// ---- the stand-in --------------------------------------------------------------------------------------------------

export type PinterestFaultKind = "rate_limit" | "trial_cap" | "transient";

export interface PinterestCampaign { id: string; ad_account_id: string; name: string; status: string; objective_type: string; created_time: number; updated_time: number; type: "campaign" }
export interface PinterestAdGroup {
  id: string; ad_account_id: string; campaign_id: string; name: string; status: string; targeting_spec: Record<string, any>;
  budget_in_micro_currency: number | null; bid_in_micro_currency: number | null; budget_type: string; billable_event: string; auto_targeting_enabled: boolean;
  placement_group: string; pacing_delivery_type: string; start_time: number | null; end_time: number | null; summary_status: string; type: "adgroup";
  created_time: number; updated_time: number;
}
export interface PinterestAd {
  id: string; ad_account_id: string; ad_group_id: string; campaign_id: string; name: string; status: string; pin_id: string; creative_type: "REGULAR";
  review_status: "APPROVED"; type: "pinpromotion"; created_time: number; updated_time: number;
}
/** One ad's delivery on one UTC day, in Pinterest's reporting columns (spend in micro-units of the account currency). */
export interface PinterestStats { adId: string; date: string; [column: string]: number | string }
export type PinterestReportStatus = "FINISHED" | "FAILED" | "EXPIRED" | "CANCELLED";
export interface PinterestKeyword { id: string; parent_id: string; parent_type: "adgroup"; value: string; match_type: string; archived: boolean; bid: null; type: "keyword" }

export interface PinterestRequest {
  method: string;
  /** Path as sent (with /v5). */
  path: string;
  query: Record<string, string[]>;
  /** Parsed JSON body (form bodies: the form, secrets removed); null when empty. */
  body: unknown;
  status?: number;
  requestId: string;
  /** The rate-limit category of the operation, from the description. */
  category: string | null;
  at: number;
  throttled?: boolean;
}

export interface PinterestAdsServer {
  url: string;
  /** The consent page (PINTEREST_ADS_AUTHORIZE_URL, www.pinterest.com/oauth/): approving issues a code reaching every ad account. */
  authorizeUrl: string;
  tokenUrl: string;
  spec: PinterestSpec;
  app: { clientId: string; clientSecret: string };
  addToken(token: string, opts?: { expiresInS?: number; accounts?: string[]; scopes?: string[] }): void;
  expireToken(token: string): void;
  addCode(code: string, opts: { redirectUri: string; accounts?: string[] }): void;
  /** An ad account; `currency` ISO 4217 (default USD). */
  addAdAccount(a: { id: string; name: string; currency?: string; country?: string }): void;
  addAd(a: { adAccountId: string; adGroupId: string; name: string; id?: string; status?: string }): PinterestAd;
  /** Delivery stats of an ad on a UTC day, in Pinterest's columns (IMPRESSION_1, CLICKTHROUGH_1, SPEND_IN_MICRO_DOLLAR...). */
  addStats(s: PinterestStats): void;
  /** Async reports: how many polls answer IN_PROGRESS before the job ends (default 1), and how it ends (default FINISHED). */
  setReportJobs(o: { pollsBeforeDone?: number; outcome?: PinterestReportStatus }): void;
  /** The async report jobs submitted (their request bodies) and the downloads made. */
  reportJobs: { token: string; accountId: string; body: Record<string, any>; polls: number }[];
  downloads: { path: string; authorization: boolean; status: number }[];
  addCampaign(c: { adAccountId: string; name: string; id?: string; status?: string }): PinterestCampaign;
  addAdGroup(g: { adAccountId: string; campaignId: string; name: string; targetingSpec: Record<string, any>; id?: string; status?: string }): PinterestAdGroup;
  addKeyword(adGroupId: string, k: { value: string; matchType: string }): PinterestKeyword;
  /** An interest of the catalogue; `share` is the part of people it reaches (default 5%; 0 reaches no one). */
  addInterest(i: { id: string; name: string; share?: number }): void;
  adGroup(id: string): PinterestAdGroup | undefined;
  targetingOf(adGroupId: string): Record<string, any> | undefined;
  setTargeting(adGroupId: string, spec: Record<string, any>): void;
  /** Active (not archived) keywords of an ad group. */
  keywordsOf(adGroupId: string): PinterestKeyword[];
  /** Interest ids that writes refuse from now on (Pinterest retires interests). */
  refuseInterest(id: string): void;
  /** Real targeting writes to this ad group (its targeting_spec, or new keywords) are refused from now on. */
  refuseAdGroup(id: string): void;
  /** The next n API calls (of `category` only, when given) answer this fault; throttles report `resetS` (default 2). */
  failNext(kind: PinterestFaultKind, n: number, opts?: { resetS?: number; category?: string }): void;
  requests: PinterestRequest[];
  /** Token-endpoint requests: grant type and whether `continuous_refresh` was asked for (no secrets). */
  tokenRequests: { grant_type: string; continuous_refresh: string | null; basic: boolean }[];
  budgetWrites: { adGroupId: string; field: string; value: unknown }[];
  /** Requests or answers that do not match Pinterest's published description. */
  specViolations: string[];
  counts: { authorization_code: number; refresh_token: number; refused: number };
  resetLog(): void;
  /** Failures around a write, on request (faults.ts): its answer lost after it was applied, applied late, a restart. */
  faults: PeerFaults;
  close(): Promise<void>;
}

class ApiError extends Error {
  constructor(readonly status: number, readonly code: number, message: string, readonly headers: Record<string, string> = {}) { super(message); }
}

const SEED_INTERESTS: [string, string][] = [
  ["935249274030", "Home decor"], ["906810023155", "Gardening"], ["924581335376", "Women's fashion"], ["913432961838", "Travel"],
  ["949654813416", "Food and drinks"], ["937314658434", "Electronics"], ["939314234592", "Smart home"], ["959564437614", "Wedding"],
];
const WRITE_FIELDS_BUDGET = ["budget_in_micro_currency", "bid_in_micro_currency", "bid_multiplier", "lifetime_frequency_cap"];
const MATCH_TYPES = ["BROAD", "PHRASE", "EXACT", "EXACT_NEGATIVE", "PHRASE_NEGATIVE"];
const RATE_LIMIT_MESSAGE = "This request exceeded a rate limit. This can happen if the client exceeds one\nof the published rate limits within a short time window.";
/** Standard access per-minute limits by category (rate-limits page); anything else 1,000. */
const PER_MINUTE: Record<string, number> = { ads_read: 1000, ads_write: 400, ads_analytics: 300 };
const TOKEN_DAYS = 30;
/** Monthly Pinterest users per LOCATION country for audience sizing (others: 2M); a GEO region or postal code 400k. */
const COUNTRY_PEOPLE: Record<string, number> = { US: 95_000_000, GB: 14_000_000, CA: 11_000_000, DE: 13_000_000, FR: 12_000_000, AU: 6_000_000 };
const REFRESH_DAYS = 60;

const clone = <T>(v: T): T => structuredClone(v);
const now = () => Math.floor(Date.now() / 1000);
const numericId = () => `${crypto.randomInt(100_000, 999_999)}${crypto.randomInt(100_000, 999_999)}`;
/** Sync analytics: days back (UTC) and days long; async reports (non-HOUR): the description's limits. */
const SYNC_LOOKBACK_DAYS = 90;
const ASYNC_LOOKBACK_DAYS = 914;
const ASYNC_RANGE_DAYS = 186;
const DOWNLOAD_TTL_MS = 5 * 60_000;
const METRIC_COLUMNS = new Set(["IMPRESSION_1", "IMPRESSION_2", "TOTAL_IMPRESSION", "CLICKTHROUGH_1", "CLICKTHROUGH_2", "TOTAL_CLICKTHROUGH", "OUTBOUND_CLICK_1", "SPEND_IN_MICRO_DOLLAR", "TOTAL_CONVERSIONS"]);
const dayOf = (d: string) => Date.parse(`${d}T00:00:00Z`) / 86_400_000;
const todayUtc = () => Math.floor(Date.now() / 86_400_000);
const csvField = (v: unknown) => { const t = String(v ?? ""); return /[",\r\n]/.test(t) ? `"${t.replace(/"/g, '""')}"` : t; };
const bookmarkOf = (offset: number) => Buffer.from(JSON.stringify({ o: offset })).toString("base64url");

export async function startPinterestAdsServer(opts: StandInOptions = {}): Promise<PinterestAdsServer> {
  const spec = specOnce();
  const app = opts.app ?? { clientId: String(crypto.randomInt(1_000_000, 9_999_999)), clientSecret: crypto.randomBytes(20).toString("hex") };
  const tokens = new Map<string, { expiresAt: number; accounts: string[] | null; scopes: string[] }>();
  const refreshTokens = new Map<string, { expiresAt: number; accounts: string[] | null; scopes: string[] }>();
  const codes = new Map<string, { redirectUri: string; accounts: string[] | null; used: boolean }>();
  const accounts = new Map<string, { id: string; name: string; currency: string; country: string }>();
  const ads = new Map<string, PinterestAd>();
  const stats: PinterestStats[] = [];
  const reportJobs: PinterestAdsServer["reportJobs"] = [];
  const downloads: PinterestAdsServer["downloads"] = [];
  const jobs = new Map<string, { accountId: string; body: Record<string, any>; polls: number; pollsBeforeDone: number; outcome: PinterestReportStatus; url?: string; finishedAt?: number }>();
  let jobSettings: { pollsBeforeDone: number; outcome: PinterestReportStatus } = { pollsBeforeDone: 1, outcome: "FINISHED" };
  let base = "";
  const campaigns = new Map<string, PinterestCampaign>();
  const adGroups = new Map<string, PinterestAdGroup>();
  const keywords = new Map<string, PinterestKeyword>();
  const interests = new Map<string, string>(SEED_INTERESTS);
  const shares = new Map<string, number>();
  const refusedInterests = new Set<string>();
  const refusedAdGroups = new Set<string>();
  const requests: PinterestRequest[] = [];
  const tokenRequests: PinterestAdsServer["tokenRequests"] = [];
  const budgetWrites: PinterestAdsServer["budgetWrites"] = [];
  const specViolations: string[] = [];
  const counts = { authorization_code: 0, refresh_token: 0, refused: 0 };
  const used = new Map<string, number>(); // calls per category this minute (for x-ratelimit-remaining)
  let fault: { kind: PinterestFaultKind; n: number; resetS: number; category?: string } | null = null;

  // ---- helpers ---------------------------------------------------------------------------------------------------
  function page<T>(all: T[], q: URLSearchParams, max: number | null): { items: T[]; bookmark: string | null } {
    const size = q.has("page_size") ? Number(q.get("page_size")) : 25;
    if (!Number.isInteger(size) || size < 1 || (max !== null && size > max)) throw new ApiError(400, 1, "Invalid parameters."); // approximate
    let offset = 0;
    const b = q.get("bookmark");
    if (b) {
      try { offset = Number(JSON.parse(Buffer.from(b, "base64url").toString()).o); } catch { offset = NaN; }
      if (!Number.isInteger(offset) || offset < 0) throw new ApiError(400, 1, "Invalid bookmark."); // approximate
    }
    const items = all.slice(offset, offset + size);
    return { items, bookmark: offset + size < all.length ? bookmarkOf(offset + size) : null };
  }
  const statuses = (q: URLSearchParams) => (q.getAll("entity_statuses").length ? q.getAll("entity_statuses") : ["ACTIVE", "PAUSED"]);
  const ordered = <T extends { id: string }>(xs: T[], q: URLSearchParams) => {
    const s = [...xs].sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
    return q.get("order") === "DESCENDING" ? s.reverse() : s;
  };
  const activeKeywords = (adGroupId: string) => [...keywords.values()].filter((k) => k.parent_id === adGroupId && !k.archived);

  /** Pinterest's checks of a targeting spec (the description's rules; the messages are approximate). */
  function targetingProblem(ts: Record<string, any>): string | null {
    if (!ts || typeof ts !== "object" || Array.isArray(ts)) return "targeting_spec must be an object.";
    if (!(ts.LOCATION?.length || ts.GEO?.length)) return "Invalid targeting spec: at least one of LOCATION or GEO must be specified.";
    if ((ts.GEO ?? []).some((g: unknown) => !/^[A-Z]{2}-[A-Z0-9]+$/.test(String(g)))) return "Invalid targeting spec: GEO takes region codes (BE-VOV) or postal codes (US-94107).";
    if ((ts.MINIMUM_AGE === undefined) !== (ts.MAXIMUM_AGE === undefined)) return "Invalid targeting spec: MINIMUM_AGE must be used together with MAXIMUM_AGE.";
    if (ts.AGE_BUCKET?.length && ts.MINIMUM_AGE !== undefined) return "Invalid targeting spec: AGE_BUCKET cannot be combined with MINIMUM_AGE/MAXIMUM_AGE.";
    for (const id of ts.INTEREST ?? []) {
      if (!interests.has(String(id)) || refusedInterests.has(String(id))) return `Invalid targeting spec: interest ${id} is not a valid INTEREST targeting value.`;
    }
    return null;
  }

  /** People a targeting spec reaches a month, roughly: the model behind audience sizing. */
  function audience(ts: Record<string, any>): number {
    let people = (ts.LOCATION ?? []).reduce((n: number, c: string) => n + (COUNTRY_PEOPLE[c] ?? 2_000_000), 0) + (ts.GEO ?? []).length * 400_000;
    if (ts.MINIMUM_AGE !== undefined) people *= Math.max(1, (ts.MAXIMUM_AGE === "65+" ? 80 : Number(ts.MAXIMUM_AGE)) - Number(ts.MINIMUM_AGE) + 1) / 63;
    if (ts.GENDER?.length) people *= ts.GENDER.reduce((n: number, g: string) => n + (g === "female" ? 0.6 : g === "male" ? 0.3 : 0.1), 0);
    if (ts.INTEREST?.length) people *= Math.min(1, ts.INTEREST.reduce((n: number, id: string) => n + (shares.get(id) ?? 0.05), 0));
    return Math.round(people);
  }

  function patchAdGroups(accountId: string, body: unknown) {
    if (!Array.isArray(body) || body.length < 1 || body.length > 30) throw new ApiError(400, 1, "Invalid parameters: 1 to 30 ad groups per request."); // approximate
    return {
      items: body.map((item: Record<string, any>) => {
        const g = adGroups.get(String(item?.id));
        if (!g || g.ad_account_id !== accountId) return { exceptions: [{ code: 2, message: `Ad group ${item?.id} not found.` }] }; // approximate
        for (const f of WRITE_FIELDS_BUDGET) if (item[f] !== undefined) budgetWrites.push({ adGroupId: g.id, field: f, value: item[f] });
        if (item.targeting_spec !== undefined) {
          const problem = targetingProblem(item.targeting_spec);
          if (problem) return { exceptions: [{ code: 2663, message: problem }] }; // approximate code
          if (refusedAdGroups.has(g.id)) return { exceptions: [{ code: 2664, message: "Ad group cannot be edited while its ads are in review." }] }; // approximate
        }
        if (g.status === "ARCHIVED") return { exceptions: [{ code: 2665, message: "Archived ad groups cannot be updated." }] }; // approximate
        const { id: _id, ...fields } = item;
        Object.assign(g, clone(fields), { updated_time: now() });
        return { data: clone(g) };
      }),
    };
  }

  function createKeywords(accountId: string, body: Record<string, any>) {
    const parent = String(body?.parent_id ?? "").replace(/^AG/, "");
    const g = adGroups.get(parent);
    if (!g || g.ad_account_id !== accountId) throw new ApiError(404, 2, `Ad group ${body?.parent_id} not found.`); // approximate
    const created: PinterestKeyword[] = [];
    const errors: { data: Record<string, unknown>; error_messages: string[] }[] = [];
    for (const k of body.keywords as { value: string; match_type: string }[]) {
      const why = typeof k.value !== "string" || !k.value.trim() || k.value.length > 120 ? "Keyword value must be 1 to 120 characters."
        : !MATCH_TYPES.includes(k.match_type) ? "Invalid match type."
          : refusedAdGroups.has(g.id) && !k.match_type.endsWith("_NEGATIVE") ? "Ad group cannot be edited while its ads are in review."
            : activeKeywords(g.id).some((x) => x.value.toLowerCase() === k.value.toLowerCase() && x.match_type === k.match_type) ? "Keyword already exists." : null;
      if (why) { errors.push({ data: { match_type: MATCH_TYPES.includes(k.match_type) ? k.match_type : null, value: String(k.value ?? ""), type: "keyword" }, error_messages: [why] }); continue; }
      const kw: PinterestKeyword = { id: numericId(), parent_id: g.id, parent_type: "adgroup", value: k.value, match_type: k.match_type, archived: false, bid: null, type: "keyword" };
      keywords.set(kw.id, kw);
      created.push(clone(kw));
    }
    return { keywords: created, errors };
  }

  function updateKeywords(accountId: string, body: Record<string, any>) {
    const updated: PinterestKeyword[] = [];
    const errors: { data: Record<string, unknown>; error_messages: string[] }[] = [];
    for (const u of body.keywords as { id: string; archived?: boolean }[]) {
      const k = keywords.get(String(u.id));
      const g = k && adGroups.get(k.parent_id);
      if (!k || !g || g.ad_account_id !== accountId) { errors.push({ data: { id: String(u.id), match_type: null, value: "", type: "keyword" }, error_messages: ["Keyword not found."] }); continue; }
      if (typeof u.archived === "boolean") k.archived = u.archived;
      updated.push(clone(k));
    }
    return { keywords: updated, errors };
  }

  // ---- reporting ---------------------------------------------------------------------------------------------------
  type Level = "campaign" | "ad_group" | "ad";
  /** Rows as Pinterest reports them: the ads' stats rolled up to `level`, per UTC day (DAY) or over the range (TOTAL). */
  function statRows(accountId: string, level: Level, filter: { campaigns?: string[]; adGroups?: string[]; ads?: string[] }, start: string, end: string, granularity: string, columns: string[], zeroFill: boolean) {
    const key = (a: PinterestAd) => (level === "campaign" ? a.campaign_id : level === "ad_group" ? a.ad_group_id : a.id);
    const sums = new Map<string, { id: string; ad: PinterestAd; date: string | null; m: Record<string, number> }>();
    for (const st of stats) {
      const a = ads.get(st.adId);
      if (!a || a.ad_account_id !== accountId || st.date < start || st.date > end) continue;
      if ((filter.campaigns && !filter.campaigns.includes(a.campaign_id)) || (filter.adGroups && !filter.adGroups.includes(a.ad_group_id)) || (filter.ads && !filter.ads.includes(a.id))) continue;
      const date = granularity === "DAY" ? st.date : null;
      const k = `${key(a)}|${date ?? ""}`;
      const row = sums.get(k) ?? { id: key(a), ad: a, date, m: {} };
      for (const [c, v] of Object.entries(st)) if (METRIC_COLUMNS.has(c)) row.m[c] = (row.m[c] ?? 0) + Number(v);
      sums.set(k, row);
    }
    const idColumn = level === "campaign" ? "CAMPAIGN_ID" : level === "ad_group" ? "AD_GROUP_ID" : "AD_ID";
    return [...sums.values()].sort((a, b) => (a.id === b.id ? String(a.date).localeCompare(String(b.date)) : BigInt(a.id) < BigInt(b.id) ? -1 : 1))
      .filter((r) => columns.some((c) => METRIC_COLUMNS.has(c) && (r.m[c] ?? 0) !== 0)) // rows of zeros are left out
      .map((r) => {
        const out: Record<string, string | number> = { [idColumn]: r.id };
        if (r.date) out.DATE = r.date;
        const g = adGroups.get(r.ad.ad_group_id);
        const names: Record<string, string | undefined> = {
          CAMPAIGN_ID: r.ad.campaign_id, CAMPAIGN_NAME: campaigns.get(r.ad.campaign_id)?.name, AD_GROUP_ID: level === "campaign" ? undefined : r.ad.ad_group_id,
          AD_GROUP_NAME: level === "campaign" ? undefined : g?.name, AD_ID: level === "ad" ? r.ad.id : undefined, AD_NAME: level === "ad" ? r.ad.name : undefined,
          PIN_PROMOTION_ID: level === "ad" ? r.ad.id : undefined, PIN_PROMOTION_NAME: level === "ad" ? r.ad.name : undefined,
        };
        for (const c of columns) {
          if (METRIC_COLUMNS.has(c)) { const v = r.m[c] ?? 0; if (v !== 0 || zeroFill) out[c] = v; } // "a column with no value may not be returned"
          else if (names[c] !== undefined) out[c] = names[c]!;
        }
        return out;
      });
  }

  function syncAnalytics(accountId: string, what: string, q: URLSearchParams) {
    const level: Level = what.startsWith("campaigns") ? "campaign" : what.startsWith("ad_groups") ? "ad_group" : "ad";
    const refuse = () => new ApiError(400, 400, level === "campaign" ? "Invalid ad account campaign analytics parameters." : level === "ad_group" ? "Invalid ad account group analytics parameters." : "Invalid ad account ads analytics parameters.");
    const start = q.get("start_date") ?? "";
    const end = q.get("end_date") ?? "";
    const granularity = q.get("granularity") ?? "";
    const columns = q.getAll("columns").flatMap((c) => c.split(","));
    if (!/^\d{4}-\d{2}-\d{2}$/.test(start) || !/^\d{4}-\d{2}-\d{2}$/.test(end) || dayOf(end) < dayOf(start)) throw refuse();
    if (dayOf(start) < todayUtc() - SYNC_LOOKBACK_DAYS || dayOf(end) - dayOf(start) > SYNC_LOOKBACK_DAYS) throw refuse();
    if (!["TOTAL", "DAY"].includes(granularity) || !columns.length) throw refuse(); // WEEK/MONTH/HOUR: not modelled here
    const ids = (n: string) => (q.getAll(n).length ? q.getAll(n) : undefined);
    if (level === "campaign" && !ids("campaign_ids")) throw refuse();
    if (level === "ad_group" && !ids("ad_group_ids")) throw refuse();
    if (level === "ad" && !ids("ad_ids") && !(ids("campaign_ids") && ids("pin_ids"))) throw refuse(); // "either ad_ids or both campaign_ids and pin_ids"
    return statRows(accountId, level, { campaigns: ids("campaign_ids"), adGroups: ids("ad_group_ids"), ads: ids("ad_ids") }, start, end, granularity, columns, false);
  }

  function createReport(accountId: string, body: Record<string, any>) {
    const refuse = () => new ApiError(400, 400, "Invalid ad account ads analytics parameters.");
    const { start_date: start, end_date: end, granularity, level, columns } = body ?? {};
    if (typeof start !== "string" || typeof end !== "string" || dayOf(end) < dayOf(start)) throw refuse();
    if (dayOf(start) < todayUtc() - ASYNC_LOOKBACK_DAYS || dayOf(end) - dayOf(start) > ASYNC_RANGE_DAYS) throw refuse();
    if (!["TOTAL", "DAY"].includes(granularity) || !["CAMPAIGN", "AD_GROUP", "PIN_PROMOTION"].includes(level) || !Array.isArray(columns) || !columns.length) throw refuse();
    const token = crypto.randomBytes(12).toString("hex");
    jobs.set(token, { accountId, body: clone(body), polls: 0, pollsBeforeDone: jobSettings.pollsBeforeDone, outcome: jobSettings.outcome });
    reportJobs.push({ token, accountId, body: clone(body), polls: 0 });
    return { report_status: "IN_PROGRESS", token, message: null };
  }

  function pollReport(accountId: string, token: string) {
    const j = jobs.get(token);
    if (!j || j.accountId !== accountId) return { report_status: "DOES_NOT_EXIST", url: null, size: null };
    j.polls++;
    reportJobs.find((r) => r.token === token)!.polls = j.polls;
    if (j.polls <= j.pollsBeforeDone) return { report_status: "IN_PROGRESS", url: null, size: null };
    if (j.outcome !== "FINISHED") return { report_status: j.outcome, url: null, size: null };
    j.finishedAt ??= Date.now();
    const ext = j.body.report_format === "CSV" ? "csv" : "json";
    j.url = `${base}/pinterest-ads-reporting/${accountId}/${token}.${ext}?X-Amz-Expires=300&X-Amz-Signature=${crypto.createHash("sha256").update(token).digest("hex")}`;
    return { report_status: "FINISHED", url: j.url, size: reportFile(token).length };
  }

  /** The finished report's file, as Pinterest's download would hold it (layout approximate, see above). */
  function reportFile(token: string): Buffer {
    const j = jobs.get(token)!;
    const b = j.body;
    const level: Level = b.level === "CAMPAIGN" ? "campaign" : b.level === "AD_GROUP" ? "ad_group" : "ad";
    const csv = b.report_format === "CSV";
    const rows = statRows(j.accountId, level, { campaigns: b.campaign_ids, adGroups: b.ad_group_ids, ads: b.ad_ids }, b.start_date, b.end_date, b.granularity, b.columns, csv);
    if (csv) {
      const header = [...(b.granularity === "DAY" ? ["DATE"] : []), ...b.columns];
      return Buffer.from([header, ...rows.map((r) => header.map((h) => r[h] ?? ""))].map((r) => r.map(csvField).join(",")).join("\r\n") + "\r\n");
    }
    const idColumn = level === "campaign" ? "CAMPAIGN_ID" : level === "ad_group" ? "AD_GROUP_ID" : "AD_ID";
    const byId: Record<string, unknown[]> = {};
    for (const r of rows) (byId[String(r[idColumn])] ??= []).push(r);
    return Buffer.from(JSON.stringify(byId));
  }

  function download(req: { headers: Record<string, string | string[] | undefined> }, url: URL, res: import("node:http").ServerResponse) {
    const m = /^\/pinterest-ads-reporting\/(\d+)\/([0-9a-f]+)\.(csv|json)$/.exec(url.pathname);
    const j = m ? jobs.get(m[2]) : undefined;
    const log = { path: url.pathname, authorization: req.headers.authorization !== undefined, status: 200 };
    downloads.push(log);
    const record: PinterestRequest = { method: "GET", path: url.pathname, query: {}, body: null, requestId: "", category: null, at: Date.now(), status: 200 };
    requests.push(record);
    const fail = (status: number, code: string) => { log.status = status; record.status = status; res.writeHead(status, { "content-type": "application/xml" }); res.end(`<Error><Code>${code}</Code></Error>`); };
    if (!m || !j || j.accountId !== m[1] || !j.url || new URL(j.url).searchParams.get("X-Amz-Signature") !== url.searchParams.get("X-Amz-Signature")) return fail(403, "AccessDenied");
    if (log.authorization) return fail(400, "InvalidArgument"); // "Only one auth mechanism allowed"
    if (Date.now() - j.finishedAt! > DOWNLOAD_TTL_MS) return fail(403, "AccessDenied"); // the link is valid five minutes
    const file = reportFile(m[2]);
    res.writeHead(200, { "content-type": m[3] === "csv" ? "text/csv" : "application/json", "content-length": String(file.length) });
    res.end(file);
  }

  // ---- OAuth -------------------------------------------------------------------------------------------------------
  function oauthToken(authz: string, form: URLSearchParams) {
    const basic = /^Basic (.+)$/.exec(authz);
    const [id, secret] = basic ? Buffer.from(basic[1], "base64").toString().split(":").map(decodeURIComponent) : [];
    tokenRequests.push({ grant_type: form.get("grant_type") ?? "", continuous_refresh: form.get("continuous_refresh"), basic: !!basic });
    // Pinterest takes client credentials only as HTTP Basic (the description's `security: basic`).
    if (!basic || id !== app.clientId || secret !== app.clientSecret) { counts.refused++; throw new ApiError(401, 2, "Authentication failed."); }
    const issue = (grant: { accounts: string[] | null; scopes: string[] }, responseType: "authorization_code" | "refresh_token") => {
      const access = `pina_${crypto.randomBytes(24).toString("base64url")}`;
      const refresh = `pinr_${crypto.randomBytes(24).toString("base64url")}`;
      const expiresIn = TOKEN_DAYS * 86_400;
      const refreshIn = REFRESH_DAYS * 86_400;
      tokens.set(access, { expiresAt: Date.now() + expiresIn * 1000, accounts: grant.accounts, scopes: grant.scopes });
      refreshTokens.set(refresh, { expiresAt: Date.now() + refreshIn * 1000, accounts: grant.accounts, scopes: grant.scopes });
      return { access_token: access, refresh_token: refresh, response_type: responseType, token_type: "bearer", expires_in: expiresIn,
        refresh_token_expires_in: refreshIn, refresh_token_expires_at: now() + refreshIn, scope: grant.scopes.join(",") };
    };
    const grant = form.get("grant_type");
    if (grant === "authorization_code") {
      const c = codes.get(form.get("code") ?? "");
      if (!c || c.used || form.get("redirect_uri") !== c.redirectUri) { counts.refused++; throw new ApiError(400, 1, "Invalid authorization code or redirect_uri."); } // approximate
      c.used = true;
      counts.authorization_code++;
      return issue({ accounts: c.accounts, scopes: ["ads:read", "ads:write"] }, "authorization_code");
    }
    if (grant === "refresh_token") {
      const old = form.get("refresh_token") ?? "";
      const r = refreshTokens.get(old);
      if (!r || r.expiresAt <= Date.now()) { counts.refused++; throw new ApiError(400, 1, "Invalid refresh token."); } // approximate
      refreshTokens.delete(old); // continuous refresh: the new refresh token replaces this one
      counts.refresh_token++;
      return issue(r, "refresh_token");
    }
    counts.refused++;
    throw new ApiError(400, 1, "Invalid grant_type."); // approximate
  }

  // ---- routing -----------------------------------------------------------------------------------------------------
  function route(method: string, apiPath: string, q: URLSearchParams, body: unknown, t: { accounts: string[] | null; scopes: string[] }): unknown {
    if (method === "GET" && apiPath === "/resources/targeting/INTEREST") {
      return [Object.fromEntries([...interests].filter(([id]) => !refusedInterests.has(id)))];
    }
    if (method === "GET" && apiPath === "/ad_accounts") {
      // The ad accounts the token may use, bookmark-paged like every listing.
      return page([...accounts.values()].filter((x) => !t.accounts || t.accounts.includes(x.id)).map((x) => ({ id: x.id, name: x.name, currency: x.currency, country: x.country })), q, 250);
    }
    const r = /^\/ad_accounts\/(\d+)(?:\/(ads|reports|campaigns\/analytics|ad_groups\/analytics|ads\/analytics))?$/.exec(apiPath);
    if (r) {
      const [, accountId, what] = r;
      if (!accounts.has(accountId) || (t.accounts && !t.accounts.includes(accountId))) throw new ApiError(403, 29, "You are not permitted to access that resource.");
      const a = accounts.get(accountId)!;
      if (!what && method === "GET") return { id: a.id, name: a.name, currency: a.currency, country: a.country, owner: { id: "1234567890", username: "pins" }, permissions: ["OWNER"], created_time: 1_600_000_000, updated_time: 1_600_000_000 };
      if (what === "ads" && method === "GET") {
        const [cids, gids, aids] = ["campaign_ids", "ad_group_ids", "ad_ids"].map((n) => q.getAll(n));
        if ([cids, gids, aids].filter((x) => x.length).length > 1) throw new ApiError(400, 400, "Invalid ads parameters."); // "Provide only campaign_id or ad_group_id or ad_id"
        const all = [...ads.values()].filter((x) => x.ad_account_id === accountId && statuses(q).includes(x.status) && (!cids.length || cids.includes(x.campaign_id)) && (!gids.length || gids.includes(x.ad_group_id)) && (!aids.length || aids.includes(x.id)));
        return page(ordered(all, q), q, 250);
      }
      if (what?.endsWith("/analytics") && method === "GET") return syncAnalytics(accountId, what, q);
      if (what === "reports" && method === "POST") return createReport(accountId, body as Record<string, any>);
      if (what === "reports" && method === "GET") return pollReport(accountId, q.get("token") ?? "");
      throw new ApiError(405, 405, "Method not allowed."); // approximate
    }
    const m = /^\/ad_accounts\/([^/]+)\/(campaigns|ad_groups|keywords|ad_groups\/audience_sizing)$/.exec(apiPath);
    if (!m) throw new ApiError(404, 404, "Not found."); // approximate
    const [, accountId, what] = m;
    if (!accounts.has(accountId) || (t.accounts && !t.accounts.includes(accountId))) throw new ApiError(403, 29, "You are not permitted to access that resource.");
    if (what === "ad_groups/audience_sizing" && method === "POST") { // a read (ads:read): nothing is written
      const ts = (body as { targeting_spec?: Record<string, any> })?.targeting_spec ?? {};
      if (targetingProblem(ts)) throw new ApiError(400, 400, "Invalid ad group audience sizing parameters.");
      const n = audience(ts);
      return { audience_size_lower_bound: Math.floor(n * 0.85), audience_size_upper_bound: Math.ceil(n * 1.15) };
    }
    if (method !== "GET" && !t.scopes.includes("ads:write")) {
      throw new ApiError(401, 3, "Your token does not have sufficient permissions to perform this operation. Please ensure your token has the required scopes.");
    }
    if (what === "campaigns" && method === "GET") {
      const ids = q.getAll("campaign_ids");
      const all = [...campaigns.values()].filter((c) => c.ad_account_id === accountId && statuses(q).includes(c.status) && (!ids.length || ids.includes(c.id)));
      return page(ordered(all, q), q, 250);
    }
    if (what === "ad_groups" && method === "GET") {
      const cids = q.getAll("campaign_ids");
      const gids = q.getAll("ad_group_ids");
      if (cids.length && gids.length) throw new ApiError(400, 400, "Invalid ad account group parameters.");
      const all = [...adGroups.values()].filter((g) => g.ad_account_id === accountId && statuses(q).includes(g.status) && (!cids.length || cids.includes(g.campaign_id)) && (!gids.length || gids.includes(g.id)));
      const names = q.get("translate_interests_to_names") === "true";
      const p = page(ordered(all, q), q, 250);
      return { ...p, items: p.items.map((g) => (names && g.targeting_spec.INTEREST ? { ...clone(g), targeting_spec: { ...clone(g.targeting_spec), INTEREST: g.targeting_spec.INTEREST.map((i: string) => interests.get(i) ?? i) } } : clone(g))) };
    }
    if (what === "ad_groups" && method === "PATCH") return patchAdGroups(accountId, body);
    if (what === "keywords" && method === "GET") {
      const gid = q.get("ad_group_id");
      const types = q.getAll("match_types");
      const all = [...keywords.values()].filter((k) => !k.archived && (gid ? k.parent_id === gid : k.parent_id === accountId) && (!types.length || types.includes(k.match_type)))
        .filter((k) => { const g = adGroups.get(k.parent_id); return !g || g.ad_account_id === accountId; });
      return page(ordered(all, q), q, null);
    }
    if (what === "keywords" && method === "POST") return createKeywords(accountId, body as Record<string, any>);
    if (what === "keywords" && method === "PATCH") return updateKeywords(accountId, body as Record<string, any>);
    throw new ApiError(405, 405, "Method not allowed."); // approximate
  }

  function rateHeaders(category: string | null, throttle: { kind: PinterestFaultKind; resetS: number } | null): Record<string, string> {
    if (!category) return {};
    if (throttle?.kind === "trial_cap") {
      const midnight = new Date(); midnight.setUTCHours(24, 0, 0, 0);
      return { "x-ratelimit-limit": "1000, 1000;w=86400", "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(Math.ceil((midnight.getTime() - Date.now()) / 1000)), "x-envoy-ratelimited": "true" };
    }
    const limit = PER_MINUTE[category] ?? 1000;
    if (throttle) return { "x-ratelimit-limit": `${limit}, ${limit};w=60`, "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(throttle.resetS), "x-envoy-ratelimited": "true" };
    const n = (used.get(category) ?? 0) + 1;
    used.set(category, n);
    return { "x-ratelimit-limit": `${limit}, ${limit};w=60`, "x-ratelimit-remaining": String(Math.max(0, limit - n)), "x-ratelimit-reset": String(60 - (now() % 60)) };
  }

  const authorize = authorizeEndpoint({
    provider: "Pinterest", clientId: app.clientId,
    grants: () => [...accounts.values()].map((a) => `Ad account ${a.id} (${a.name})`),
    issue(q) {
      const code = crypto.randomBytes(20).toString("hex");
      codes.set(code, { redirectUri: q.get("redirect_uri")!, accounts: null, used: false });
      return { code };
    },
  });

  const server = bodyServer((req, res, url, raw) => {
    if (url.pathname === "/oauth/") return authorize(req, res, url, raw); // www.pinterest.com/oauth/, not the API
    const method = (req.method ?? "GET").toUpperCase();
    const requestId = crypto.randomBytes(8).toString("hex");
    if (url.pathname.startsWith("/pinterest-ads-reporting/")) return download(req, url, res); // the object store, not the API
    const apiPath = url.pathname.replace(/^\/v5(?=\/)/, "");
    const isToken = apiPath === "/oauth/token";
    const category = url.pathname.startsWith("/v5/") ? spec.category(method, apiPath) : null;
    const query: Record<string, string[]> = {};
    for (const k of new Set(url.searchParams.keys())) query[k] = url.searchParams.getAll(k);
    let parsed: unknown = null;
    const ctype = String(req.headers["content-type"] ?? "");
    try { parsed = raw ? (ctype.includes("json") ? JSON.parse(raw) : Object.fromEntries(new URLSearchParams(raw))) : null; } catch { parsed = undefined; }
    if (isToken && parsed && typeof parsed === "object") { const { refresh_token: _r, code: _c, ...rest } = parsed as Record<string, string>; parsed = rest; }
    const record: PinterestRequest = { method, path: url.pathname, query, body: parsed, requestId, category, at: Date.now() };
    requests.push(record);
    if (url.pathname.startsWith("/v5/")) specViolations.push(...spec.checkRequest({ method, apiPath, query: url.searchParams, headers: req.headers, body: raw }));
    else specViolations.push(`${method} ${url.pathname}: not under /v5`);
    let extra: Record<string, string> = {};
    const send = (status: number, body: unknown) => {
      record.status = status;
      specViolations.push(...spec.checkResponse({ method, apiPath, status, body }));
      res.writeHead(status, { "content-type": "application/json", "x-pinterest-rid": requestId, ...extra });
      res.end(JSON.stringify(body));
    };
    try {
      if (!url.pathname.startsWith("/v5/")) throw new ApiError(404, 404, "Not found.");
      if (parsed === undefined) throw new ApiError(400, 1, "Invalid request body."); // approximate
      if (isToken && method === "POST") return send(200, oauthToken(String(req.headers.authorization ?? ""), new URLSearchParams(raw)));
      const bearer = /^Bearer (\S+)$/.exec(String(req.headers.authorization ?? ""))?.[1];
      const t = bearer ? tokens.get(bearer) : undefined;
      if (!t || t.expiresAt <= Date.now()) throw new ApiError(401, 2, "Authentication failed.");
      if (fault && fault.n > 0 && (!fault.category || fault.category === category)) {
        fault.n--;
        if (fault.kind === "transient") throw new ApiError(500, 500, "Internal server error."); // approximate
        record.throttled = true;
        extra = rateHeaders(category, fault);
        throw new ApiError(429, 8, RATE_LIMIT_MESSAGE, extra);
      }
      extra = rateHeaders(category, null);
      return send(200, route(method, apiPath, url.searchParams, parsed, t));
    } catch (e) {
      if (!(e instanceof ApiError)) return send(500, { code: 500, message: "Internal server error." });
      extra = { ...extra, ...e.headers };
      return send(e.status, { code: e.code, message: e.message });
    }
  });

  base = await listenLocal(server, opts.port);
  return {
    faults: peerFaults(server, (m, url) => (m === "POST" || m === "PATCH") && /\/ad_accounts\/\d+\/(ad_groups|keywords)$/.test(url.pathname)),
    url: base, authorizeUrl: `${base}/oauth/`, tokenUrl: `${base}/v5/oauth/token`, spec, app, requests, tokenRequests, budgetWrites, specViolations, counts, reportJobs, downloads,
    addToken(value, o = {}) {
      tokens.set(value, { expiresAt: Date.now() + (o.expiresInS ?? TOKEN_DAYS * 86_400) * 1000, accounts: o.accounts ?? null, scopes: o.scopes ?? ["ads:read", "ads:write"] });
    },
    expireToken(value) { const t = tokens.get(value); if (t) t.expiresAt = Date.now() - 1000; },
    addCode(code, o) { codes.set(code, { redirectUri: o.redirectUri, accounts: o.accounts ?? null, used: false }); },
    addAdAccount(a) { accounts.set(a.id, { id: a.id, name: a.name, currency: a.currency ?? "USD", country: a.country ?? "US" }); },
    addAd(a) {
      const g = adGroups.get(a.adGroupId);
      if (!g) throw new Error(`no ad group ${a.adGroupId}`);
      const ad: PinterestAd = {
        id: a.id ?? numericId(), ad_account_id: a.adAccountId, ad_group_id: g.id, campaign_id: g.campaign_id, name: a.name, status: a.status ?? "ACTIVE", pin_id: numericId(),
        creative_type: "REGULAR", review_status: "APPROVED", type: "pinpromotion", created_time: now(), updated_time: now(),
      };
      ads.set(ad.id, ad);
      return clone(ad);
    },
    addStats(st) {
      if (!ads.has(st.adId)) throw new Error(`no ad ${st.adId}`);
      if (!/^\d{4}-\d{2}-\d{2}$/.test(st.date)) throw new Error(`date ${st.date}: YYYY-MM-DD (UTC)`);
      stats.push({ ...st });
    },
    setReportJobs(o) { jobSettings = { pollsBeforeDone: o.pollsBeforeDone ?? jobSettings.pollsBeforeDone, outcome: o.outcome ?? jobSettings.outcome }; },
    addCampaign(c) {
      const camp: PinterestCampaign = { id: c.id ?? numericId(), ad_account_id: c.adAccountId, name: c.name, status: c.status ?? "ACTIVE", objective_type: "CONSIDERATION", created_time: now(), updated_time: now(), type: "campaign" };
      campaigns.set(camp.id, camp);
      return clone(camp);
    },
    addAdGroup(g) {
      const ag: PinterestAdGroup = {
        id: g.id ?? numericId(), ad_account_id: g.adAccountId, campaign_id: g.campaignId, name: g.name, status: g.status ?? "ACTIVE", targeting_spec: clone(g.targetingSpec),
        budget_in_micro_currency: 20_000_000, bid_in_micro_currency: 1_500_000, budget_type: "DAILY", billable_event: "CLICKTHROUGH", auto_targeting_enabled: false,
        placement_group: "ALL", pacing_delivery_type: "STANDARD", start_time: null, end_time: null, summary_status: g.status === "PAUSED" ? "PAUSED" : "RUNNING", type: "adgroup",
        created_time: now(), updated_time: now(),
      };
      adGroups.set(ag.id, ag);
      return clone(ag);
    },
    addKeyword(adGroupId, k) {
      const kw: PinterestKeyword = { id: numericId(), parent_id: adGroupId, parent_type: "adgroup", value: k.value, match_type: k.matchType, archived: false, bid: null, type: "keyword" };
      keywords.set(kw.id, kw);
      return clone(kw);
    },
    addInterest(i) { interests.set(i.id, i.name); if (i.share !== undefined) shares.set(i.id, i.share); },
    adGroup: (id) => (adGroups.has(id) ? clone(adGroups.get(id)!) : undefined),
    targetingOf: (id) => (adGroups.has(id) ? clone(adGroups.get(id)!.targeting_spec) : undefined),
    setTargeting(id, ts) { const g = adGroups.get(id); if (!g) throw new Error(`no ad group ${id}`); g.targeting_spec = clone(ts); g.updated_time = now(); },
    keywordsOf: (id) => activeKeywords(id).map(clone),
    refuseInterest(id) { refusedInterests.add(id); },
    refuseAdGroup(id) { refusedAdGroups.add(id); },
    failNext(kind, n, o = {}) { fault = { kind, n, resetS: o.resetS ?? 2, category: o.category }; },
    resetLog() {
      requests.length = 0; tokenRequests.length = 0; budgetWrites.length = 0; specViolations.length = 0; fault = null; used.clear();
      reportJobs.length = 0; downloads.length = 0;
      counts.authorization_code = 0; counts.refresh_token = 0; counts.refused = 0;
    },
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
