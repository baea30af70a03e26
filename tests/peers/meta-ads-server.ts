import crypto from "node:crypto";
import type http from "node:http";
import { authorizeEndpoint } from "./consent-page.ts";
import { bodyServer, listenLocal, type StandInOptions } from "./listen.ts";
import { peerFaults, type PeerFaults } from "./faults.ts";

// A local stand-in for Meta's Graph API / Marketing API, strict where a connector could get it
// wrong:
// - Versioned paths only (`/v27.0/...`): an older version answers Meta's (#2635) "deprecated version of the Ads API",
//   any other version (or none) (#2500) "Unknown path components", so a connector must pin the version.
// - Auth: `access_token` in the query or form/JSON body, or `Authorization: Bearer`. Missing: (#104); unknown:
//   190 "Invalid OAuth access token"; expired: 190/463 "Error validating access token: Session has expired". All 400
//   with WWW-Authenticate, as Graph does (not 401), so a client must read the body's `code`, not the status.
// - OAuth token endpoint: code exchange (short-lived, ~1 h) and `fb_exchange_token` (long-lived, 5,184,000 s). There
//   is no refresh token: Meta has none.
// - Reads: nodes (`/act_<id>`, `/{campaign_id}`, `/{adset_id}`) and edges (`/me/adaccounts`, `/act_<id>/campaigns`,
//   `/act_<id>/adsets`, `/{campaign_id}/adsets`). Like Graph, only `id` comes back unless `fields` asks for more, and
//   an unknown field is a (#100) "Tried accessing nonexisting field". Edges page with opaque cursors
//   `{data, paging:{cursors:{before,after}, next?, previous?}}`, `limit` default 25; `next` carries the access token
//   (Graph does: a client must not log paging URLs).
// - Writes: `POST /{adset_id}` replaces the WHOLE targeting spec (fields not sent are gone); `execution_options=
//   ["validate_only"]` runs every check and answers `{success:true}` without saving. Budget and bid fields are
//   accepted (Meta would) and recorded in `budgetWrites`, so tests can prove our guardrails never send them.
// - Targeting search `GET /search?type=adinterest&q=` over a seeded catalogue, and `type=adinterestvalid` with
//   `interest_fbid_list` (Meta's way to check interest ids are still valid). Delivery estimates for an ad set.
// - Every answer carries `x-fb-trace-id` (= the error body's `fbtrace_id`) and the usage headers a client paces on:
//   X-Business-Use-Case-Usage (keyed by business id), X-Ad-Account-Usage, X-App-Usage.
// - Faults: the next n API calls can be throttled (17/2446079 user, 613/1487742 ad account, 4 app, 80004 BUC, 80000
//   ads_insights BUC, each a 400 whose usage header shows `estimated_time_to_regain_access` in MINUTES, as Meta
//   reports it) or a transient 500 (code 1, is_transient). `refuseInterest(id)` makes an interest invalid (Meta retires interests).
// - Reporting: `GET /act_<id>/insights` (sync, Graph cursor pages over offset cursors; `fields`, `level`,
//   `time_range` {since, until} in the account's time zone, `time_increment` 1..90 or all_days, `filtering` on
//   campaign.id/adset.id/ad.id with IN or EQUAL); numbers as strings, `spend` a decimal in the account's currency,
//   `actions` a list of {action_type, value} left out when there are none. A sync answer over `syncInsightsLimit` rows
//   is Meta's data-size error (#100, subcode 1487534). `POST /act_<id>/insights` submits an async report run
//   ({report_run_id}); `GET /<report_run_id>` walks Job Not Started -> Job Started -> Job Running -> Job Completed
//   (or Job Failed / Job Skipped) over `reportRunSteps` polls with async_percent_completion; `GET /<id>/insights`
//   pages the result. A start date more than 37 months back is Meta's (#3018). Seed rows with `addStats` as Meta
//   stores them: one per ad and day (account-local date), spend as a decimal string.
// Error subcodes marked "approximate" below were not verified against Meta's docs; clients should branch on `code`.

/** Error subcodes this stand-in answers with (exported so tests name them rather than repeat numbers). */
export const META_SUBCODES = {
  tokenExpired: 463,
  /** Verified in the wild (facebook-nodejs-business-sdk#167): "Missing Target Audience Location". */
  missingLocation: 1885364,
  /** Approximate. */
  invalidInterest: 1487756,
  /** Approximate. */
  invalidAge: 1487040,
  unknownObject: 33,
  userLimit: 2446079,
  adAccountLimit: 1487742,
  codeInvalid: 36007,
  redirectMismatch: 36008,
  codeUsed: 36009,
  /** "Please reduce the amount of data you're asking for" (insights best practices; code 100). */
  dataTooLarge: 1487534,
} as const;

export type MetaFaultKind = "user_limit" | "ad_account_limit" | "app_limit" | "buc_limit" | "insights_limit" | "transient";

export interface MetaInterest {
  id: string;
  name: string;
  audience_size_lower_bound: number;
  audience_size_upper_bound: number;
  path: string[];
  topic?: string;
  description?: string | null;
}

export interface MetaAdAccount { id: string; account_id: string; name: string; currency: string; timezone_name: string; account_status: number; businessId: string; businessName: string }
export interface MetaCampaign { id: string; account_id: string; name: string; status: string; objective: string; created_time: string; updated_time: string }
export interface MetaAdSet {
  id: string; account_id: string; campaign_id: string; name: string; status: string; targeting: Record<string, any>;
  optimization_goal: string; billing_event: string; daily_budget?: string; lifetime_budget?: string; bid_amount?: string;
  created_time: string; updated_time: string;
}

export interface MetaRequest {
  method: string;
  /** Path as sent, version included. */
  path: string;
  /** Query parameters, access_token removed. */
  query: Record<string, string>;
  /** Request headers, authorization removed. */
  headers: http.IncomingHttpHeaders;
  /** Parsed body (JSON or form), access_token removed; null when empty. */
  body: Record<string, unknown> | null;
  /** Where the token came from. */
  auth: "header" | "query" | "body" | null;
  /** Answer status, set when answered. */
  status?: number;
  fbtraceId: string;
  /** When it arrived (epoch ms). */
  at: number;
  /** Answered with a throttle (a failNext rate-limit fault). */
  throttled?: boolean;
}

/** One ad's delivery on one day, as Meta stores it (account-local date, spend a decimal in the account's currency). */
export interface MetaStatsRow {
  accountId: string; date: string;
  campaignId: string; campaignName?: string; adsetId: string; adsetName?: string; adId: string; adName?: string;
  impressions: number | string; clicks: number | string; inlineLinkClicks?: number | string;
  /** Decimal string in the account's currency ("12.34"; JPY "1500"). */
  spend: string;
  actions?: { action_type: string; value: string | number }[];
}

export type MetaRunStatus = "Job Not Started" | "Job Started" | "Job Running" | "Job Completed" | "Job Failed" | "Job Skipped";
export interface MetaReportRun {
  id: string; accountId: string; params: Record<string, unknown>; status: MetaRunStatus; percent: number;
  /** Status reads (GET /<report_run_id>) and result page reads so far. */
  polls: number; downloads: number;
}

export interface MetaWrite { adsetId: string; params: Record<string, unknown>; validateOnly: boolean; ok: boolean }

export interface MetaAdsServer {
  url: string;
  /** The OAuth dialog (META_ADS_AUTHORIZE_URL, /{version}/dialog/oauth): approving issues a code reaching every ad account. */
  authorizeUrl: string;
  tokenUrl: string;
  version: string;
  /** The app whose credentials the token endpoint checks. */
  app: { clientId: string; clientSecret: string };
  /** Registers an API token; `accounts` limits the ad accounts it sees (default all), `expiresInS` <= 0 is expired. */
  addToken(token: string, opts?: { expiresInS?: number; accounts?: string[] }): void;
  /** Makes a registered token expired now (Meta's 190/463). */
  expireToken(token: string): void;
  /** Registers an authorization code as the OAuth dialog would have issued it. */
  addCode(code: string, opts: { redirectUri: string; accounts?: string[] }): void;
  addAdAccount(a: { id: string; name: string; currency?: string; timezoneName?: string; businessId?: string; businessName?: string }): MetaAdAccount;
  addCampaign(c: { accountId: string; name: string; id?: string; status?: string; objective?: string }): MetaCampaign;
  addAdSet(adsetId: string, a: { accountId: string; campaignId: string; name: string; targeting: Record<string, any>; status?: string; optimizationGoal?: string }): MetaAdSet;
  /** A copy of the ad set's stored targeting (undefined for an unknown ad set). */
  targetingOf(adsetId: string): Record<string, any> | undefined;
  /** Changes targeting behind the client's back (a change between preview and apply). */
  setTargeting(adsetId: string, targeting: Record<string, any>): void;
  adSet(adsetId: string): MetaAdSet | undefined;
  addInterest(i: Partial<MetaInterest> & { id: string; name: string }): MetaInterest;
  /** Interest ids that writes and validity checks refuse from now on, even if in the catalogue. */
  refuseInterest(id: string): void;
  /** Real (not validate-only) targeting writes to this ad set are refused from now on (an ad set in review). */
  refuseAdSet(adsetId: string): void;
  /** The next n API calls answer this fault; throttles report `regainMinutes` (default 5). */
  failNext(kind: MetaFaultKind, n: number, opts?: { regainMinutes?: number }): void;
  /** Seeds insights rows (reporting). */
  addStats(...rows: MetaStatsRow[]): void;
  /** Sync insights answers with more rows than this fail with Meta's data-size error (#100/1487534). Default 100,000. */
  setSyncInsightsLimit(rows: number): void;
  /** Status reads a report run takes to finish (default 3: Job Started, Job Running, then done). */
  setReportRunSteps(n: number): void;
  /** The next submitted report run ends this way instead of Job Completed. */
  failNextReportRun(status: "Job Failed" | "Job Skipped"): void;
  /** Report runs submitted, in order (live objects). */
  reportRuns: MetaReportRun[];
  /** Every request, in arrival order. */
  requests: MetaRequest[];
  /** Every POST to an ad set that passed auth and throttling: validate-only ones and refused ones included. */
  writes: MetaWrite[];
  /** Budget and bid fields seen in ad set writes (validate-only included). */
  budgetWrites: { adsetId: string; field: string; value: unknown; validateOnly: boolean }[];
  /** Token grants answered by the token endpoint. */
  counts: { code: number; fb_exchange_token: number; refused: number };
  /** Clears requests, writes, faults and counters (not the seeded accounts, ad sets or catalogue). */
  resetLog(): void;
  /** Failures around a write, on request (faults.ts): its answer lost after it was applied, applied late, a restart. */
  faults: PeerFaults;
  close(): Promise<void>;
}

/** A small seeded interest catalogue (ids look like Meta's 13-digit interest ids). */
const SEED_INTERESTS: MetaInterest[] = [
  { id: "6003107902433", name: "Running", audience_size_lower_bound: 210_000_000, audience_size_upper_bound: 247_000_000, path: ["Interests", "Fitness and wellness", "Running"], topic: "Fitness and wellness" },
  { id: "6003384248805", name: "Trail running", audience_size_lower_bound: 9_800_000, audience_size_upper_bound: 11_500_000, path: ["Interests", "Sports and outdoors", "Trail running"], topic: "Sports and outdoors" },
  { id: "6003626773307", name: "Coffee", audience_size_lower_bound: 380_000_000, audience_size_upper_bound: 447_000_000, path: ["Interests", "Food and drink", "Beverages", "Coffee"], topic: "Food and drink" },
  { id: "6003151497811", name: "Specialty coffee", audience_size_lower_bound: 4_100_000, audience_size_upper_bound: 4_800_000, path: ["Interests", "Food and drink", "Beverages", "Specialty coffee"], topic: "Food and drink" },
  { id: "6003306084421", name: "Yoga", audience_size_lower_bound: 260_000_000, audience_size_upper_bound: 306_000_000, path: ["Interests", "Fitness and wellness", "Yoga"], topic: "Fitness and wellness" },
  { id: "6003512451214", name: "Electric vehicle", audience_size_lower_bound: 61_000_000, audience_size_upper_bound: 72_000_000, path: ["Interests", "Hobbies and activities", "Vehicles", "Electric vehicle"], topic: "Hobbies and activities" },
  { id: "6003348604581", name: "Sustainable fashion", audience_size_lower_bound: 35_000_000, audience_size_upper_bound: 41_000_000, path: ["Interests", "Shopping and fashion", "Sustainable fashion"], topic: "Shopping and fashion" },
];

/** Rough monthly active people per country, for delivery estimates (others: 10M). */
const COUNTRY_MAU: Record<string, number> = { US: 240_000_000, GB: 52_000_000, DE: 45_000_000, FR: 44_000_000, CA: 30_000_000, AU: 19_000_000 };
const WORLD = 3_000_000_000;

const AD_STATUSES = ["ACTIVE", "PAUSED", "DELETED", "ARCHIVED"];
const EXECUTION_OPTIONS = ["validate_only", "include_recommendations"];
const OPTIMIZATION_GOALS = ["NONE", "APP_INSTALLS", "AD_RECALL_LIFT", "ENGAGED_USERS", "EVENT_RESPONSES", "IMPRESSIONS", "LEAD_GENERATION", "QUALITY_LEAD", "LINK_CLICKS",
  "OFFSITE_CONVERSIONS", "PAGE_LIKES", "POST_ENGAGEMENT", "QUALITY_CALL", "REACH", "LANDING_PAGE_VIEWS", "VISIT_INSTAGRAM_PROFILE", "VALUE", "THRUPLAY", "CONVERSATIONS"];
const BUDGET_FIELDS = ["daily_budget", "lifetime_budget", "bid_amount"];
/** Readable fields per node type; anything else is Graph's "nonexisting field" error. */
const FIELDS = {
  AdAccount: ["id", "account_id", "name", "currency", "timezone_name", "account_status", "business"],
  Campaign: ["id", "account_id", "name", "status", "effective_status", "objective", "created_time", "updated_time"],
  AdSet: ["id", "account_id", "campaign_id", "name", "status", "effective_status", "targeting", "optimization_goal", "billing_event", "daily_budget", "lifetime_budget", "bid_amount", "created_time", "updated_time"],
} as const;
type NodeType = keyof typeof FIELDS;

class GraphError extends Error {
  constructor(readonly status: number, readonly error: Record<string, unknown>, readonly headers: Record<string, string> = {}) { super(String(error.message)); }
}
/** Meta's plain (#100) parameter error. */
const param100 = (message: string) => new GraphError(400, { message: `(#100) ${message}`, type: "OAuthException", code: 100 });
/** Meta's user-facing validation error: "Invalid parameter" plus a subcode, a title and a message for the user. */
const invalid = (subcode: number, title: string, msg: string, blame: string[]) => new GraphError(400, {
  message: "Invalid parameter", type: "OAuthException", code: 100, error_data: { blame_field_specs: [blame] }, error_subcode: subcode, is_transient: false, error_user_title: title, error_user_msg: msg,
});
const unsupported = (method: string, id: string) => new GraphError(400, {
  message: `Unsupported ${method.toLowerCase()} request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation. Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api`,
  type: "GraphMethodException", code: 100, error_subcode: META_SUBCODES.unknownObject,
});

const clone = <T>(v: T): T => structuredClone(v);
const actId = (id: string) => id.replace(/^act_/, "");
const isoNow = () => new Date().toISOString().replace(/\.\d{3}Z$/, "+0000");
const numericId = () => `120${crypto.randomInt(100_000_000, 999_999_999)}${crypto.randomInt(100_000, 999_999)}`;

export async function startMetaAdsServer(opts: { version?: string } & StandInOptions = {}): Promise<MetaAdsServer> {
  const version = opts.version ?? "v27.0";
  const app = opts.app ?? { clientId: String(crypto.randomInt(100_000_000_000, 999_999_999_999)), clientSecret: crypto.randomBytes(16).toString("hex") };
  const tokens = new Map<string, { expiresAt: number | null; accounts: string[] | null }>();
  const codes = new Map<string, { redirectUri: string; accounts: string[] | null; used: boolean }>();
  const accounts = new Map<string, MetaAdAccount>();
  const campaigns = new Map<string, MetaCampaign>();
  const adsets = new Map<string, MetaAdSet>();
  const interests = new Map<string, MetaInterest>(SEED_INTERESTS.map((i) => [i.id, clone(i)]));
  const refused = new Set<string>();
  const refusedAdSets = new Set<string>();
  const requests: MetaRequest[] = [];
  const writes: MetaWrite[] = [];
  const budgetWrites: MetaAdsServer["budgetWrites"] = [];
  const counts = { code: 0, fb_exchange_token: 0, refused: 0 };
  /** Calls per business and per ad account, for the usage headers' percentages (a Limited-tier-like 300/h). */
  const bucCalls = new Map<string, number>();
  const accountCalls = new Map<string, number>();
  let appCalls = 0;
  const QUOTA = 300;
  let fault: { kind: MetaFaultKind; n: number; regainMinutes: number } | null = null;
  const stats: MetaStatsRow[] = [];
  const reportRuns: MetaReportRun[] = [];
  const runResults = new Map<string, Record<string, unknown>[]>();
  const runOutcomes = new Map<string, MetaRunStatus>();
  let syncInsightsLimit = 100_000;
  let runSteps = 3;
  let nextRunOutcome: MetaRunStatus = "Job Completed";

  // ---- usage headers -------------------------------------------------------------------------------------------
  // Meta reports usage as percentages of the quota; at 100 the caller is throttled and estimated_time_to_regain_access
  // (minutes) says for how long. They are sent on every answer so a client can slow down before it is refused.
  function usageHeaders(account: MetaAdAccount | null, visible: MetaAdAccount[], throttled: MetaFaultKind | null, regain: number) {
    const pct = (n: number) => Math.min(100, Math.round((n * 100) / QUOTA));
    const businesses = account ? [account] : visible;
    const buc: Record<string, unknown[]> = {};
    for (const a of businesses) {
      const calls = bucCalls.get(a.businessId) ?? 0;
      const hit = throttled !== null && throttled !== "transient";
      buc[a.businessId] = [{
        type: throttled === "insights_limit" ? "ads_insights" : "ads_management", call_count: hit ? 100 : pct(calls), total_cputime: hit ? 100 : pct(Math.ceil(calls / 2)), total_time: hit ? 100 : pct(Math.ceil(calls / 2)),
        estimated_time_to_regain_access: hit ? regain : 0, ads_api_access_tier: "development_access",
      }];
    }
    const accHit = throttled === "ad_account_limit";
    const appHit = throttled === "app_limit" || throttled === "user_limit";
    return {
      "X-Business-Use-Case-Usage": JSON.stringify(buc),
      "X-Ad-Account-Usage": JSON.stringify({ acc_id_util_pct: accHit ? 100 : account ? pct(accountCalls.get(account.account_id) ?? 0) : 0, reset_time_duration: accHit ? regain * 60 : 0, ads_api_access_tier: "development_access" }),
      "X-App-Usage": JSON.stringify({ call_count: appHit ? 100 : pct(appCalls), total_cputime: appHit ? 100 : pct(Math.ceil(appCalls / 2)), total_time: appHit ? 100 : pct(Math.ceil(appCalls / 2)) }),
    };
  }

  function faultError(kind: MetaFaultKind): GraphError {
    // Throttles are HTTP 400 on Graph (not 429): a client must recognise them by code, and wait as the headers say.
    switch (kind) {
      case "user_limit": return new GraphError(400, { message: "(#17) User request limit reached", type: "OAuthException", code: 17, error_subcode: META_SUBCODES.userLimit, is_transient: true });
      case "ad_account_limit": return new GraphError(400, {
        message: "(#613) Calls to this api have exceeded the rate limit.", type: "OAuthException", code: 613, error_subcode: META_SUBCODES.adAccountLimit, is_transient: true,
        error_user_title: "Too Many Calls", error_user_msg: "There have been too many calls from this ad-account. Please wait a bit and try again.",
      });
      case "app_limit": return new GraphError(400, { message: "(#4) Application request limit reached", type: "OAuthException", code: 4, is_transient: true });
      case "buc_limit": return new GraphError(400, {
        message: "(#80004) There have been too many calls to this ad-account. Wait a bit and try again. For more info, please refer to https://developers.facebook.com/docs/graph-api/overview/rate-limiting#ads-management.",
        type: "OAuthException", code: 80004, error_subcode: META_SUBCODES.userLimit, is_transient: true,
      });
      case "insights_limit": return new GraphError(400, {
        message: "(#80000) There have been too many calls from this ad-account. Wait a bit and try again. For more info, please refer to https://developers.facebook.com/docs/graph-api/overview/rate-limiting.",
        type: "OAuthException", code: 80000, error_subcode: META_SUBCODES.userLimit, is_transient: true,
      });
      case "transient": return new GraphError(500, { message: "An unknown error occurred", type: "OAuthException", code: 1, is_transient: true });
    }
  }

  // ---- parameters ----------------------------------------------------------------------------------------------
  /** Query, then body (form or JSON) on top, as Graph merges them. Form values stay strings; JSON values keep type. */
  function readParams(req: http.IncomingMessage, url: URL, raw: string): { params: Record<string, unknown>; body: Record<string, unknown> | null } {
    const params: Record<string, unknown> = Object.fromEntries(url.searchParams);
    let body: Record<string, unknown> | null = null;
    if (raw.trim()) {
      const type = String(req.headers["content-type"] ?? "");
      if (type.includes("application/json")) {
        try { body = JSON.parse(raw); } catch { throw param100("Invalid JSON body"); }
        if (!body || typeof body !== "object" || Array.isArray(body)) throw param100("Invalid JSON body");
      } else body = Object.fromEntries(new URLSearchParams(raw));
      Object.assign(params, body);
    }
    return { params, body };
  }

  /** Graph accepts object and array params as JSON text (form, query) or as JSON values (JSON body). */
  function jsonParam(params: Record<string, unknown>, name: string): unknown {
    const v = params[name];
    if (typeof v !== "string") return v;
    try { return JSON.parse(v); } catch { throw param100(`param ${name} must be a JSON ${name === "execution_options" ? "array" : "object"}`); }
  }

  function token(req: http.IncomingMessage, url: URL, body: Record<string, unknown> | null): { value: string | null; from: MetaRequest["auth"] } {
    const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? "")?.[1];
    if (bearer) return { value: bearer.trim(), from: "header" };
    if (url.searchParams.has("access_token")) return { value: url.searchParams.get("access_token"), from: "query" };
    if (typeof body?.access_token === "string") return { value: body.access_token, from: "body" };
    return { value: null, from: null };
  }

  function checkToken(value: string | null) {
    const www = (msg: string) => ({ "www-authenticate": `OAuth "Facebook Platform" "invalid_token" "${msg}"` });
    if (!value) {
      const message = "An access token is required to request this resource.";
      throw new GraphError(400, { message, type: "OAuthException", code: 104 }, www(message));
    }
    const t = tokens.get(value);
    if (!t) {
      const message = "Invalid OAuth access token - Cannot parse access token";
      throw new GraphError(400, { message, type: "OAuthException", code: 190 }, www(message));
    }
    if (t.expiresAt !== null && t.expiresAt <= Date.now()) {
      const at = new Date(t.expiresAt).toUTCString();
      const message = `Error validating access token: Session has expired on ${at}. The current time is ${new Date().toUTCString()}.`;
      throw new GraphError(400, { message, type: "OAuthException", code: 190, error_subcode: META_SUBCODES.tokenExpired }, www(message));
    }
    return t;
  }

  // ---- reading ---------------------------------------------------------------------------------------------------
  /** Top-level names of a `fields` list (`targeting{geo_locations},name` -> targeting, name). */
  function fieldList(params: Record<string, unknown>, type: NodeType): string[] {
    const raw = typeof params.fields === "string" ? params.fields : "";
    const out: string[] = [];
    let depth = 0, cur = "";
    for (const ch of raw) {
      if (ch === "{") depth++;
      if (ch === "}") depth--;
      if (ch === "," && depth === 0) { out.push(cur); cur = ""; } else if (depth === 0 && ch !== "}") cur += ch;
    }
    out.push(cur);
    const names = out.map((s) => s.trim()).filter(Boolean);
    for (const n of names) if (!(FIELDS[type] as readonly string[]).includes(n)) throw param100(`Tried accessing nonexisting field (${n}) on node type (${type})`);
    // Graph answers only `id` when no fields are asked for; a client that forgets `fields` sees that.
    return names.length ? names : ["id"];
  }

  function view(type: NodeType, o: MetaAdAccount | MetaCampaign | MetaAdSet, fields: string[]) {
    const out: Record<string, unknown> = {};
    for (const f of fields) {
      let v: unknown;
      if (type === "AdAccount") {
        const a = o as MetaAdAccount;
        v = f === "id" ? `act_${a.account_id}` : f === "business" ? { id: a.businessId, name: a.businessName } : (a as any)[f];
      } else if (f === "effective_status") v = (o as MetaCampaign).status;
      else v = (o as any)[f];
      if (v !== undefined) out[f] = clone(v);
    }
    return out;
  }

  /** Graph cursor paging: opaque cursors of the first and last item; `next` only when more remain. */
  function page<T extends { id: string }>(items: T[], params: Record<string, unknown>, url: URL, tokenValue: string, render: (x: T) => unknown) {
    const limitRaw = params.limit;
    const limit = limitRaw === undefined ? 25 : Number(limitRaw);
    if (!Number.isInteger(limit) || limit < 1) throw param100("param limit must be a positive integer");
    const cursor = (id: string) => Buffer.from(`cursor:${id}`).toString("base64url");
    const uncursor = (c: unknown) => {
      const s = Buffer.from(String(c), "base64url").toString();
      if (!s.startsWith("cursor:")) throw param100("Invalid cursor");
      return s.slice(7);
    };
    let start = 0;
    if (params.after !== undefined) {
      const id = uncursor(params.after);
      start = items.findIndex((x) => x.id === id) + 1;
      if (start === 0) throw param100("Invalid cursor");
    }
    const slice = items.slice(start, start + Math.min(limit, 5000));
    const body: Record<string, any> = { data: slice.map(render) };
    if (slice.length) {
      body.paging = { cursors: { before: cursor(slice[0].id), after: cursor(slice[slice.length - 1].id) } };
      const link = (k: "after" | "before", c: string) => {
        const u = new URL(base + url.pathname);
        for (const [key, val] of url.searchParams) if (key !== "after" && key !== "before" && key !== "access_token") u.searchParams.set(key, val);
        u.searchParams.set("access_token", tokenValue);
        u.searchParams.set("limit", String(limit));
        u.searchParams.set(k, c);
        return u.toString();
      };
      if (start + slice.length < items.length) body.paging.next = link("after", body.paging.cursors.after);
      if (start > 0) body.paging.previous = link("before", body.paging.cursors.before);
    } else body.paging = { cursors: {} };
    return body;
  }

  // ---- targeting validation ---------------------------------------------------------------------------------------
  function interestIds(t: Record<string, any>): { id: unknown; at: string }[] {
    const out: { id: unknown; at: string }[] = [];
    const take = (list: unknown, at: string) => { if (Array.isArray(list)) list.forEach((i, k) => out.push({ id: i?.id, at: `${at}[${k}]` })); };
    take(t.interests, "interests");
    if (Array.isArray(t.flexible_spec)) t.flexible_spec.forEach((g: any, k: number) => take(g?.interests, `flexible_spec[${k}].interests`));
    take(t.exclusions?.interests, "exclusions.interests");
    return out;
  }

  /** Checks a targeting spec like Meta does and returns it normalised (interest names from the catalogue). */
  function validateTargeting(input: unknown): Record<string, any> {
    if (!input || typeof input !== "object" || Array.isArray(input)) throw param100("param targeting must be a JSON object");
    const t = clone(input) as Record<string, any>;
    const geo = t.geo_locations;
    // Shape errors come first, as plain (#100) parameter errors (Meta's wording for a non-array list).
    if (geo !== undefined && (!geo || typeof geo !== "object" || Array.isArray(geo))) throw param100("param targeting[geo_locations] must be an object.");
    if (geo?.countries !== undefined) {
      if (!Array.isArray(geo.countries)) throw param100("param targeting[geo_locations][countries] must be an array.");
      for (const c of geo.countries) if (typeof c !== "string" || !/^[A-Z]{2}$/.test(c)) throw param100(`Invalid country code: ${JSON.stringify(c)}`);
    }
    const hasAudience = Array.isArray(t.custom_audiences) && t.custom_audiences.length > 0;
    const geoKeys = ["countries", "regions", "cities", "zips", "geo_markets", "country_groups", "custom_locations", "places", "electoral_districts"];
    const hasGeo = geo && typeof geo === "object" && geoKeys.some((k) => Array.isArray(geo[k]) && geo[k].length > 0);
    if (!hasGeo && !hasAudience) {
      throw invalid(META_SUBCODES.missingLocation, "Missing Target Audience Location", "Your audience is missing a location. You can add a location or a Custom Audience.", ["targeting"]);
    }
    for (const k of ["age_min", "age_max"] as const) {
      if (t[k] === undefined) continue;
      const n = typeof t[k] === "string" && /^\d+$/.test(t[k]) ? Number(t[k]) : t[k];
      if (!Number.isInteger(n) || n < 18 || n > 65) throw invalid(META_SUBCODES.invalidAge, "Invalid Age", `The ${k === "age_min" ? "minimum" : "maximum"} age must be between 18 and 65.`, ["targeting", k]);
      t[k] = n;
    }
    if (t.age_min !== undefined && t.age_max !== undefined && t.age_min > t.age_max) throw invalid(META_SUBCODES.invalidAge, "Invalid Age", "The minimum age can't be higher than the maximum age.", ["targeting", "age_min"]);
    if (t.flexible_spec !== undefined && !Array.isArray(t.flexible_spec)) throw param100("param targeting[flexible_spec] must be an array.");
    for (const { id } of interestIds(t)) {
      const known = typeof id === "string" || typeof id === "number" ? interests.get(String(id)) : undefined;
      if (!known || refused.has(String(id))) {
        throw invalid(META_SUBCODES.invalidInterest, "Invalid Interest", `The interest with ID ${JSON.stringify(id)} is invalid or no longer available for targeting. Please remove it and try again.`, ["targeting"]);
      }
    }
    // Meta stores interests by id and reads them back with its own name: normalise so reads show what Meta would.
    const named = (list: any[]) => list.map((i) => ({ id: String(i.id), name: interests.get(String(i.id))!.name }));
    if (Array.isArray(t.interests)) t.interests = named(t.interests);
    if (Array.isArray(t.flexible_spec)) t.flexible_spec = t.flexible_spec.map((g: any) => (Array.isArray(g?.interests) ? { ...g, interests: named(g.interests) } : g));
    if (Array.isArray(t.exclusions?.interests)) t.exclusions.interests = named(t.exclusions.interests);
    return t;
  }

  function estimate(t: Record<string, any>) {
    const countries: string[] = Array.isArray(t.geo_locations?.countries) ? t.geo_locations.countries : [];
    let mau = countries.length ? countries.reduce((s, c) => s + (COUNTRY_MAU[c] ?? 10_000_000), 0) : 10_000_000;
    mau *= ((t.age_max ?? 65) - (t.age_min ?? 18) + 1) / 48;
    // Within a flexible_spec group interests are OR-ed, across groups AND-ed: each group narrows the audience.
    for (const g of Array.isArray(t.flexible_spec) ? t.flexible_spec : []) {
      const sum = (g?.interests ?? []).reduce((s: number, i: any) => s + (interests.get(String(i.id))?.audience_size_upper_bound ?? 0), 0);
      if (sum > 0) mau *= Math.min(1, sum / WORLD);
    }
    mau = Math.max(1000, Math.round(mau));
    return { estimate_dau: Math.round(mau * 0.55), estimate_mau_lower_bound: Math.round(mau * 0.85), estimate_mau_upper_bound: Math.round(mau * 1.15), estimate_ready: true };
  }

  // ---- insights (reporting) --------------------------------------------------------------------------------------
  const INSIGHT_FIELDS = ["account_id", "account_name", "account_currency", "campaign_id", "campaign_name", "adset_id", "adset_name", "ad_id", "ad_name",
    "impressions", "clicks", "inline_link_clicks", "spend", "actions", "date_start", "date_stop"];
  /** The entity ids each level reaches; fields of deeper levels are left out of its rows (approximate). */
  const LEVEL_REACH: Record<string, string[]> = { account: [], campaign: ["campaign"], adset: ["campaign", "adset"], ad: ["campaign", "adset", "ad"] };
  const FILTER_FIELDS: Record<string, "campaignId" | "adsetId" | "adId"> = { "campaign.id": "campaignId", "adset.id": "adsetId", "ad.id": "adId" };
  const DAY_MS = 86_400_000;
  const dayNo = (d: string) => Date.parse(`${d}T00:00:00Z`) / DAY_MS;
  const dayOf = (n: number) => new Date(n * DAY_MS).toISOString().slice(0, 10);
  const isDate = (d: unknown): d is string => typeof d === "string" && /^\d{4}-\d{2}-\d{2}$/.test(d) && !Number.isNaN(Date.parse(`${d}T00:00:00Z`)) && dayOf(dayNo(d)) === d;

  interface InsightsQuery { level: string; fields: string[]; since: string; until: string; increment: number | "all_days"; filters: { key: "campaignId" | "adsetId" | "adId"; ids: Set<string> }[] }

  function insightsQuery(a: MetaAdAccount, params: Record<string, unknown>): InsightsQuery {
    const level = params.level === undefined ? "account" : String(params.level);
    if (!(level in LEVEL_REACH)) throw param100("param level must be one of {ad, adset, campaign, account}");
    const fields = String(params.fields ?? "").split(",").map((f) => f.trim()).filter(Boolean);
    for (const f of fields) {
      if (!INSIGHT_FIELDS.includes(f)) throw param100(`${f} is not valid for fields param. please check https://developers.facebook.com/docs/marketing-api/reference/ads-insights/ for all valid values`);
    }
    // Meta would default to date_preset=last_30d; this stand-in wants the range spelled out (a client should).
    if (params.time_range === undefined) throw param100("This stand-in needs time_range (Meta would default to last_30d)");
    const range = jsonParam(params, "time_range") as { since?: unknown; until?: unknown } | null;
    if (!range || typeof range !== "object" || !isDate(range.since) || !isDate(range.until)) throw param100("param time_range must be an object with since and until dates (YYYY-MM-DD)");
    if (range.since > range.until) throw param100("The since date must be before the until date in time_range");
    // 37 months back from today in the account's time zone (Meta's insights retention).
    const today = new Intl.DateTimeFormat("en-CA", { timeZone: a.timezone_name, year: "numeric", month: "2-digit", day: "2-digit" }).format(new Date());
    const [y, m, d] = today.split("-").map(Number);
    const back = new Date(Date.UTC(y, m - 1 - 37, d)).toISOString().slice(0, 10);
    if (range.since < back) throw new GraphError(400, { message: "(#3018) The start date of the time range cannot be beyond 37 months from the current date", type: "OAuthException", code: 3018 });
    const inc = params.time_increment === undefined ? "all_days" : String(params.time_increment);
    let increment: number | "all_days";
    if (inc === "all_days") increment = "all_days";
    else if (/^\d+$/.test(inc) && Number(inc) >= 1 && Number(inc) <= 90) increment = Number(inc);
    else throw param100("param time_increment must be all_days, monthly or an integer between 1 and 90 (monthly is not modelled here)");
    const filters: InsightsQuery["filters"] = [];
    if (params.filtering !== undefined) {
      const list = jsonParam(params, "filtering");
      if (!Array.isArray(list)) throw param100("param filtering must be an array");
      for (const f of list as { field?: unknown; operator?: unknown; value?: unknown }[]) {
        const key = FILTER_FIELDS[String(f?.field)];
        if (!key) throw param100(`Filtering field ${String(f?.field)} is invalid`);
        const op = String(f.operator);
        if (op === "IN" && Array.isArray(f.value)) filters.push({ key, ids: new Set(f.value.map(String)) });
        else if (op === "EQUAL" && (typeof f.value === "string" || typeof f.value === "number")) filters.push({ key, ids: new Set([String(f.value)]) });
        else throw param100(`Filtering operator ${op} with this value is not supported (IN takes an array, EQUAL a value)`);
      }
    }
    return { level, fields, since: range.since, until: range.until, increment, filters };
  }

  /** Decimal strings summed exactly (no float), printed with the widest scale seen. */
  function addDecimals(values: string[]): string {
    const scale = Math.max(0, ...values.map((v) => (v.split(".")[1] ?? "").length));
    const total = values.reduce((s, v) => { const [i, f = ""] = v.split("."); return s + BigInt(i + f.padEnd(scale, "0")); }, 0n);
    const digits = total.toString().padStart(scale + 1, "0");
    return scale ? `${digits.slice(0, -scale)}.${digits.slice(-scale)}` : digits;
  }

  function computeInsights(a: MetaAdAccount, q: InsightsQuery): Record<string, unknown>[] {
    const reach = LEVEL_REACH[q.level];
    const groups = new Map<string, { start: string; stop: string; rows: MetaStatsRow[] }>();
    for (const r of stats) {
      if (r.accountId !== a.account_id || r.date < q.since || r.date > q.until) continue;
      // Filters apply to the rows before they are added up, so a campaign row covers only the filtered ad sets (approximate).
      if (!q.filters.every((f) => f.ids.has(r[f.key]))) continue;
      let start = q.since, stop = q.until;
      if (q.increment !== "all_days") {
        const from = dayNo(q.since) + Math.floor((dayNo(r.date) - dayNo(q.since)) / q.increment) * q.increment;
        start = dayOf(from);
        stop = dayOf(Math.min(from + q.increment - 1, dayNo(q.until)));
      }
      const key = [start, reach.includes("campaign") ? r.campaignId : "", reach.includes("adset") ? r.adsetId : "", reach.includes("ad") ? r.adId : ""].join("|");
      const g = groups.get(key) ?? { start, stop, rows: [] };
      g.rows.push(r);
      groups.set(key, g);
    }
    const out: { key: string; row: Record<string, unknown> }[] = [];
    for (const [key, g] of groups) {
      const first = g.rows[0];
      const sum = (f: (r: MetaStatsRow) => number | string | undefined) => g.rows.reduce((s, r) => s + BigInt(f(r) ?? 0), 0n).toString();
      const actions = new Map<string, string[]>();
      for (const r of g.rows) for (const x of r.actions ?? []) actions.set(x.action_type, [...(actions.get(x.action_type) ?? []), String(x.value)]);
      const full: Record<string, unknown> = {
        account_id: a.account_id, account_name: a.name, account_currency: a.currency,
        campaign_id: first.campaignId, campaign_name: first.campaignName ?? campaigns.get(first.campaignId)?.name ?? "",
        adset_id: first.adsetId, adset_name: first.adsetName ?? adsets.get(first.adsetId)?.name ?? "",
        ad_id: first.adId, ad_name: first.adName ?? "",
        impressions: sum((r) => r.impressions), clicks: sum((r) => r.clicks), inline_link_clicks: sum((r) => r.inlineLinkClicks),
        spend: addDecimals(g.rows.map((r) => r.spend)),
        // Meta leaves `actions` out of a row that has none.
        actions: actions.size ? [...actions].map(([action_type, v]) => ({ action_type, value: addDecimals(v) })) : undefined,
      };
      const row: Record<string, unknown> = {};
      for (const f of q.fields) {
        const entity = f.split("_")[0];
        if (["campaign", "adset", "ad"].includes(entity) && !reach.includes(entity)) continue;
        if (full[f] !== undefined) row[f] = full[f];
      }
      row.date_start = g.start;
      row.date_stop = g.stop;
      out.push({ key, row });
    }
    return out.sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0)).map((x) => x.row);
  }

  /** Graph cursor pages over a computed list (insights cursors are opaque offsets). */
  function offsetPage(rows: Record<string, unknown>[], params: Record<string, unknown>, url: URL, tokenValue: string, tag: string) {
    const limit = params.limit === undefined ? 25 : Number(params.limit);
    if (!Number.isInteger(limit) || limit < 1) throw param100("param limit must be a positive integer");
    const cursor = (n: number) => Buffer.from(`${tag}:${n}`).toString("base64url");
    let start = 0;
    if (params.after !== undefined) {
      const m = new RegExp(`^${tag}:(\\d+)$`).exec(Buffer.from(String(params.after), "base64url").toString());
      if (!m) throw param100("Invalid cursor");
      start = Number(m[1]) + 1;
    }
    const slice = rows.slice(start, start + limit);
    const body: Record<string, any> = { data: slice };
    if (!slice.length) return { ...body, paging: { cursors: {} } };
    body.paging = { cursors: { before: cursor(start), after: cursor(start + slice.length - 1) } };
    if (start + slice.length < rows.length) {
      const u = new URL(base + url.pathname);
      for (const [k, v] of url.searchParams) if (k !== "after" && k !== "before" && k !== "access_token") u.searchParams.set(k, v);
      u.searchParams.set("access_token", tokenValue); // Graph does put the token in paging links
      u.searchParams.set("limit", String(limit));
      u.searchParams.set("after", body.paging.cursors.after);
      body.paging.next = u.toString();
    }
    return body;
  }

  function syncInsights(a: MetaAdAccount, params: Record<string, unknown>, url: URL, tokenValue: string) {
    const rows = computeInsights(a, insightsQuery(a, params));
    if (rows.length > syncInsightsLimit) {
      throw new GraphError(400, {
        message: "Please reduce the amount of data you're asking for, then retry your request", type: "OAuthException", code: 100,
        error_subcode: META_SUBCODES.dataTooLarge, is_transient: false,
      });
    }
    return offsetPage(rows, params, url, tokenValue, `insights:${a.account_id}`);
  }

  function submitRun(a: MetaAdAccount, params: Record<string, unknown>) {
    const { access_token: _t, ...kept } = params;
    insightsQuery(a, kept); // a bad request fails at submit, as Meta checks parameters first
    const run: MetaReportRun = { id: `6${crypto.randomInt(100_000_000, 999_999_999)}${crypto.randomInt(1000, 9999)}`, accountId: a.account_id, params: kept, status: "Job Not Started", percent: 0, polls: 0, downloads: 0 };
    runOutcomes.set(run.id, nextRunOutcome);
    nextRunOutcome = "Job Completed";
    reportRuns.push(run);
    return { report_run_id: run.id };
  }

  const RUN_FIELDS = ["id", "account_id", "async_status", "async_percent_completion", "date_start", "date_stop", "time_ref", "time_completed", "is_running"];
  function pollRun(run: MetaReportRun, params: Record<string, unknown>) {
    const fields = String(params.fields ?? "").split(",").map((f) => f.trim()).filter(Boolean);
    for (const f of fields) if (!RUN_FIELDS.includes(f)) throw param100(`Tried accessing nonexisting field (${f}) on node type (AdReportRun)`);
    run.polls++;
    if (run.status === "Job Not Started" || run.status === "Job Started" || run.status === "Job Running") {
      if (run.polls >= runSteps) {
        run.status = runOutcomes.get(run.id) ?? "Job Completed";
        if (run.status === "Job Completed") {
          run.percent = 100;
          runResults.set(run.id, computeInsights(accounts.get(run.accountId)!, insightsQuery(accounts.get(run.accountId)!, run.params)));
        }
      } else {
        run.status = run.polls === 1 ? "Job Started" : "Job Running";
        run.percent = Math.floor((run.polls * 100) / runSteps);
      }
    }
    const range = jsonParam(run.params, "time_range") as { since: string; until: string };
    // Approximate: Graph answers an AdReportRun's status fields without `fields` being asked for.
    const full: Record<string, unknown> = {
      id: run.id, account_id: run.accountId, async_status: run.status, async_percent_completion: run.percent, date_start: range.since, date_stop: range.until,
      time_ref: 1_780_000_000, is_running: run.status !== "Job Completed" && run.status !== "Job Failed" && run.status !== "Job Skipped",
      ...(run.status === "Job Completed" ? { time_completed: Math.floor(Date.now() / 1000) } : {}),
    };
    return fields.length ? Object.fromEntries(fields.filter((f) => full[f] !== undefined).map((f) => [f, full[f]])) : full;
  }

  function runInsights(run: MetaReportRun, params: Record<string, unknown>, url: URL, tokenValue: string) {
    // Approximate wording: Meta refuses to page a run that has not completed.
    if (run.status !== "Job Completed") throw param100(`Report run ${run.id} is not complete (async_status ${run.status})`);
    run.downloads++;
    return offsetPage(runResults.get(run.id) ?? [], params, url, tokenValue, `run:${run.id}`);
  }

  // ---- writes --------------------------------------------------------------------------------------------------
  function writeAdSet(a: MetaAdSet, params: Record<string, unknown>): { success: true } {
    const record: MetaWrite = { adsetId: a.id, params: Object.fromEntries(Object.entries(params).filter(([k]) => k !== "access_token")), validateOnly: false, ok: false };
    writes.push(record);
    let exec: unknown = [];
    if (params.execution_options !== undefined) exec = jsonParam(params, "execution_options");
    if (!Array.isArray(exec)) throw param100("param execution_options must be an array");
    for (const [i, o] of exec.entries()) if (!EXECUTION_OPTIONS.includes(o)) throw param100(`execution_options[${i}] must be one of the following values: ${EXECUTION_OPTIONS.join(", ")}`);
    const validateOnly = exec.includes("validate_only");
    record.validateOnly = validateOnly;
    const next: Partial<MetaAdSet> = {};
    for (const f of BUDGET_FIELDS) {
      if (params[f] === undefined) continue;
      budgetWrites.push({ adsetId: a.id, field: f, value: params[f], validateOnly });
      if (!/^\d+$/.test(String(params[f]))) throw param100(`param ${f} must be a number`);
      (next as any)[f] = String(params[f]);
    }
    if (params.name !== undefined) {
      if (typeof params.name !== "string" || !params.name.trim()) throw param100("param name must be a non-empty string");
      next.name = params.name;
    }
    if (params.status !== undefined) {
      if (!AD_STATUSES.includes(String(params.status))) throw param100(`status must be one of the following values: ${AD_STATUSES.join(", ")}`);
      next.status = String(params.status);
    }
    // The whole spec is replaced: no merge with what is stored (that is the client's read-merge-write job).
    if (params.targeting !== undefined) next.targeting = validateTargeting(jsonParam(params, "targeting"));
    if (!validateOnly && params.targeting !== undefined && refusedAdSets.has(a.id)) {
      throw invalid(1885316, "Ad Set In Review", "This ad set can't be edited while its ads are in review. Please try again after the review is complete.", ["targeting"]);
    }
    record.ok = true;
    if (!validateOnly) Object.assign(a, next, { updated_time: isoNow() });
    return { success: true };
  }

  // ---- routing ---------------------------------------------------------------------------------------------------
  function visibleAccounts(t: { accounts: string[] | null }) {
    return [...accounts.values()].filter((a) => !t.accounts || t.accounts.includes(a.account_id));
  }

  /** The ad account a path addresses (an account, or the account of a campaign or ad set), if any. */
  function accountOf(id: string): MetaAdAccount | null {
    if (id.startsWith("act_")) return accounts.get(actId(id)) ?? null;
    const owner = adsets.get(id)?.account_id ?? campaigns.get(id)?.account_id ?? reportRuns.find((r) => r.id === id)?.accountId;
    return owner ? accounts.get(owner) ?? null : null;
  }

  function oauth(params: Record<string, unknown>) {
    if (params.client_id !== app.clientId) { counts.refused++; throw new GraphError(400, { message: "Error validating application. Invalid application ID.", type: "OAuthException", code: 101 }); }
    if (params.client_secret !== app.clientSecret) { counts.refused++; throw new GraphError(400, { message: "Error validating client secret.", type: "OAuthException", code: 1 }); }
    const issue = (expiresIn: number, accountsSeen: string[] | null) => {
      const value = `EAA${crypto.randomBytes(24).toString("base64url")}`;
      tokens.set(value, { expiresAt: Date.now() + expiresIn * 1000, accounts: accountsSeen });
      return { access_token: value, token_type: "bearer", expires_in: expiresIn };
    };
    if (params.grant_type === "fb_exchange_token") {
      const old = tokens.get(String(params.fb_exchange_token ?? ""));
      if (!old || (old.expiresAt !== null && old.expiresAt <= Date.now())) {
        counts.refused++;
        throw new GraphError(400, { message: "Invalid OAuth access token.", type: "OAuthException", code: 190 });
      }
      counts.fb_exchange_token++;
      return issue(5_184_000, old.accounts); // ~60 days; Meta has no refresh token, only this swap.
    }
    const code = codes.get(String(params.code ?? ""));
    if (!code) { counts.refused++; throw new GraphError(400, { message: "Invalid verification code format.", type: "OAuthException", code: 100, error_subcode: META_SUBCODES.codeInvalid }); }
    if (code.used) { counts.refused++; throw new GraphError(400, { message: "This authorization code has been used.", type: "OAuthException", code: 100, error_subcode: META_SUBCODES.codeUsed }); }
    // Exact match, as Meta requires the redirect_uri of the dialog request byte for byte.
    if (params.redirect_uri !== code.redirectUri) {
      counts.refused++;
      throw new GraphError(400, { message: "Error validating verification code. Please make sure your redirect_uri is identical to the one you used in the OAuth dialog request", type: "OAuthException", code: 100, error_subcode: META_SUBCODES.redirectMismatch });
    }
    code.used = true;
    counts.code++;
    return issue(3600 + crypto.randomInt(0, 1800), code.accounts); // short-lived: "valid for hours", not exactly one
  }

  function route(method: string, rest: string[], params: Record<string, unknown>, url: URL, tokenValue: string, t: { accounts: string[] | null }): unknown {
    const visible = visibleAccounts(t);
    const canSee = (accountId: string) => visible.some((a) => a.account_id === accountId);
    const [id, edge, ...more] = rest;
    if (!id || more.length) throw new GraphError(400, { message: `Unknown path components: /${rest.join("/")}`, type: "OAuthException", code: 2500 });

    if (method === "GET" && id === "search" && !edge) {
      const type = params.type;
      if (type === "adinterest") {
        const q = typeof params.q === "string" ? params.q.trim().toLowerCase() : "";
        if (!q) throw param100("The parameter q is required");
        const limit = params.limit === undefined ? 25 : Number(params.limit);
        if (!Number.isInteger(limit) || limit < 1) throw param100("param limit must be a positive integer");
        const hits = [...interests.values()].filter((i) => i.name.toLowerCase().includes(q) && !refused.has(i.id))
          .sort((a, b) => b.audience_size_upper_bound - a.audience_size_upper_bound).slice(0, limit);
        return { data: hits.map((i) => ({ id: i.id, name: i.name, audience_size_lower_bound: i.audience_size_lower_bound, audience_size_upper_bound: i.audience_size_upper_bound, path: [...i.path], description: i.description ?? null, topic: i.topic })) };
      }
      if (type === "adinterestvalid") {
        const list = jsonParam(params, "interest_fbid_list");
        if (!Array.isArray(list)) throw param100("The parameter interest_fbid_list is required");
        return {
          data: list.map((raw) => {
            const i = interests.get(String(raw));
            const valid = !!i && !refused.has(String(raw));
            return i ? { id: i.id, name: i.name, valid, audience_size_lower_bound: i.audience_size_lower_bound, audience_size_upper_bound: i.audience_size_upper_bound } : { id: String(raw), valid: false };
          }),
        };
      }
      throw param100("param type must be one of {adinterest, adinterestvalid}");
    }

    if (method === "GET" && id === "me" && edge === "adaccounts") {
      const fields = fieldList(params, "AdAccount");
      return page(visible.map((a) => ({ ...a, id: `act_${a.account_id}` })), params, url, tokenValue, (a) => view("AdAccount", a, fields));
    }

    if (id.startsWith("act_")) {
      const a = accounts.get(actId(id));
      if (!a || !canSee(a.account_id)) throw unsupported(method, id);
      if (method === "GET" && !edge) return view("AdAccount", a, fieldList(params, "AdAccount"));
      if (method === "GET" && edge === "campaigns") {
        const fields = fieldList(params, "Campaign");
        return page([...campaigns.values()].filter((c) => c.account_id === a.account_id), params, url, tokenValue, (c) => view("Campaign", c, fields));
      }
      if (method === "GET" && edge === "adsets") {
        const fields = fieldList(params, "AdSet");
        return page([...adsets.values()].filter((s) => s.account_id === a.account_id), params, url, tokenValue, (s) => view("AdSet", s, fields));
      }
      if (edge === "insights" && method === "GET") return syncInsights(a, params, url, tokenValue);
      if (edge === "insights" && method === "POST") return submitRun(a, params);
      if (method === "GET" && edge === "delivery_estimate") {
        if (params.targeting_spec === undefined) throw param100("The parameter targeting_spec is required");
        if (params.optimization_goal === undefined) throw param100("The parameter optimization_goal is required");
        return deliveryEstimate(params, null);
      }
      throw unsupported(method, id);
    }

    const run = reportRuns.find((r) => r.id === id);
    if (run && canSee(run.accountId)) {
      if (method === "GET" && !edge) return pollRun(run, params);
      if (method === "GET" && edge === "insights") return runInsights(run, params, url, tokenValue);
      throw unsupported(method, id);
    }

    const campaign = campaigns.get(id);
    if (campaign && canSee(campaign.account_id)) {
      if (method === "GET" && !edge) return view("Campaign", campaign, fieldList(params, "Campaign"));
      if (method === "GET" && edge === "adsets") {
        const fields = fieldList(params, "AdSet");
        return page([...adsets.values()].filter((s) => s.campaign_id === campaign.id), params, url, tokenValue, (s) => view("AdSet", s, fields));
      }
      throw unsupported(method, id);
    }

    const adset = adsets.get(id);
    if (adset && canSee(adset.account_id)) {
      if (method === "GET" && !edge) return view("AdSet", adset, fieldList(params, "AdSet"));
      if (method === "POST" && !edge) return writeAdSet(adset, params);
      if (method === "GET" && edge === "delivery_estimate") return deliveryEstimate(params, adset);
    }
    throw unsupported(method, id);
  }

  function deliveryEstimate(params: Record<string, unknown>, adset: MetaAdSet | null) {
    const goal = params.optimization_goal;
    if (goal !== undefined && !OPTIMIZATION_GOALS.includes(String(goal))) throw param100(`optimization_goal must be one of the following values: ${OPTIMIZATION_GOALS.join(", ")}`);
    // Without targeting_spec the ad set's stored targeting is estimated; with one, the proposed spec (a preview).
    const spec = params.targeting_spec !== undefined ? validateTargeting(jsonParam(params, "targeting_spec")) : adset!.targeting;
    return { data: [estimate(spec)] };
  }

  const authorize = authorizeEndpoint({
    provider: "Meta", clientId: app.clientId,
    grants: () => [...accounts.values()].map((a) => `Ad account ${a.id} (${a.name})`),
    issue(q) {
      const code = `AQ${crypto.randomBytes(32).toString("base64url")}`;
      codes.set(code, { redirectUri: q.get("redirect_uri")!, accounts: null, used: false });
      return { code };
    },
  });

  const server = bodyServer((req, res, url, raw) => {
    if (url.pathname === `/${version}/dialog/oauth`) return authorize(req, res, url, raw);
    const method = (req.method ?? "GET").toUpperCase();
    const fbtraceId = crypto.randomBytes(8).toString("base64url");
    const { authorization: _auth, ...headers } = req.headers;
    const record: MetaRequest = { method, path: url.pathname, query: {}, headers, body: null, auth: null, fbtraceId, at: Date.now() };
    requests.push(record);
    let extra: Record<string, string> = {};
    const send = (status: number, body: unknown) => {
      record.status = status;
      res.writeHead(status, { "content-type": "application/json; charset=UTF-8", "x-fb-trace-id": fbtraceId, "x-fb-rev": "1029384756", "facebook-api-version": version, ...extra });
      res.end(JSON.stringify(body));
    };
    let account: MetaAdAccount | null = null;
    let visible: MetaAdAccount[] = [];
    let throttled: MetaFaultKind | null = null;
    let regain = 0;
    const { access_token: _q, ...query } = Object.fromEntries(url.searchParams);
    record.query = query;
    try {
      const { params, body } = readParams(req, url, raw);
      if (body) { const { access_token: _b, ...rest } = body; record.body = rest; }
      const m = /^\/([^/]+)(?:\/(.*))?$/.exec(url.pathname);
      const ver = m?.[1] ?? "";
      if (ver !== version) {
        const older = /^v(\d+)\.(\d+)$/.exec(ver);
        const mine = /^v(\d+)\.(\d+)$/.exec(version)!;
        if (older && Number(older[1]) * 1000 + Number(older[2]) < Number(mine[1]) * 1000 + Number(mine[2])) {
          throw new GraphError(400, { message: `(#2635) You are calling a deprecated version of the Ads API. Please update to the latest version: ${version}.`, type: "OAuthException", code: 2635 });
        }
        throw new GraphError(400, { message: `Unknown path components: ${url.pathname}`, type: "OAuthException", code: 2500 });
      }
      const rest = (m?.[2] ?? "").split("/").filter(Boolean).map(decodeURIComponent);
      if (method === "GET" && rest.join("/") === "oauth/access_token") return send(200, oauth(params));
      const tok = token(req, url, body);
      record.auth = tok.from;
      const t = checkToken(tok.value);
      visible = visibleAccounts(t);
      account = rest[0] ? accountOf(rest[0]) : null;
      if (account && !visible.includes(account)) account = null;
      appCalls++;
      for (const a of account ? [account] : []) {
        bucCalls.set(a.businessId, (bucCalls.get(a.businessId) ?? 0) + 1);
        accountCalls.set(a.account_id, (accountCalls.get(a.account_id) ?? 0) + 1);
      }
      if (fault && fault.n > 0) {
        fault.n--;
        throttled = fault.kind;
        regain = fault.regainMinutes;
        record.throttled = fault.kind !== "transient";
        throw faultError(fault.kind);
      }
      if (method !== "GET" && method !== "POST") throw unsupported(method, rest[0] ?? "");
      const answer = route(method, rest, params, url, tok.value!, t);
      extra = usageHeaders(account, visible, null, 0);
      // Insights answers also carry their own throttle header (percent of the insights quota used; the numbers here are approximate).
      if (rest[1] === "insights" && account) extra["X-FB-Ads-Insights-Throttle"] = JSON.stringify({ app_id_util_pct: Math.min(100, appCalls), acc_id_util_pct: Math.min(100, accountCalls.get(account.account_id) ?? 0), ads_api_access_tier: "development_access" });
      return send(200, answer);
    } catch (e) {
      if (!(e instanceof GraphError)) {
        extra = usageHeaders(account, visible, null, 0);
        return send(500, { error: { message: "An unknown error occurred", type: "OAuthException", code: 1, is_transient: true, fbtrace_id: fbtraceId } });
      }
      extra = { ...usageHeaders(account, visible, throttled, regain), ...e.headers };
      return send(e.status, { error: { ...e.error, fbtrace_id: fbtraceId } });
    }
  });

  const base = await listenLocal(server, opts.port);
  const api: MetaAdsServer = {
    faults: peerFaults(server, (m, url, body) => m === "POST" && /^\/v[\d.]+\/\d+$/.test(url.pathname) && !(url.search + body).includes("validate_only")),
    url: base,
    authorizeUrl: `${base}/${version}/dialog/oauth`,
    tokenUrl: `${base}/${version}/oauth/access_token`,
    version,
    app,
    requests,
    writes,
    budgetWrites,
    counts,
    addToken(value, o = {}) {
      tokens.set(value, { expiresAt: o.expiresInS === undefined ? null : Date.now() + o.expiresInS * 1000, accounts: o.accounts?.map(actId) ?? null });
    },
    expireToken(value) { const t = tokens.get(value); if (t) t.expiresAt = Date.now() - 1000; },
    addCode(code, o) { codes.set(code, { redirectUri: o.redirectUri, accounts: o.accounts?.map(actId) ?? null, used: false }); },
    addAdAccount(a) {
      const id = actId(a.id);
      const acc: MetaAdAccount = {
        id: `act_${id}`, account_id: id, name: a.name, currency: a.currency ?? "USD", timezone_name: a.timezoneName ?? "America/Los_Angeles", account_status: 1,
        businessId: a.businessId ?? `9${id.padStart(14, "0")}`, businessName: a.businessName ?? `${a.name} business`,
      };
      accounts.set(id, acc);
      return clone(acc);
    },
    addCampaign(c) {
      const now = isoNow();
      const camp: MetaCampaign = { id: c.id ?? numericId(), account_id: actId(c.accountId), name: c.name, status: c.status ?? "ACTIVE", objective: c.objective ?? "OUTCOME_TRAFFIC", created_time: now, updated_time: now };
      campaigns.set(camp.id, camp);
      return clone(camp);
    },
    addAdSet(adsetId, a) {
      const now = isoNow();
      const s: MetaAdSet = {
        id: adsetId, account_id: actId(a.accountId), campaign_id: a.campaignId, name: a.name, status: a.status ?? "ACTIVE", targeting: clone(a.targeting),
        optimization_goal: a.optimizationGoal ?? "LINK_CLICKS", billing_event: "IMPRESSIONS", daily_budget: "2000", created_time: now, updated_time: now,
      };
      adsets.set(adsetId, s);
      return clone(s);
    },
    targetingOf: (id) => (adsets.has(id) ? clone(adsets.get(id)!.targeting) : undefined),
    setTargeting(id, t) {
      const s = adsets.get(id);
      if (!s) throw new Error(`no ad set ${id}`);
      s.targeting = clone(t);
      s.updated_time = isoNow();
    },
    adSet: (id) => (adsets.has(id) ? clone(adsets.get(id)!) : undefined),
    addInterest(i) {
      const full: MetaInterest = { audience_size_lower_bound: 1_000_000, audience_size_upper_bound: 1_200_000, path: ["Interests", i.name], topic: "Hobbies and activities", ...clone(i) };
      interests.set(full.id, full);
      return clone(full);
    },
    refuseInterest(id) { refused.add(id); },
    refuseAdSet(adsetId) { refusedAdSets.add(adsetId); },
    failNext(kind, n, o = {}) { fault = { kind, n, regainMinutes: o.regainMinutes ?? 5 }; },
    reportRuns,
    addStats(...rows) {
      for (const r of rows) {
        if (!/^\d{4}-\d{2}-\d{2}$/.test(r.date)) throw new Error(`addStats: date ${r.date} is not YYYY-MM-DD`);
        if (!/^\d+(\.\d+)?$/.test(r.spend)) throw new Error(`addStats: spend ${r.spend} is not a decimal string`);
        stats.push(clone({ ...r, accountId: actId(r.accountId) }));
      }
    },
    setSyncInsightsLimit(n) { syncInsightsLimit = n; },
    setReportRunSteps(n) { runSteps = Math.max(1, n); },
    failNextReportRun(status) { nextRunOutcome = status; },
    resetLog() {
      requests.length = 0; writes.length = 0; budgetWrites.length = 0; fault = null; appCalls = 0;
      bucCalls.clear(); accountCalls.clear(); counts.code = 0; counts.fb_exchange_token = 0; counts.refused = 0;
    },
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
  return api;
}
