import crypto from "node:crypto";
import type http from "node:http";
import { authorizeEndpoint } from "./consent-page.ts";
import { bodyServer, listenLocal, type StandInOptions } from "./listen.ts";
import { peerFaults, type PeerFaults } from "./faults.ts";

// A local stand-in for TikTok API for Business (Marketing API v1.3), strict where a
// connector could get it wrong:
// - Paths under `/open_api/v1.3/` only; anything else is TikTok's 40002-style "path not found" envelope (HTTP 404).
// - Every answer is the envelope `{code, message, request_id, data}` with HTTP 200, failures included: `code != 0`
//   is the failure (a client must read `code`, not the status). `request_id` is echoed in `X-Tt-Logid`.
// - Auth: `Access-Token: <token>` only. `Authorization: Bearer` is not read (40104 "Access token is null"); an
//   unknown or revoked token is 40105. A token sees the advertisers it was authorized for; another one is 40001.
// - OAuth: `POST /oauth2/access_token/` with JSON `{app_id, secret, auth_code}`: a wrong app id or secret is 40101, an
//   unknown, used or expired (10 min) auth code 40110. The answer is a long-term token (no expires_in, no refresh
//   token) with `advertiser_ids` and `scope`. `POST /oauth2/revoke_token/` `{app_id, secret, access_token}` ends it.
//   `GET /oauth2/advertiser/get/?app_id&secret` lists the token's advertisers `{list:[{advertiser_id, advertiser_name}]}`.
// - Reads (GET, list/object parameters as JSON strings): /campaign/get/ and /adgroup/get/ (`fields`, `filtering`
//   {campaign_ids, adgroup_ids <= 100}, `page`, `page_size` 1-1000, answer `{list, page_info:{page, page_size,
//   total_number, total_page}}`; deleted ad groups are left out, as TikTok's default STATUS_NOT_DELETE does).
// - Interest lookups: /tool/interest_keyword/recommend/ (`keyword`, FUZZ_MATCH = name contains it, `limit` 1-50,
//   keywords with `status` EFFECTIVE/INEFFECTIVE and `keyword_status` ONLINE/OFFLINE), /tool/interest_keyword/get/
//   (`keyword_query` [{keyword_id}] <= 50), /tool/interest_category/ (the category tree).
// - Writes: `POST /adgroup/update/` (JSON). Each list field sent REPLACES that list; fields not sent are kept.
//   Refused (40002, nothing saved): unknown or non-EFFECTIVE interest keyword ids, unknown category ids, interest
//   keywords together with purchase-intention keywords ("keyword conflict"), a deleted ad group.
//   Budget and bid fields are accepted (TikTok would) and recorded in `budgetWrites`, so tests can prove our
//   guardrails never send them. Smart+ campaigns (`is_smart_performance_campaign: true` on the campaign and its ad
//   groups; TikTok automates their targeting) refuse any targeting field on /adgroup/update/ with 40002 (code and
//   message approximate: unverified against a live Smart+ ad group).
// - Reporting: `GET /advertiser/info/` (`advertiser_ids` JSON list <= 100, `fields`; answer `{list:
//   [{advertiser_id, name, currency, timezone, display_timezone}]}`; every id must be the token's, else 40001) and the
//   synchronous BASIC report `GET /report/integrated/get/` (`report_type` BASIC, `data_level` AUCTION_CAMPAIGN |
//   AUCTION_ADGROUP | AUCTION_AD, `dimensions` = the level's id [+ stat_time_day], `metrics` from impressions, clicks,
//   spend, conversion and the attribute metrics the level reaches (campaign_name ... ad_name), start_date/end_date
//   (at most 30 days with stat_time_day, 365 without), `filtering` [{field_name: campaign_ids|adgroup_ids|ad_ids,
//   filter_type: IN, filter_value: "<JSON list of <= 100 ids>"}], page/page_size 1-1000). Answer `{list: [{dimensions,
//   metrics}], page_info}` with every metric a string: spend a decimal in the advertiser's currency, stat_time_day
//   "YYYY-MM-DD 00:00:00" in the advertiser's time zone. Stats are seeded per ad and day as TikTok keeps them
//   (`addStats`, the day already in the advertiser's time zone) and summed up to the level asked; only entities with
//   stats in the range come back (approximate: TikTok's handling of zero rows is unverified).
// - Faults: the next n API calls answer 40100 (QPS/QPM/QPD limit, no hint of how long: TikTok gives none) or 50000.
// Where TikTok's docs are silent or unverified (exact messages, the 40001/40002/40104/40105/50000 codes, response field names), this
// follows TikTok's public docs and SDK models as we know them.

export const TIKTOK_CODES = { ok: 0, noPermission: 40001, invalidParam: 40002, rateLimited: 40100, badApp: 40101, tokenMissing: 40104, tokenInvalid: 40105, badAuthCode: 40110, systemError: 50000 } as const;

export type TikTokFault = "rate_limit" | "system_error";

export interface TikTokCampaign { campaign_id: string; advertiser_id: string; campaign_name: string; operation_status: string; objective_type: string; budget: number; is_smart_performance_campaign: boolean; create_time: string; modify_time: string }
export interface TikTokAdGroup {
  adgroup_id: string; advertiser_id: string; campaign_id: string; adgroup_name: string; operation_status: string; secondary_status: string;
  budget: number; bid_price: number; location_ids: string[]; age_groups: string[]; gender: string;
  interest_category_ids: string[]; interest_keyword_ids: string[]; purchase_intention_keyword_ids: string[];
  is_smart_performance_campaign: boolean; deleted: boolean; create_time: string; modify_time: string;
}
export interface TikTokInterestKeyword { keyword_id: string; keyword: string; language: string; status: "EFFECTIVE" | "INEFFECTIVE"; keyword_status: "ONLINE" | "OFFLINE" }
export interface TikTokInterestCategory { interest_category_id: string; interest_category_name: string; level: number; sub_category_ids: string[] }

export interface TikTokRequest {
  method: string;
  /** Path as sent, `/open_api/v1.3/` included. */
  path: string;
  query: Record<string, string>;
  /** Request headers, access-token and authorization removed. */
  headers: http.IncomingHttpHeaders;
  /** Parsed JSON body (secrets and tokens removed); null when empty. */
  body: Record<string, unknown> | null;
  /** How the token came: the Access-Token header, an Authorization header (which TikTok ignores), or none. */
  auth: "access-token" | "authorization" | null;
  /** The advertiser addressed (query or body `advertiser_id`). */
  advertiserId: string | null;
  /** Envelope code answered. */
  code?: number;
  requestId: string;
  at: number;
  throttled?: boolean;
}

export interface TikTokAd { ad_id: string; advertiser_id: string; adgroup_id: string; ad_name: string }
export interface TikTokAdvertiser { advertiser_id: string; name: string; currency: string; timezone: string; display_timezone: string }
/** One ad's stats for one day, in TikTok's own units: spend a decimal string of the advertiser's currency. */
export interface TikTokStat { ad_id: string; date: string; impressions: number; clicks: number; spend: string; conversion: number }

export interface TikTokWrite { adgroupId: string; body: Record<string, unknown>; ok: boolean; code: number }

export interface TikTokAdsServer {
  url: string;
  /** The advertiser authorization page (TIKTOK_ADS_AUTHORIZE_URL, /portal/auth): approving sends back an auth_code for every advertiser. */
  authorizeUrl: string;
  tokenUrl: string;
  revokeUrl: string;
  version: string;
  app: { appId: string; secret: string };
  /** Registers an API token that sees these advertisers (default: all). */
  addToken(token: string, opts?: { advertisers?: string[] }): void;
  isRevoked(token: string): boolean;
  /** Registers an auth_code as the portal would have issued it (valid 10 minutes unless told). */
  addAuthCode(code: string, opts: { advertisers: string[]; expiresInS?: number }): void;
  /** `smartPlus`: a Smart+ campaign, whose ad groups' targeting TikTok does not let be edited. */
  addCampaign(c: { advertiserId: string; name: string; id?: string; status?: string; smartPlus?: boolean }): TikTokCampaign;
  addAdGroup(a: { advertiserId: string; campaignId: string; name: string; id?: string; interestCategoryIds?: string[]; interestKeywordIds?: string[]; purchaseIntentionKeywordIds?: string[]; locationIds?: string[] }): TikTokAdGroup;
  adGroup(id: string): TikTokAdGroup | undefined;
  /** Changes an ad group's targeting behind the client's back. */
  setTargeting(id: string, patch: Partial<Pick<TikTokAdGroup, "interest_category_ids" | "interest_keyword_ids" | "purchase_intention_keyword_ids">>): void;
  deleteAdGroup(id: string): void;
  addInterestKeyword(k: Partial<TikTokInterestKeyword> & { keyword_id: string; keyword: string }): TikTokInterestKeyword;
  addInterestCategory(c: { id: string; name: string; level?: number }): TikTokInterestCategory;
  keywordName(id: string): string | undefined;
  categoryName(id: string): string | undefined;
  /** Writes to this ad group are refused from now on (40002: an ad group TikTok will not let be edited). */
  refuseAdGroup(id: string): void;
  /** An advertiser's account facts for /advertiser/info/ (currency ISO 4217; timezone e.g. "Etc/GMT+8", display_timezone IANA). */
  addAdvertiser(a: { advertiserId: string; currency: string; timezone: string; displayTimezone?: string; name?: string }): TikTokAdvertiser;
  addAd(a: { advertiserId: string; adgroupId: string; name: string; id?: string }): TikTokAd;
  /** One ad's stats for one day (the day in the advertiser's time zone), as TikTok stores them. */
  addStats(s: { adId: string; date: string; impressions?: number; clicks?: number; spend?: string; conversion?: number }): void;
  /** Report answers wait this long (ms) before they are sent, so a test can abort one in flight. */
  delayReports(ms: number): void;
  failNext(kind: TikTokFault, n: number): void;
  requests: TikTokRequest[];
  /** Every /adgroup/update/ that passed auth and throttling, refused ones included. */
  writes: TikTokWrite[];
  budgetWrites: { adgroupId: string; field: string; value: unknown }[];
  counts: { exchanged: number; revoked: number; refused: number };
  resetLog(): void;
  /** Failures around a write, on request (faults.ts): its answer lost after it was applied, applied late, a restart. */
  faults: PeerFaults;
  close(): Promise<void>;
}

const SEED_CATEGORIES: TikTokInterestCategory[] = [
  { interest_category_id: "10", interest_category_name: "Sports & Outdoors", level: 1, sub_category_ids: ["1001", "1002"] },
  { interest_category_id: "1001", interest_category_name: "Running", level: 2, sub_category_ids: [] },
  { interest_category_id: "1002", interest_category_name: "Cycling", level: 2, sub_category_ids: [] },
  { interest_category_id: "20", interest_category_name: "Tech & Electronics", level: 1, sub_category_ids: ["2001"] },
  { interest_category_id: "2001", interest_category_name: "Smartphones", level: 2, sub_category_ids: [] },
  { interest_category_id: "30", interest_category_name: "Food & Beverage", level: 1, sub_category_ids: [] },
];
const SEED_KEYWORDS: TikTokInterestKeyword[] = [
  { keyword_id: "710001", keyword: "coffee", language: "en", status: "EFFECTIVE", keyword_status: "ONLINE" },
  { keyword_id: "710002", keyword: "coffee beans", language: "en", status: "EFFECTIVE", keyword_status: "ONLINE" },
  { keyword_id: "710003", keyword: "iced coffee recipes", language: "en", status: "EFFECTIVE", keyword_status: "ONLINE" },
  { keyword_id: "710004", keyword: "coffee grinder repair", language: "en", status: "INEFFECTIVE", keyword_status: "ONLINE" },
  { keyword_id: "710005", keyword: "running shoes", language: "en", status: "EFFECTIVE", keyword_status: "ONLINE" },
  { keyword_id: "710006", keyword: "trail running", language: "en", status: "EFFECTIVE", keyword_status: "ONLINE" },
  { keyword_id: "710007", keyword: "running playlist", language: "en", status: "EFFECTIVE", keyword_status: "OFFLINE" },
];

const CAMPAIGN_FIELDS = ["campaign_id", "advertiser_id", "campaign_name", "operation_status", "objective_type", "budget", "is_smart_performance_campaign", "create_time", "modify_time"];
const ADGROUP_FIELDS = ["adgroup_id", "advertiser_id", "campaign_id", "adgroup_name", "operation_status", "secondary_status", "budget", "bid_price", "location_ids", "age_groups", "gender",
  "interest_category_ids", "interest_keyword_ids", "purchase_intention_keyword_ids", "is_smart_performance_campaign", "create_time", "modify_time"];
const LIST_FIELDS = ["interest_category_ids", "interest_keyword_ids", "purchase_intention_keyword_ids", "location_ids", "age_groups"] as const;
const BUDGET_FIELDS = ["budget", "bid_price", "conversion_bid_price", "deep_cpa_bid", "roas_bid"];

class Refusal extends Error {
  constructor(readonly code: number, message: string, readonly status = 200) { super(message); }
}
const invalid = (message: string) => new Refusal(TIKTOK_CODES.invalidParam, message);
const clone = <T>(v: T): T => structuredClone(v);
const now = () => new Date().toISOString().replace("T", " ").slice(0, 19);
const requestIdOf = () => `${new Date().toISOString().replace(/\D/g, "").slice(0, 14)}${crypto.randomBytes(10).toString("hex").toUpperCase()}`;
const numericId = () => `17${crypto.randomInt(100_000_000, 999_999_999)}${crypto.randomInt(1_000_000, 9_999_999)}`;

export async function startTikTokAdsServer(opts: { version?: string } & StandInOptions = {}): Promise<TikTokAdsServer> {
  const version = opts.version ?? "v1.3";
  const prefix = `/open_api/${version}/`;
  const app = opts.app ? { appId: opts.app.clientId, secret: opts.app.clientSecret } : { appId: String(crypto.randomInt(7_000_000_000, 7_999_999_999)), secret: crypto.randomBytes(20).toString("hex") };
  const tokens = new Map<string, { advertisers: string[] | null; revoked: boolean }>();
  const codes = new Map<string, { advertisers: string[]; expiresAt: number; used: boolean }>();
  const campaigns = new Map<string, TikTokCampaign>();
  const adgroups = new Map<string, TikTokAdGroup>();
  const keywords = new Map(SEED_KEYWORDS.map((k) => [k.keyword_id, clone(k)]));
  const categories = new Map(SEED_CATEGORIES.map((c) => [c.interest_category_id, clone(c)]));
  const refusedAdGroups = new Set<string>();
  const advertisers = new Map<string, TikTokAdvertiser>();
  const ads = new Map<string, TikTokAd>();
  const stats: TikTokStat[] = [];
  let reportDelayMs = 0;
  const delayed = new Set<NodeJS.Timeout>();
  const requests: TikTokRequest[] = [];
  const writes: TikTokWrite[] = [];
  const budgetWrites: TikTokAdsServer["budgetWrites"] = [];
  const counts = { exchanged: 0, revoked: 0, refused: 0 };
  let fault: { kind: TikTokFault; n: number } | null = null;

  /** A GET parameter TikTok takes as a JSON string (lists, objects). */
  function jsonParam(query: Record<string, string>, name: string): unknown {
    if (query[name] === undefined) return undefined;
    try { return JSON.parse(query[name]); } catch { throw invalid(`${name}: Not a valid JSON.`); }
  }
  function pageParams(query: Record<string, string>) {
    const page = query.page === undefined ? 1 : Number(query.page);
    const size = query.page_size === undefined ? 10 : Number(query.page_size);
    if (!Number.isInteger(page) || page < 1) throw invalid("page: Must be greater than or equal to 1.");
    if (!Number.isInteger(size) || size < 1 || size > 1000) throw invalid("page_size: Must be between 1 and 1000.");
    return { page, size };
  }
  function paged<T extends object>(rows: T[], query: Record<string, string>, allowed: string[]) {
    const { page, size } = pageParams(query);
    const fields = jsonParam(query, "fields");
    if (fields !== undefined && (!Array.isArray(fields) || fields.some((f) => !allowed.includes(String(f))))) throw invalid(`fields: Invalid field. Allowed: ${allowed.join(", ")}`);
    const pick = (r: T) => (fields ? Object.fromEntries((fields as string[]).map((f) => [f, clone((r as Record<string, unknown>)[f])])) : Object.fromEntries(allowed.map((f) => [f, clone((r as Record<string, unknown>)[f])])));
    return {
      list: rows.slice((page - 1) * size, page * size).map(pick),
      page_info: { page, page_size: size, total_number: rows.length, total_page: Math.ceil(rows.length / size) },
    };
  }
  const idList = (v: unknown, name: string, max: number): string[] | undefined => {
    if (v === undefined) return undefined;
    if (!Array.isArray(v) || v.length < 1 || v.length > max) throw invalid(`filtering.${name}: Length must be between 1 and ${max}.`);
    return v.map(String);
  };

  /** The ids an `advertiser/info/` call asks for (its advertiser_ids, checked against the token like advertiser_id). */
  function advertiserIdsOf(query: Record<string, string>): string[] {
    const ids = jsonParam(query, "advertiser_ids");
    if (!Array.isArray(ids) || ids.length < 1 || ids.length > 100) throw invalid("advertiser_ids: Length must be between 1 and 100.");
    return ids.map(String);
  }

  /** Decimal strings summed exactly (scaled integers), written with the largest scale seeded (at least 2). */
  function decimalSum(values: string[]): string {
    const scale = Math.max(2, ...values.map((v) => (v.split(".")[1] ?? "").length));
    const total = values.reduce((t, v) => {
      const [i, f = ""] = v.replace("-", "").split(".");
      const n = BigInt(i || "0") * 10n ** BigInt(scale) + BigInt(f.padEnd(scale, "0") || "0");
      return t + (v.startsWith("-") ? -n : n);
    }, 0n);
    const abs = (total < 0n ? -total : total).toString().padStart(scale + 1, "0");
    return `${total < 0n ? "-" : ""}${abs.slice(0, -scale)}.${abs.slice(-scale)}`;
  }

  const REPORT_LEVELS: Record<string, { id: "campaign_id" | "adgroup_id" | "ad_id"; attributes: string[] }> = {
    AUCTION_CAMPAIGN: { id: "campaign_id", attributes: ["campaign_id", "campaign_name"] },
    AUCTION_ADGROUP: { id: "adgroup_id", attributes: ["campaign_id", "campaign_name", "adgroup_id", "adgroup_name"] },
    AUCTION_AD: { id: "ad_id", attributes: ["campaign_id", "campaign_name", "adgroup_id", "adgroup_name", "ad_id", "ad_name"] },
  };
  const REPORT_METRICS = ["impressions", "clicks", "spend", "conversion"];
  const dayNo = (d: string) => Date.UTC(Number(d.slice(0, 4)), Number(d.slice(5, 7)) - 1, Number(d.slice(8, 10))) / 86_400_000;
  const isDate = (d: unknown): d is string => typeof d === "string" && /^\d{4}-\d{2}-\d{2}$/.test(d) && new Date(dayNo(d) * 86_400_000).toISOString().slice(0, 10) === d;

  function report(query: Record<string, string>, advertiser: string) {
    if (query.report_type !== "BASIC") throw invalid("report_type: Only BASIC is modelled by this stand-in.");
    const level = REPORT_LEVELS[query.data_level ?? ""];
    if (!level) throw invalid("data_level: Must be one of AUCTION_CAMPAIGN, AUCTION_ADGROUP, AUCTION_AD.");
    const dims = jsonParam(query, "dimensions");
    if (!Array.isArray(dims) || !dims.length) throw invalid("dimensions: Missing data for required field.");
    const idDims = dims.filter((d) => ["campaign_id", "adgroup_id", "ad_id"].includes(String(d)));
    if (idDims.length !== 1 || idDims[0] !== level.id) throw invalid(`dimensions: ${query.data_level} takes the ID dimension ${level.id}.`);
    if (dims.some((d) => d !== level.id && d !== "stat_time_day")) throw invalid("dimensions: Invalid dimension.");
    const daily = dims.includes("stat_time_day");
    const metrics = (jsonParam(query, "metrics") ?? ["spend", "impressions"]) as unknown[];
    if (!Array.isArray(metrics) || metrics.some((m) => !REPORT_METRICS.includes(String(m)) && !level.attributes.includes(String(m)))) {
      throw invalid(`metrics: Invalid metric for ${query.data_level}.`);
    }
    const { start_date: from, end_date: to } = query;
    if (!isDate(from) || !isDate(to)) throw invalid("start_date, end_date: Required, in the format YYYY-MM-DD.");
    if (from > to) throw invalid("end_date: Must be later than or equal to start_date.");
    const span = dayNo(to) - dayNo(from) + 1;
    const max = daily ? 30 : 365;
    if (span > max) throw invalid(`The time range between start_date and end_date can not exceed ${max} days${daily ? " when stat_time_day is a dimension" : ""}.`);
    const filters = (jsonParam(query, "filtering") ?? []) as unknown[];
    if (!Array.isArray(filters)) throw invalid("filtering: Not a valid list.");
    const only: Partial<Record<"campaign_id" | "adgroup_id" | "ad_id", string[]>> = {};
    for (const f of filters as Record<string, unknown>[]) {
      const field = { campaign_ids: "campaign_id", adgroup_ids: "adgroup_id", ad_ids: "ad_id" }[String(f?.field_name)] as "campaign_id" | "adgroup_id" | "ad_id" | undefined;
      if (!field) throw invalid(`filtering.field_name: Invalid field ${String(f?.field_name)}.`);
      if (f.filter_type !== "IN") throw invalid("filtering.filter_type: Must be IN for ID filters.");
      if (typeof f.filter_value !== "string") throw invalid("filtering.filter_value: Must be a JSON string.");
      let ids: unknown;
      try { ids = JSON.parse(f.filter_value); } catch { throw invalid("filtering.filter_value: Not a valid JSON."); }
      if (!Array.isArray(ids) || ids.length < 1 || ids.length > 100) throw invalid("filtering.filter_value: Length must be between 1 and 100.");
      only[field] = ids.map(String);
    }
    const groups = new Map<string, { key: Record<string, string>; stats: TikTokStat[] }>();
    for (const st of stats) {
      const ad = ads.get(st.ad_id)!;
      const group = adgroups.get(ad.adgroup_id)!;
      const ids = { campaign_id: group.campaign_id, adgroup_id: ad.adgroup_id, ad_id: ad.ad_id };
      if (ad.advertiser_id !== advertiser || st.date < from || st.date > to) continue;
      if ((Object.keys(only) as (keyof typeof ids)[]).some((k) => !only[k]!.includes(ids[k]))) continue;
      const key = { [level.id]: ids[level.id], ...(daily ? { stat_time_day: `${st.date} 00:00:00` } : {}) };
      const k = JSON.stringify(key);
      if (!groups.has(k)) groups.set(k, { key, stats: [] });
      groups.get(k)!.stats.push(st);
    }
    const rows = [...groups.values()].sort((a, b) => (JSON.stringify(a.key) < JSON.stringify(b.key) ? -1 : 1)).map(({ key, stats: mine }) => {
      const ad = ads.get(mine[0].ad_id)!;
      const group = adgroups.get(ad.adgroup_id)!;
      const attrs: Record<string, string> = {
        campaign_id: group.campaign_id, campaign_name: campaigns.get(group.campaign_id)?.campaign_name ?? "",
        adgroup_id: group.adgroup_id, adgroup_name: group.adgroup_name, ad_id: ad.ad_id, ad_name: ad.ad_name,
      };
      const values: Record<string, string> = {
        impressions: String(mine.reduce((t, x) => t + x.impressions, 0)),
        clicks: String(mine.reduce((t, x) => t + x.clicks, 0)),
        spend: decimalSum(mine.map((x) => x.spend)),
        conversion: String(mine.reduce((t, x) => t + x.conversion, 0)),
      };
      return { dimensions: key, metrics: Object.fromEntries((metrics as string[]).map((m) => [m, values[m] ?? attrs[m]])) };
    });
    const { page, size } = pageParams(query);
    return { list: rows.slice((page - 1) * size, page * size), page_info: { page, page_size: size, total_number: rows.length, total_page: Math.ceil(rows.length / size) } };
  }

  function oauth(path: string, body: Record<string, unknown>) {
    if (body.app_id !== app.appId || body.secret !== app.secret) { counts.refused++; throw new Refusal(TIKTOK_CODES.badApp, "The app_id or secret is invalid."); }
    if (path === "oauth2/revoke_token/") {
      const t = tokens.get(String(body.access_token ?? ""));
      if (!t || t.revoked) { counts.refused++; throw new Refusal(TIKTOK_CODES.tokenInvalid, "Access token is incorrect or has been revoked."); }
      t.revoked = true;
      counts.revoked++;
      return {};
    }
    const code = codes.get(String(body.auth_code ?? ""));
    if (!code || code.used || code.expiresAt <= Date.now()) { counts.refused++; throw new Refusal(TIKTOK_CODES.badAuthCode, "Auth code is invalid or expired."); }
    code.used = true;
    counts.exchanged++;
    const value = crypto.randomBytes(20).toString("hex");
    tokens.set(value, { advertisers: [...code.advertisers], revoked: false });
    return { access_token: value, advertiser_ids: [...code.advertisers], scope: [4, 5, 9] };
  }

  function writeAdGroup(body: Record<string, unknown>, advertiser: string) {
    const id = String(body.adgroup_id ?? "");
    if (!id) throw invalid("adgroup_id: Missing data for required field.");
    const a = adgroups.get(id);
    const record: TikTokWrite = { adgroupId: id, body: clone(body), ok: false, code: TIKTOK_CODES.invalidParam };
    writes.push(record);
    for (const f of BUDGET_FIELDS) if (body[f] !== undefined) budgetWrites.push({ adgroupId: id, field: f, value: body[f] });
    if (!a || a.advertiser_id !== advertiser || a.deleted) throw invalid(`adgroup_id: Ad group ${id} does not exist.`);
    if (refusedAdGroups.has(id)) throw invalid(`Ad group ${id} is under review and its targeting cannot be modified now.`);
    const targeting = [...LIST_FIELDS, "gender"].filter((f) => body[f] !== undefined);
    if (a.is_smart_performance_campaign && targeting.length) throw invalid(`Smart+ campaign ad groups do not support modifying ${targeting.join(", ")}: targeting is automated by TikTok.`);
    const next = clone(a);
    for (const f of LIST_FIELDS) {
      if (body[f] === undefined) continue;
      if (!Array.isArray(body[f])) throw invalid(`${f}: Not a valid list.`);
      next[f] = (body[f] as unknown[]).map(String);
    }
    for (const k of next.interest_keyword_ids.filter((x) => !a.interest_keyword_ids.includes(x))) {
      const kw = keywords.get(k);
      if (!kw || kw.status !== "EFFECTIVE" || kw.keyword_status !== "ONLINE") throw invalid(`interest_keyword_ids: Invalid interest keyword id ${k}.`);
    }
    for (const c of next.interest_category_ids) if (!categories.has(c)) throw invalid(`interest_category_ids: Invalid interest category id ${c}.`);
    if (next.interest_keyword_ids.length && next.purchase_intention_keyword_ids.length) {
      throw invalid("Keyword conflict: interest_keyword_ids and purchase_intention_keyword_ids cannot be used at the same time.");
    }
    for (const f of ["adgroup_name", ...BUDGET_FIELDS, "gender"] as const) if (body[f] !== undefined) (next as any)[f] = body[f];
    next.modify_time = now();
    adgroups.set(id, next);
    record.ok = true;
    record.code = 0;
    const { deleted: _d, ...view } = next;
    return clone(view);
  }

  function route(method: string, path: string, query: Record<string, string>, body: Record<string, unknown>, advertiser: string) {
    if (method === "GET" && path === "campaign/get/") {
      const filtering = (jsonParam(query, "filtering") ?? {}) as Record<string, unknown>;
      const only = idList(filtering.campaign_ids, "campaign_ids", 100);
      return paged([...campaigns.values()].filter((c) => c.advertiser_id === advertiser && (!only || only.includes(c.campaign_id))), query, CAMPAIGN_FIELDS);
    }
    if (method === "GET" && path === "adgroup/get/") {
      const filtering = (jsonParam(query, "filtering") ?? {}) as Record<string, unknown>;
      const ids = idList(filtering.adgroup_ids, "adgroup_ids", 100);
      const camps = idList(filtering.campaign_ids, "campaign_ids", 100);
      const rows = [...adgroups.values()].filter((a) => a.advertiser_id === advertiser && !a.deleted && (!ids || ids.includes(a.adgroup_id)) && (!camps || camps.includes(a.campaign_id)));
      return paged(rows, query, ADGROUP_FIELDS);
    }
    if (method === "POST" && path === "adgroup/update/") return writeAdGroup(body, advertiser);
    if (method === "GET" && path === "tool/interest_keyword/recommend/") {
      const q = (query.keyword ?? "").trim().toLowerCase();
      if (!q) throw invalid("keyword: Missing data for required field.");
      const limit = query.limit === undefined ? 50 : Number(query.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 50) throw invalid("limit: Must be between 1 and 50.");
      if (query.audience_type !== undefined && !["GENERAL_INTEREST", "PURCHASE_INTENTION"].includes(query.audience_type)) throw invalid("audience_type: Invalid enum value.");
      const hits = [...keywords.values()].filter((k) => k.keyword.toLowerCase().includes(q)).slice(0, limit);
      return { recommended_keywords: hits.map(clone) };
    }
    if (method === "GET" && path === "tool/interest_keyword/get/") {
      const list = jsonParam(query, "keyword_query");
      if (!Array.isArray(list) || list.length < 1 || list.length > 50) throw invalid("keyword_query: Length must be between 1 and 50.");
      return { keywords: list.map((q) => keywords.get(String((q as { keyword_id?: unknown })?.keyword_id))).filter((k): k is TikTokInterestKeyword => !!k).map(clone) };
    }
    if (method === "GET" && path === "advertiser/info/") {
      const ids = (jsonParam(query, "advertiser_ids") as unknown[]).map(String);
      const fields = jsonParam(query, "fields");
      const allowed = ["advertiser_id", "name", "currency", "timezone", "display_timezone"];
      if (fields !== undefined && (!Array.isArray(fields) || fields.some((f) => !allowed.includes(String(f))))) throw invalid(`fields: Invalid field. Allowed: ${allowed.join(", ")}`);
      const pick = (a: TikTokAdvertiser) => Object.fromEntries(((fields as string[] | undefined) ?? allowed).map((f) => [f, (a as unknown as Record<string, unknown>)[f]]));
      return { list: ids.map((id) => advertisers.get(id)).filter((a): a is TikTokAdvertiser => !!a).map(pick) };
    }
    if (method === "GET" && path === "report/integrated/get/") return report(query, advertiser);
    if (method === "GET" && path === "tool/interest_category/") {
      if (query.version !== undefined && !["1", "2"].includes(query.version)) throw invalid("version: Must be one of 1, 2.");
      return { interest_categories: [...categories.values()].map((c) => ({ ...clone(c), placements: [], special_industries: [] })) };
    }
    throw new Refusal(TIKTOK_CODES.invalidParam, `Path ${prefix}${path} is not found.`, 404);
  }

  const everyAdvertiser = () => [...new Set([...advertisers.keys(), ...[...campaigns.values()].map((c) => c.advertiser_id)])];
  const authorize = authorizeEndpoint({
    provider: "TikTok For Business", clientId: app.appId, clientIdParam: "app_id", codeParam: "auth_code",
    grants: () => everyAdvertiser().map((id) => `Advertiser ${id}${advertisers.get(id)?.name ? ` (${advertisers.get(id)!.name})` : ""}`),
    issue() {
      const code = crypto.randomBytes(20).toString("hex");
      codes.set(code, { advertisers: everyAdvertiser(), expiresAt: Date.now() + 600_000, used: false });
      return { code };
    },
  });

  const server = bodyServer((req, res, url, raw) => {
    if (url.pathname === "/portal/auth") return authorize(req, res, url, raw);
    const method = (req.method ?? "GET").toUpperCase();
    const requestId = requestIdOf();
    const { "access-token": token, authorization: _a, ...headers } = req.headers;
    const query = Object.fromEntries(url.searchParams);
    const record: TikTokRequest = {
      method, path: url.pathname, query, headers, body: null, requestId, at: Date.now(),
      auth: typeof token === "string" ? "access-token" : req.headers.authorization ? "authorization" : null, advertiserId: query.advertiser_id ?? null,
    };
    requests.push(record);
    const send = (status: number, code: number, message: string, data: unknown) => {
      record.code = code;
      res.writeHead(status, { "content-type": "application/json", "x-tt-logid": requestId });
      res.end(JSON.stringify({ code, message, request_id: requestId, data }));
    };
    try {
      let body: Record<string, unknown> = {};
      if (raw) {
        if (!/application\/json/.test(req.headers["content-type"] ?? "")) throw invalid("Content-Type must be application/json.");
        try { body = JSON.parse(raw); } catch { throw invalid("The request body is not valid JSON."); }
        const { secret: _s, access_token: _t, auth_code: _c, ...shown } = body;
        record.body = shown;
        if (typeof body.advertiser_id === "string") record.advertiserId = body.advertiser_id;
      }
      if (!url.pathname.startsWith(prefix)) throw new Refusal(TIKTOK_CODES.invalidParam, `Path ${url.pathname} is not found.`, 404);
      const path = url.pathname.slice(prefix.length);
      if (method === "POST" && (path === "oauth2/access_token/" || path === "oauth2/revoke_token/")) return send(200, 0, "OK", oauth(path, body));

      if (typeof token !== "string" || !token) throw new Refusal(TIKTOK_CODES.tokenMissing, "Access token is null, please check your access token.");
      const t = tokens.get(token);
      if (!t || t.revoked) throw new Refusal(TIKTOK_CODES.tokenInvalid, "Access token is incorrect or has been revoked.");
      // /oauth2/advertiser/get/ lists the token's advertisers, to the app holding it only (app_id and secret in the query).
      if (method === "GET" && path === "oauth2/advertiser/get/") {
        if (query.app_id !== app.appId || query.secret !== app.secret) throw new Refusal(TIKTOK_CODES.badApp, "The app_id or secret is invalid.");
        const ids = t.advertisers ?? [...advertisers.keys()];
        return send(200, 0, "OK", { list: ids.map((id) => ({ advertiser_id: id, advertiser_name: advertisers.get(id)?.name ?? `Advertiser ${id}` })) });
      }
      // /advertiser/info/ names its advertisers in advertiser_ids; every other call in advertiser_id.
      const infoIds = method === "GET" && path === "advertiser/info/" ? advertiserIdsOf(query) : null;
      const advertiser = infoIds ? infoIds[0] : method === "GET" ? query.advertiser_id : (body.advertiser_id as string | undefined);
      if (!advertiser) throw invalid("advertiser_id: Missing data for required field.");
      record.advertiserId ??= String(advertiser);
      for (const a of infoIds ?? [String(advertiser)]) if (t.advertisers && !t.advertisers.includes(a)) throw new Refusal(TIKTOK_CODES.noPermission, `No permission to operate advertiser ${a}.`);
      if (fault && fault.n > 0) {
        fault.n--;
        record.throttled = fault.kind === "rate_limit";
        if (fault.kind === "rate_limit") throw new Refusal(TIKTOK_CODES.rateLimited, "Too many requests. Please retry in some time.");
        throw new Refusal(TIKTOK_CODES.systemError, "System error, please try again later.");
      }
      if (method !== "GET" && method !== "POST") throw new Refusal(TIKTOK_CODES.invalidParam, "Method not allowed.", 405);
      const data = route(method, path, query, body, String(advertiser));
      if (reportDelayMs && path === "report/integrated/get/") {
        const timer = setTimeout(() => { delayed.delete(timer); if (!res.destroyed) send(200, 0, "OK", data); }, reportDelayMs);
        delayed.add(timer);
        return;
      }
      return send(200, 0, "OK", data);
    } catch (e) {
      if (e instanceof Refusal) return send(e.status, e.code, e.message, {});
      return send(500, TIKTOK_CODES.systemError, "System error, please try again later.", {});
    }
  });

  const base = await listenLocal(server, opts.port);
  return {
    faults: peerFaults(server, (m, url) => m === "POST" && url.pathname.endsWith("/adgroup/update/")),
    url: base,
    authorizeUrl: `${base}/portal/auth`,
    tokenUrl: `${base}${prefix}oauth2/access_token/`,
    revokeUrl: `${base}${prefix}oauth2/revoke_token/`,
    version,
    app,
    requests,
    writes,
    budgetWrites,
    counts,
    addToken(value, o = {}) { tokens.set(value, { advertisers: o.advertisers ?? null, revoked: false }); },
    isRevoked: (value) => tokens.get(value)?.revoked ?? false,
    addAuthCode(code, o) { codes.set(code, { advertisers: [...o.advertisers], expiresAt: Date.now() + (o.expiresInS ?? 600) * 1000, used: false }); },
    addCampaign(c) {
      const t = now();
      const camp: TikTokCampaign = { campaign_id: c.id ?? numericId(), advertiser_id: c.advertiserId, campaign_name: c.name, operation_status: c.status ?? "ENABLE", objective_type: "TRAFFIC", budget: 500, is_smart_performance_campaign: !!c.smartPlus, create_time: t, modify_time: t };
      campaigns.set(camp.campaign_id, camp);
      return clone(camp);
    },
    addAdGroup(a) {
      const t = now();
      const g: TikTokAdGroup = {
        adgroup_id: a.id ?? numericId(), advertiser_id: a.advertiserId, campaign_id: a.campaignId, adgroup_name: a.name, operation_status: "ENABLE", secondary_status: "ADGROUP_STATUS_DELIVERY_OK",
        budget: 50, bid_price: 0, location_ids: a.locationIds ?? ["6252001"], age_groups: ["AGE_25_34", "AGE_35_44"], gender: "GENDER_UNLIMITED",
        interest_category_ids: [...(a.interestCategoryIds ?? [])], interest_keyword_ids: [...(a.interestKeywordIds ?? [])], purchase_intention_keyword_ids: [...(a.purchaseIntentionKeywordIds ?? [])],
        is_smart_performance_campaign: campaigns.get(a.campaignId)?.is_smart_performance_campaign ?? false, deleted: false, create_time: t, modify_time: t,
      };
      adgroups.set(g.adgroup_id, g);
      return clone(g);
    },
    adGroup: (id) => (adgroups.has(id) ? clone(adgroups.get(id)!) : undefined),
    setTargeting(id, patch) {
      const g = adgroups.get(id);
      if (!g) throw new Error(`no ad group ${id}`);
      Object.assign(g, clone(patch), { modify_time: now() });
    },
    deleteAdGroup(id) { const g = adgroups.get(id); if (g) g.deleted = true; },
    addInterestKeyword(k) {
      const full: TikTokInterestKeyword = { language: "en", status: "EFFECTIVE", keyword_status: "ONLINE", ...clone(k) };
      keywords.set(full.keyword_id, full);
      return clone(full);
    },
    addInterestCategory(c) {
      const full: TikTokInterestCategory = { interest_category_id: c.id, interest_category_name: c.name, level: c.level ?? 1, sub_category_ids: [] };
      categories.set(c.id, full);
      return clone(full);
    },
    keywordName: (id) => keywords.get(id)?.keyword,
    categoryName: (id) => categories.get(id)?.interest_category_name,
    refuseAdGroup(id) { refusedAdGroups.add(id); },
    addAdvertiser(a) {
      const adv: TikTokAdvertiser = { advertiser_id: a.advertiserId, name: a.name ?? `Advertiser ${a.advertiserId}`, currency: a.currency, timezone: a.timezone, display_timezone: a.displayTimezone ?? a.timezone };
      advertisers.set(adv.advertiser_id, adv);
      return clone(adv);
    },
    addAd(a) {
      const g = adgroups.get(a.adgroupId);
      if (!g || g.advertiser_id !== a.advertiserId) throw new Error(`no ad group ${a.adgroupId} in advertiser ${a.advertiserId}`);
      const ad: TikTokAd = { ad_id: a.id ?? numericId(), advertiser_id: a.advertiserId, adgroup_id: a.adgroupId, ad_name: a.name };
      ads.set(ad.ad_id, ad);
      return clone(ad);
    },
    addStats(st) {
      if (!ads.has(st.adId)) throw new Error(`no ad ${st.adId}`);
      if (!isDate(st.date)) throw new Error(`date ${st.date}: YYYY-MM-DD`);
      if (st.spend !== undefined && !/^\d+(\.\d+)?$/.test(st.spend)) throw new Error(`spend ${st.spend}: a decimal string, as TikTok reports it`);
      stats.push({ ad_id: st.adId, date: st.date, impressions: st.impressions ?? 0, clicks: st.clicks ?? 0, spend: st.spend ?? "0.00", conversion: st.conversion ?? 0 });
    },
    delayReports(ms) { reportDelayMs = ms; },
    failNext(kind, n) { fault = { kind, n }; },
    resetLog() { requests.length = 0; writes.length = 0; budgetWrites.length = 0; fault = null; reportDelayMs = 0; counts.exchanged = 0; counts.revoked = 0; counts.refused = 0; },
    close: () => new Promise<void>((r) => { for (const t of delayed) clearTimeout(t); delayed.clear(); server.closeAllConnections(); server.close(() => r()); }),
  };
}
