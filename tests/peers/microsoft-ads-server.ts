import crypto from "node:crypto";
import type http from "node:http";
import { strToU8, zipSync } from "fflate";
import { authorizeEndpoint } from "./consent-page.ts";
import { bodyServer, listenLocal, type StandInOptions } from "./listen.ts";
import { peerFaults, type PeerFaults } from "./faults.ts";

// A local stand-in for Microsoft Advertising's Campaign Management REST API v13 and the Microsoft identity platform's
// token endpoint, strict where a connector could get it wrong:
// - Paths `/CampaignManagement/v13/<operation>`; anything else is a bare 404. Read operations are POSTs
//   (`Campaigns/QueryByAccountId`, `AdGroups/QueryByCampaignId`, `Keywords/QueryByAdGroupId`); AddKeywords is
//   `POST Keywords`, DeleteKeywords `DELETE Keywords`. Neither read pages (Microsoft's do not).
// - Every call needs `Authorization: Bearer <token>`, `DeveloperToken`, `CustomerId` and `CustomerAccountId`. A
//   missing or unknown token or developer token: 105 InvalidCredentials; an expired token: 109
//   AuthenticationTokenExpired (both 401). An account the token's user cannot reach, or a CustomerId that is not the
//   account's customer: 106 UserIsNotAuthorized. Body ids must match the headers' account (1102).
// - Faults are the SOAP fault details as JSON with a `Type`: `AdApiFaultDetail {TrackingId, Errors}` or
//   `ApiFaultDetail {TrackingId, OperationErrors, BatchErrors}`. Microsoft documents no HTTP statuses for REST
//   faults: this peer answers 401 for credentials, 500 for InternalError and 400 for the rest, CallRateExceeded
//   included, so a client has to branch on `Code`. Every answer carries a `TrackingId` header (the SOAP response
//   header element), repeated in fault bodies.
// - Longs (ids) are JSON strings of digits, as Microsoft's REST JSON templates quote them ("AdGroupId":
//   "LongValueHere"); a JSON number is taken only while it is exact, and one past 2^53 is a 400 (a JSON number that
//   large has already lost digits). Ids answered are strings too (campaigns, ad groups, keywords, KeywordIds).
// - AddKeywords: at most 1,000 keywords; each is checked (text present and at most 100 characters, match type Exact /
//   Phrase / Broad, not already in the ad group nor twice in the request) and refusals come back in `PartialErrors`
//   (BatchError with the item's `Index`) with HTTP 200, `KeywordIds` aligned to the input with null where refused.
//   A Bid is accepted (Microsoft would) and recorded in `bidWrites`, so tests can prove a connector never sends one.
//   refuseAdGroup / refuseText make keywords fail editorial review (EditorialError in PartialErrors).
// - DeleteKeywords: ids that are not the ad group's keywords are PartialErrors; deleted keywords leave the reads.
// - failNext("call_rate") answers the next n calls with 117 CallRateExceeded ("wait 60 seconds"), "internal" with a
//   500 InternalError.
// - Token endpoint `POST /common/oauth2/v2.0/token` (form, client_secret_post): authorization_code (exact
//   redirect_uri, PKCE S256 when the code was issued with a challenge) issues a refresh token only when the consent
//   included `offline_access`; refresh_token requires `scope` (AADSTS90014 without it, as the v2.0 endpoint documents
//   scope as required) and rotates the refresh token. Errors are AADSTS JSON. Access tokens last 60-90 minutes.
// Customer Management also answers GetUser (`User/Query`, `{UserId: null}` = the signed-in user) and SearchAccounts
// (`Accounts/Search` by `UserId Equals`, PageInfo paging): the accounts the token reaches, with ParentCustomerId.
// Reporting, on the same origin (a client points its reporting and customer hosts here):
// - Customer Management `POST /CustomerManagement/v13/Account/Query` (GetAccount) `{AccountId}` answers `{Account:
//   {Id, Name, Number, CurrencyCode (ISO 4217), TimeZone (Microsoft's zone names), ParentCustomerId, ...}}`; the
//   token and developer token are needed, the account headers are not.
// - Reporting `POST /Reporting/v13/GenerateReport/Submit` `{ReportRequest: {Type, Aggregation, Columns, Scope, Time,
//   Format, Exclude*...}}` answers `{ReportRequestId}`. Without `Type` (the REST discriminator), or with a SOAP-style
//   `Scope.AccountIds` (`{long:[...]}`), the body is unreadable: 100 NullRequest, as the live service answers. Columns
//   must be the report type's; the range must end no later than today in ReportTimeZone (PacificTimeUSCanadaTijuana
//   when unset); Daily and Summary aggregations and the Csv format are what this stand-in builds. The report is built
//   at submit time from the seeded stats (`addStats`, stored per ad and day in the account currency's decimals, as
//   Microsoft reports them): rows are grouped by the attribute columns requested (Microsoft's "columns that group the
//   data") and the metrics summed, every field quoted, after a UTF-8 BOM, with the report header metadata and the
//   copyright footer unless excluded.
// - `POST /Reporting/v13/GenerateReport/Poll` `{ReportRequestId}` answers `{ReportRequestStatus: {Status,
//   ReportDownloadUrl}}`: Pending for `reportDelay` polls, then Success with a freshly signed URL valid 5 minutes
//   (null when the report has no rows), or Error (`failReports`). Only the token that submitted may poll (Microsoft:
//   "use the same user credentials"); another gets an invalid report id.
// - `GET /ReportDownload/<id>.zip?se=&sig=` needs no credentials (a signed blob URL): a ZIP (fflate zipSync, deflate)
//   holding `<id>.csv`, sent 16 KiB a millisecond (`downloadPace`) and waiting for the socket to drain, so a client
//   that stops reading holds the rest back (`downloads` logs bytes sent and an early close). A bad or expired signature is a 403
//   AuthenticationFailed (Azure Storage's XML error).
// Numeric error codes other than 0, 105, 106, 109 and 117 are approximate (Microsoft's list was not at hand); the
// symbolic ErrorCode is what a client should read for them.

export const MS_CODES = {
  internal: 0, nullRequest: 100, invalidCredentials: 105, notAuthorized: 106, tokenExpired: 109, callRate: 117,
  invalidCampaignId: 1100, invalidAccountId: 1102, invalidAdGroupId: 1201,
  keywordsArrayTooLong: 1507, keywordTextEmpty: 1510, keywordTextTooLong: 1511, invalidMatchType: 1512, duplicateKeyword: 1542,
  invalidKeywordId: 1529, keywordIdsArrayTooLong: 1530, editorial: 1043,
  // Reporting (approximate numbers).
  invalidReportId: 2100, invalidReportColumns: 2005, invalidAggregation: 2008, invalidReportTime: 2010, invalidReportFormat: 2011, invalidReportScope: 2016,
} as const;

export type MsMatchType = "Exact" | "Phrase" | "Broad";
export interface MsAccount { id: string; customerId: string; name: string; number: string; currency: string; timeZone: string }
export interface MsCampaign { id: string; accountId: string; name: string; status: string; campaignType: string }
export interface MsAdGroup { id: string; accountId: string; campaignId: string; name: string; status: string }
export interface MsKeyword { id: string; adGroupId: string; text: string; matchType: MsMatchType; status: "Active" | "Paused" | "Deleted"; editorialStatus: string; bid: number | null }

/** One ad's stats of one day, as Microsoft keeps them: spend a decimal string of the account currency. */
export interface MsStat { accountId: string; campaignId: string; adGroupId: string; adId: string; adTitle: string; date: string; impressions: number; clicks: number; spend: string; conversions: number }
export interface MsReportJob { id: string; accountId: string; request: any; rows: number; polls: number; status: "Pending" | "Success" | "Error" }
export interface MsDownload { id: string; status: number; authorization: boolean; bytes: number; total: number; closedEarly: boolean }

export interface MsRequest {
  method: string;
  /** The operation path below /CampaignManagement/v13/ (or the full path when outside it). */
  op: string;
  /** Headers as sent, without Authorization and DeveloperToken. */
  headers: http.IncomingHttpHeaders;
  body: any;
  status: number;
  trackingId: string;
  at: number;
  throttled: boolean;
}

export interface MicrosoftAdsServer {
  url: string;
  /** The consent page (MICROSOFT_ADS_AUTHORIZE_URL): approving issues a code for the scopes asked, reaching every account. */
  authorizeUrl: string;
  tokenUrl: string;
  developerToken: string;
  app: { clientId: string; clientSecret: string };
  /** Registers an access token; `accounts` it reaches (default all); `expiresInS` <= 0 is expired. */
  addToken(token: string, opts?: { accounts?: string[]; expiresInS?: number }): void;
  expireToken(token: string): void;
  /** An authorization code as the consent page would issue it; `scope` is what the user consented to. */
  addCode(code: string, opts: { redirectUri: string; scope: string; codeChallenge?: string; accounts?: string[] }): void;
  /** Revokes a refresh token (invalid_grant from then on). */
  revokeRefreshToken(token: string): void;
  /** `currency` ISO 4217 (default USD), `timeZone` one of Microsoft's names (default PacificTimeUSCanadaTijuana). */
  addAccount(a: { customerId: string; name: string; id?: string; currency?: string; timeZone?: string }): MsAccount;
  addCampaign(c: { accountId: string; name: string; id?: string; status?: string; campaignType?: string }): MsCampaign;
  addAdGroup(g: { campaignId: string; name: string; id?: string; status?: string }): MsAdGroup;
  /** Seeds a keyword (no checks); the object returned is a copy. */
  addKeyword(k: { adGroupId: string; text: string; matchType?: MsMatchType }): MsKeyword;
  /** Copies of the ad group's keywords that are not deleted, in creation order. */
  keywordsOf(adGroupId: string): MsKeyword[];
  refuseAdGroup(adGroupId: string): void;
  refuseText(text: string): void;
  /** `op` (a request's `op`, e.g. "/Reporting/v13/GenerateReport/Submit"): only calls of that operation fail. */
  failNext(kind: "call_rate" | "internal", n?: number, op?: string): void;
  /** Seeds stats rows of an ad group's ad (default ad: `<adGroupId>0001`, "Ad of <ad group name>"). */
  addStats(rows: { adGroupId: string; date: string; impressions: number; clicks: number; spend: string; conversions?: number; adId?: string; adTitle?: string }[]): void;
  /** How many polls of each report submitted from now on answer Pending before Success (default 1). */
  reportDelay(polls: number): void;
  /** The next n reports submitted end in Status Error. */
  failReports(n?: number): void;
  /** Every download URL signed so far expires now (as 5 minutes later would). */
  expireDownloads(): void;
  /** The next n download URLs are signed already expired (a consumer slower than the 5 minutes). */
  expireUrls(n?: number): void;
  /** Milliseconds between the download's 16 KiB writes (default 1): a slower link. */
  downloadPace(ms: number): void;
  reports: MsReportJob[];
  downloads: MsDownload[];
  requests: MsRequest[];
  /** Token endpoint requests: grant type, scope sent, and the answer's status. */
  tokenRequests: { grant_type: string; scope: string | null; status: number }[];
  bidWrites: { adGroupId: string; text: string; bid: unknown }[];
  resetLog(): void;
  /** Failures around a write, on request (faults.ts): its answer lost after it was applied, applied late, a restart. */
  faults: PeerFaults;
  close(): Promise<void>;
}

const PREFIX = "/CampaignManagement/v13/";
const REPORTING = "/Reporting/v13/";
const CUSTOMER = "/CustomerManagement/v13/";
const DOWNLOAD = /^\/ReportDownload\/(\d+)\.zip$/;
const URL_TTL_MS = 5 * 60_000;
const REPORT_TYPES: Record<string, string[]> = {
  CampaignPerformanceReportRequest: ["TimePeriod", "AccountId", "AccountName", "AccountNumber", "CampaignId", "CampaignName", "CurrencyCode", "Impressions", "Clicks", "Spend", "Conversions"],
  AdGroupPerformanceReportRequest: ["TimePeriod", "AccountId", "AccountName", "AccountNumber", "CampaignId", "CampaignName", "AdGroupId", "AdGroupName", "CurrencyCode", "Impressions", "Clicks", "Spend", "Conversions"],
  AdPerformanceReportRequest: ["TimePeriod", "AccountId", "AccountName", "AccountNumber", "CampaignId", "CampaignName", "AdGroupId", "AdGroupName", "AdId", "AdTitle", "CurrencyCode", "Impressions", "Clicks", "Spend", "Conversions"],
};
const REPORT_METRICS = new Set(["Impressions", "Clicks", "Spend", "Conversions"]);
/** The zones this stand-in knows for "today" (others: the earliest zone on Earth, so it never refuses today). */
const ZONES: Record<string, string> = {
  PacificTimeUSCanadaTijuana: "America/Los_Angeles", EasternTimeUSCanada: "America/New_York", OsakaSapporoTokyo: "Asia/Tokyo",
  GreenwichMeanTimeDublinEdinburghLisbonLondon: "Europe/London", AmsterdamBerlinBernRomeStockholmVienna: "Europe/Berlin",
  AucklandWellington: "Pacific/Auckland", Hawaii: "Pacific/Honolulu",
};
const todayIn = (zone: string) => new Intl.DateTimeFormat("en-CA", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit" }).format(new Date());
const csvField = (v: string) => `"${v.replace(/"/g, '""')}"`;
/** Exact decimal sums: amounts as integer micros. */
const microsOf = (d: string) => { const [i, f = ""] = d.split("."); const m = BigInt(i.replace("-", "") + f.padEnd(6, "0").slice(0, 6)); return d.startsWith("-") ? -m : m; };
const decimalOf = (micros: bigint) => {
  const neg = micros < 0n;
  const s = (neg ? -micros : micros).toString().padStart(7, "0");
  const frac = s.slice(-6).replace(/0+$/, "").padEnd(2, "0");
  return `${neg ? "-" : ""}${s.slice(0, -6)}.${frac}`;
};
const TOKEN_PATH = "/common/oauth2/v2.0/token";
const AUTHORIZE_PATH = "/common/oauth2/v2.0/authorize";
const MATCH_TYPES = ["Exact", "Phrase", "Broad"];
const CAMPAIGN_TYPES = ["Search", "Shopping", "DynamicSearchAds", "Audience", "Hotel", "PerformanceMax", "App"];

class Fault extends Error {
  constructor(readonly status: number, readonly body: Record<string, unknown>) { super(String(body.Type)); }
}
const adApi = (status: number, code: number, errorCode: string, message: string) =>
  new Fault(status, { Type: "AdApiFaultDetail", Errors: [{ Code: code, Detail: null, ErrorCode: errorCode, Message: message, Type: "AdApiError" }] });
const operation = (code: number, errorCode: string, message: string) =>
  new Fault(400, { Type: "ApiFaultDetail", BatchErrors: [], OperationErrors: [{ Code: code, Details: null, ErrorCode: errorCode, Message: message, Type: "OperationError" }] });
const batch = (index: number, code: number, errorCode: string, message: string) =>
  ({ Code: code, Details: null, ErrorCode: errorCode, FieldPath: null, ForwardCompatibilityMap: null, Index: index, Message: message, Type: "BatchError" });
const editorial = (index: number, text: string) => ({
  ...batch(index, MS_CODES.editorial, "CampaignServiceEditorialValidationError", "The keyword failed editorial review."),
  Type: "EditorialError", Appealable: true, DisapprovedText: text, Location: "Keyword", PublisherCountry: null, ReasonCode: 17,
});
const aadsts = (status: number, error: string, code: number, text: string) => ({
  status, body: { error, error_description: `AADSTS${code}: ${text}\r\nTrace ID: ${crypto.randomUUID()}\r\nCorrelation ID: ${crypto.randomUUID()}\r\nTimestamp: ${new Date().toISOString()}`, error_codes: [code], timestamp: new Date().toISOString(), trace_id: crypto.randomUUID(), correlation_id: crypto.randomUUID() },
});

export async function startMicrosoftAdsServer(opts: StandInOptions & { developerToken?: string } = {}): Promise<MicrosoftAdsServer> {
  const developerToken = opts.developerToken ?? crypto.randomBytes(8).toString("hex").toUpperCase();
  const app = opts.app ?? { clientId: crypto.randomUUID(), clientSecret: crypto.randomBytes(20).toString("base64url") };
  const tokens = new Map<string, { expiresAt: number | null; accounts: string[] | null }>();
  const codes = new Map<string, { redirectUri: string; scope: string; codeChallenge?: string; accounts: string[] | null; used: boolean }>();
  const refreshTokens = new Map<string, { scope: string; accounts: string[] | null; revoked: boolean }>();
  const accounts = new Map<string, MsAccount>();
  const campaigns = new Map<string, MsCampaign>();
  const adGroups = new Map<string, MsAdGroup>();
  const keywords = new Map<string, MsKeyword>();
  const refusedGroups = new Set<string>();
  const refusedTexts = new Set<string>();
  const requests: MsRequest[] = [];
  const tokenRequests: MicrosoftAdsServer["tokenRequests"] = [];
  const bidWrites: MicrosoftAdsServer["bidWrites"] = [];
  let fault: { kind: "call_rate" | "internal"; n: number; op?: string } | null = null;
  let seq = 0;
  const stats: MsStat[] = [];
  const reports: MsReportJob[] = [];
  const downloads: MsDownload[] = [];
  /** Per report: the token that submitted it, its ZIP (null: no rows), and the signatures handed out with expiry. */
  const jobs = new Map<string, { job: MsReportJob; token: string; zip: Uint8Array | null; delay: number; fail: boolean }>();
  const signatures = new Map<string, { id: string; expiresAt: number }>();
  let delay = 1;
  let failing = 0;
  let expiring = 0;
  let pace = 1;
  const nextId = (base: number) => String(base + ++seq);

  /** A long's digits, or undefined when `v` is not one (an unsafe JSON number included). */
  const longValue = (v: unknown): string | undefined => {
    if (typeof v === "string" && /^\d{1,19}$/.test(v) && BigInt(v) > 0n && BigInt(v) < 2n ** 63n) return String(BigInt(v));
    if (typeof v === "number" && Number.isSafeInteger(v) && v > 0) return String(v);
    return undefined;
  };
  const long = (v: unknown, name: string): string => {
    const id = longValue(v);
    if (id !== undefined) return id;
    if (typeof v === "number" && Number.isInteger(v)) throw operation(MS_CODES.nullRequest, "InvalidRequest", `${name} ${v} is past 2^53 as a JSON number and has lost digits: send longs as strings.`);
    throw operation(MS_CODES.nullRequest, "InvalidRequest", `${name} must be a long (a string of digits).`);
  };
  const liveKeywords = (adGroupId: string) => [...keywords.values()].filter((k) => k.adGroupId === adGroupId && k.status !== "Deleted");
  const keywordView = (k: MsKeyword) => ({
    Bid: k.bid === null ? null : { Amount: k.bid }, BiddingScheme: { Type: "InheritFromParent", InheritedBidStrategyType: "EnhancedCpc" }, DestinationUrl: null,
    EditorialStatus: k.editorialStatus, FinalAppUrls: null, FinalMobileUrls: null, FinalUrlSuffix: null, FinalUrls: null, ForwardCompatibilityMap: null,
    Id: k.id, MatchType: k.matchType, Param1: null, Param2: null, Param3: null, Status: k.status, Text: k.text, TrackingUrlTemplate: null, UrlCustomParameters: null,
  });

  /** The caller's token (its string, and what it reaches), after the token and developer token checks. */
  function user(req: http.IncomingMessage): { token: string; accounts: string[] | null } {
    const auth = /^Bearer\s+(.+)$/i.exec(String(req.headers.authorization ?? ""));
    const t = auth ? tokens.get(auth[1]) : undefined;
    if (!t) throw adApi(401, MS_CODES.invalidCredentials, "InvalidCredentials", "Authentication failed. Either supplied credentials are invalid or the account is inactive.");
    if (t.expiresAt !== null && t.expiresAt <= Date.now()) throw adApi(401, MS_CODES.tokenExpired, "AuthenticationTokenExpired", "The OAuth access token has expired. Please use the refresh token to get a new access token.");
    if (req.headers.developertoken !== developerToken) throw adApi(401, MS_CODES.invalidCredentials, "InvalidCredentials", "Authentication failed. Either supplied credentials are invalid or the account is inactive.");
    return { token: auth![1], accounts: t.accounts };
  }

  function authorize(req: http.IncomingMessage): MsAccount {
    const t = user(req);
    const accountId = String(req.headers.customeraccountid ?? "");
    const customerId = String(req.headers.customerid ?? "");
    const account = accounts.get(accountId);
    if (!account || account.customerId !== customerId || (t.accounts && !t.accounts.includes(accountId))) {
      throw adApi(400, MS_CODES.notAuthorized, "UserIsNotAuthorized", "The user does not have permission to access the requested customer or account.");
    }
    return account;
  }

  function route(method: string, op: string, body: any, account: MsAccount): unknown {
    const group = (v: unknown) => {
      const g = adGroups.get(long(v, "AdGroupId"));
      if (!g || g.accountId !== account.id || g.status === "Deleted") throw operation(MS_CODES.invalidAdGroupId, "CampaignServiceInvalidAdGroupId", "The ad group ID is invalid.");
      return g;
    };
    if (method === "POST" && op === "Campaigns/QueryByAccountId") {
      if (long(body.AccountId, "AccountId") !== account.id) throw operation(MS_CODES.invalidAccountId, "CampaignServiceInvalidAccountId", "The account ID is invalid or does not match the CustomerAccountId header.");
      const types = String(body.CampaignType ?? "Search").split(/[\s,]+/).filter(Boolean);
      if (types.some((t) => !CAMPAIGN_TYPES.includes(t))) throw operation(MS_CODES.nullRequest, "InvalidRequest", "CampaignType has an invalid value.");
      return {
        Campaigns: [...campaigns.values()].filter((c) => c.accountId === account.id && types.includes(c.campaignType) && c.status !== "Deleted").map((c) => ({
          AudienceAdsBidAdjustment: null, BiddingScheme: { Type: "EnhancedCpc" }, BudgetType: "DailyBudgetStandard", DailyBudget: 50, ExperimentId: null, FinalUrlSuffix: null,
          ForwardCompatibilityMap: [], Id: c.id, MultimediaAdsBidAdjustment: null, Name: c.name, Status: c.status, SubType: null, TimeZone: "PacificTimeUSCanadaTijuana",
          TrackingUrlTemplate: null, UrlCustomParameters: null, CampaignType: c.campaignType, Settings: null, BudgetId: null, Languages: ["All"], AdScheduleUseSearcherTimeZone: false,
        })),
      };
    }
    if (method === "POST" && op === "AdGroups/QueryByCampaignId") {
      const c = campaigns.get(long(body.CampaignId, "CampaignId"));
      if (!c || c.accountId !== account.id) throw operation(MS_CODES.invalidCampaignId, "CampaignServiceInvalidCampaignId", "The campaign ID is invalid.");
      return {
        AdGroups: [...adGroups.values()].filter((g) => g.campaignId === c.id && g.status !== "Deleted").map((g) => ({
          AdRotation: null, AudienceAdsBidAdjustment: null, BiddingScheme: { Type: "InheritFromParent" }, CpcBid: { Amount: 0.5 }, EndDate: null, FinalUrlSuffix: null,
          ForwardCompatibilityMap: [], Id: g.id, Language: null, Name: g.name, Network: "OwnedAndOperatedAndSyndicatedSearch", PrivacyStatus: "Active",
          Settings: null, StartDate: null, Status: g.status, TrackingUrlTemplate: null, UrlCustomParameters: null, AdScheduleUseSearcherTimeZone: false, AdGroupType: "SearchStandard",
        })),
      };
    }
    if (method === "POST" && op === "Keywords/QueryByAdGroupId") return { Keywords: liveKeywords(group(body.AdGroupId).id).map(keywordView) };
    if (method === "POST" && op === "Keywords") return addKeywords(group(body.AdGroupId), body.Keywords);
    if (method === "DELETE" && op === "Keywords") return deleteKeywords(group(body.AdGroupId), body.KeywordIds);
    throw new Fault(404, {});
  }

  function getAccount(body: any, u: { accounts: string[] | null }) {
    const a = accounts.get(long(body.AccountId, "AccountId"));
    if (!a || (u.accounts && !u.accounts.includes(a.id))) throw adApi(400, MS_CODES.notAuthorized, "UserIsNotAuthorized", "The user does not have permission to access the requested customer or account.");
    return {
      Account: {
        BillToCustomerId: Number(a.customerId), CurrencyCode: a.currency, AccountFinancialStatus: "ClearFinancialStatus", Id: Number(a.id), Language: "English",
        LastModifiedByUserId: 1, LastModifiedTime: "2026-01-01T00:00:00", Name: a.name, Number: a.number, ParentCustomerId: Number(a.customerId), PaymentMethodId: null,
        PaymentMethodType: null, PrimaryUserId: 1, AccountLifeCycleStatus: "Active", TimeStamp: "AAAAAAAAB9E=", TimeZone: a.timeZone, PauseReason: null,
        ForwardCompatibilityMap: [], LinkedAgencies: [], SalesHouseCustomerId: null, TaxInformation: null, BackUpPaymentInstrumentId: null, BillingThresholdAmount: null,
        BusinessAddress: null, AutoTagType: "Inactive", SoldToPaymentInstrumentId: null, TaxCertificate: null, AccountMode: "Expert",
      },
    };
  }

  /** A token's user id: stable per token (each token stands for one signed-in user). */
  const userIdOf = (token: string) => 100_000 + (crypto.createHash("sha256").update(token).digest().readUInt32BE(0) % 900_000);

  function getUser(body: any, u: { token: string }) {
    if (body.UserId !== null && body.UserId !== undefined && Number(body.UserId) !== userIdOf(u.token)) {
      throw adApi(400, MS_CODES.notAuthorized, "UserIsNotAuthorized", "The user does not have permission to access the requested customer or account.");
    }
    return { User: { Id: userIdOf(u.token), UserName: `user${userIdOf(u.token)}@example.com`, Lcid: "EnglishUS" }, CustomerRoles: [] };
  }

  /** SearchAccounts with the one predicate a client needs (UserId Equals), paged by PageInfo {Index, Size <= 1000}. */
  function searchAccounts(body: any, u: { token: string; accounts: string[] | null }) {
    const p = Array.isArray(body.Predicates) ? body.Predicates : [];
    if (p.length !== 1 || p[0]?.Field !== "UserId" || p[0]?.Operator !== "Equals") throw operation(MS_CODES.nullRequest, "InvalidPredicate", "The stand-in answers SearchAccounts by UserId Equals only.");
    if (Number(p[0].Value) !== userIdOf(u.token)) throw adApi(400, MS_CODES.notAuthorized, "UserIsNotAuthorized", "The user does not have permission to access the requested customer or account.");
    const index = Number(body.PageInfo?.Index ?? 0);
    const size = Number(body.PageInfo?.Size ?? 0);
    if (!Number.isInteger(index) || index < 0 || !Number.isInteger(size) || size < 1 || size > 1000) throw operation(MS_CODES.nullRequest, "InvalidPageInfo", "PageInfo needs Index >= 0 and Size 1..1000.");
    const mine = [...accounts.values()].filter((a) => !u.accounts || u.accounts.includes(a.id)).sort((a, b) => Number(a.id) - Number(b.id));
    return { Accounts: mine.slice(index * size, index * size + size).map((a) => ({ Id: Number(a.id), Name: a.name, Number: a.number, ParentCustomerId: Number(a.customerId), CurrencyCode: a.currency, AccountLifeCycleStatus: "Active" })) };
  }

  const reportError = (code: number, errorCode: string, message: string) => operation(code, errorCode, message);
  const dateOf = (d: any): string | null => {
    if (!d || typeof d !== "object" || ![d.Year, d.Month, d.Day].every((x) => Number.isInteger(x))) return null;
    const s = `${String(d.Year).padStart(4, "0")}-${String(d.Month).padStart(2, "0")}-${String(d.Day).padStart(2, "0")}`;
    return new Date(`${s}T00:00:00Z`).toISOString().startsWith(s) ? s : null;
  };

  function submitReport(body: any, account: MsAccount, token: string) {
    const r = body?.ReportRequest;
    // The REST service reads the body by its Type discriminator; without it (or with SOAP-style arrays) it reads nothing.
    if (!r || typeof r !== "object" || !REPORT_TYPES[r.Type] || (r.Scope?.AccountIds !== undefined && !Array.isArray(r.Scope.AccountIds))) {
      throw operation(MS_CODES.nullRequest, "NullRequest", "The request message is null.");
    }
    const allowed = REPORT_TYPES[r.Type];
    const columns: unknown = r.Columns;
    if (!Array.isArray(columns) || !columns.length || columns.some((c) => typeof c !== "string" || !allowed.includes(c))) {
      throw reportError(MS_CODES.invalidReportColumns, "ReportingServiceInvalidReportColumns", `The report columns are not valid for ${r.Type}.`);
    }
    const ids: unknown[] = r.Scope?.AccountIds ?? [];
    if (!ids.length || ids.some((x) => longValue(x) !== account.id)) {
      throw reportError(MS_CODES.invalidReportScope, "ReportingServiceInvalidAccountIds", "The account IDs in the report scope are not valid for the CustomerAccountId header.");
    }
    const aggregation = r.Aggregation ?? "Summary";
    if (!["Daily", "Summary"].includes(aggregation)) throw reportError(MS_CODES.invalidAggregation, "ReportingServiceInvalidReportAggregation", `Aggregation ${aggregation} is not supported here.`);
    if ((r.Format ?? "Csv") !== "Csv") throw reportError(MS_CODES.invalidReportFormat, "ReportingServiceInvalidReportFormat", "Only Csv reports are built by this stand-in.");
    const from = dateOf(r.Time?.CustomDateRangeStart);
    const to = dateOf(r.Time?.CustomDateRangeEnd);
    const zone = r.Time?.ReportTimeZone ?? "PacificTimeUSCanadaTijuana";
    if (!from || !to || from > to || to > todayIn(ZONES[zone] ?? "Pacific/Kiritimati")) {
      throw reportError(MS_CODES.invalidReportTime, "ReportingServiceInvalidCustomDateRange", "The custom date range is not valid: the start must not be after the end, nor the end after today.");
    }
    const campaignScope: any[] | null = Array.isArray(r.Scope?.Campaigns) ? r.Scope.Campaigns : null;
    const groupScope: any[] | null = Array.isArray(r.Scope?.AdGroups) ? r.Scope.AdGroups : null;
    const daily = aggregation === "Daily" && (columns as string[]).includes("TimePeriod");
    // Group by the attribute columns requested, summing the metrics.
    const attributes = (columns as string[]).filter((c) => !REPORT_METRICS.has(c));
    const groupsOut = new Map<string, { values: Record<string, string>; impressions: number; clicks: number; spend: bigint; conversions: number }>();
    for (const s of stats) {
      if (s.accountId !== account.id || s.date < from || s.date > to) continue;
      if (campaignScope && !campaignScope.some((c) => String(c?.CampaignId) === s.campaignId)) continue;
      if (groupScope && !groupScope.some((g) => String(g?.AdGroupId) === s.adGroupId && String(g?.CampaignId) === s.campaignId)) continue;
      const values: Record<string, string> = {
        TimePeriod: daily ? s.date : "", AccountId: account.id, AccountName: account.name, AccountNumber: account.number, CampaignId: s.campaignId,
        CampaignName: campaigns.get(s.campaignId)?.name ?? "", AdGroupId: s.adGroupId, AdGroupName: adGroups.get(s.adGroupId)?.name ?? "", AdId: s.adId, AdTitle: s.adTitle,
        CurrencyCode: account.currency,
      };
      const key = attributes.map((c) => values[c]).join("\u0000");
      const g = groupsOut.get(key) ?? { values, impressions: 0, clicks: 0, spend: 0n, conversions: 0 };
      g.impressions += s.impressions;
      g.clicks += s.clicks;
      g.spend += microsOf(s.spend);
      g.conversions += s.conversions;
      groupsOut.set(key, g);
    }
    const order = (g: { values: Record<string, string> }) => `${g.values.TimePeriod}|${g.values.CampaignId.padStart(20, "0")}|${g.values.AdGroupId.padStart(20, "0")}|${g.values.AdId.padStart(20, "0")}`;
    const rows = [...groupsOut.values()].map((g) => ({ g, k: order(g) })).sort((x, y) => (x.k < y.k ? -1 : x.k > y.k ? 1 : 0)).map((x) => x.g);
    const id = String(30_000_000_000 + ++seq);
    const lines: string[] = [];
    if (r.ExcludeReportHeader !== true) {
      lines.push(...[`Report Name: ${r.ReportName ?? `${r.Type.replace(/Request$/, "")}-${id}`}`, `Report Time: ${from}, ${to}`, `Time Zone: ${zone}`,
        `Last Completed Available Day: ${new Date().toISOString()} (GMT)`, `Last Completed Available Hour: ${new Date().toISOString()} (GMT)`,
        `Report Aggregation: ${aggregation}`, "Report Filter: ", "Potential Incomplete Data: true", `Rows: ${rows.length}`].map(csvField), "");
    }
    if (r.ExcludeColumnHeaders !== true) lines.push((columns as string[]).map(csvField).join(","));
    for (const g of rows) {
      lines.push((columns as string[]).map((c) => csvField(
        c === "Impressions" ? String(g.impressions) : c === "Clicks" ? String(g.clicks) : c === "Spend" ? decimalOf(g.spend) : c === "Conversions" ? g.conversions.toFixed(2) : g.values[c],
      )).join(","));
    }
    if (r.ExcludeReportFooter !== true) lines.push("", csvField(`©${new Date().getUTCFullYear()} Microsoft Corporation. All rights reserved. `));
    const text = strToU8(`${lines.join("\r\n")}\r\n`);
    const csv = new Uint8Array(text.length + 3);
    csv.set([0xef, 0xbb, 0xbf]);
    csv.set(text, 3);
    const job: MsReportJob = { id, accountId: account.id, request: r, rows: rows.length, polls: 0, status: "Pending" };
    reports.push(job);
    jobs.set(id, { job, token, zip: rows.length ? zipSync({ [`${id}.csv`]: csv }) : null, delay, fail: failing > 0 });
    if (failing > 0) failing--;
    return { ReportRequestId: id };
  }

  function pollReport(body: any, token: string, base: string) {
    const j = typeof body?.ReportRequestId === "string" ? jobs.get(body.ReportRequestId) : undefined;
    if (!j || j.token !== token) throw reportError(MS_CODES.invalidReportId, "ReportingServiceInvalidReportId", "The report request ID is not valid.");
    j.job.polls++;
    if (j.job.polls > j.delay) j.job.status = j.fail ? "Error" : "Success";
    let url: string | null = null;
    if (j.job.status === "Success" && j.zip) {
      const sig = crypto.randomBytes(16).toString("base64url");
      const expiresAt = expiring > 0 ? Date.now() - 1 : Date.now() + URL_TTL_MS;
      if (expiring > 0) expiring--;
      signatures.set(sig, { id: j.job.id, expiresAt });
      url = `${base}/ReportDownload/${j.job.id}.zip?sv=2020-08-04&sr=b&se=${encodeURIComponent(new Date(expiresAt).toISOString())}&sp=r&sig=${sig}`;
    }
    return { ReportRequestStatus: { ReportDownloadUrl: url, Status: j.job.status } };
  }

  function download(req: http.IncomingMessage, res: http.ServerResponse, url: URL, id: string) {
    const entry: MsDownload = { id, status: 0, authorization: req.headers.authorization !== undefined, bytes: 0, total: 0, closedEarly: false };
    downloads.push(entry);
    const sig = signatures.get(url.searchParams.get("sig") ?? "");
    const zip = jobs.get(id)?.zip;
    if (!sig || sig.id !== id || sig.expiresAt <= Date.now() || !zip) {
      entry.status = 403;
      res.writeHead(403, { "content-type": "application/xml" });
      return res.end(`<?xml version="1.0" encoding="utf-8"?><Error><Code>AuthenticationFailed</Code><Message>Server failed to authenticate the request. Signed expiry time has passed or the signature is invalid.</Message></Error>`);
    }
    entry.status = 200;
    entry.total = zip.length;
    res.writeHead(200, { "content-type": "application/x-zip-compressed", "content-length": String(zip.length) });
    // 16 KiB a millisecond (a fast WAN link rather than loopback), so that where a client stopped reading shows.
    let at = 0;
    let closed = false;
    const pump = () => {
      if (closed) return;
      if (at >= zip.length) return void res.end();
      const chunk = zip.subarray(at, at + 16_384);
      at += chunk.length;
      entry.bytes = at;
      const next = () => setTimeout(pump, pace);
      if (res.write(chunk)) next();
      else res.once("drain", next);
    };
    res.on("close", () => { closed = true; if (!res.writableFinished) entry.closedEarly = true; });
    pump();
  }

  function addKeywords(g: MsAdGroup, list: unknown) {
    if (!Array.isArray(list) || !list.length) throw operation(MS_CODES.nullRequest, "NullArrayArgument", "Keywords cannot be null or empty.");
    if (list.length > 1000) throw operation(MS_CODES.keywordsArrayTooLong, "CampaignServiceKeywordsArrayExceedsLimit", "The list of keywords exceeds the limit of 1,000.");
    const have = new Set(liveKeywords(g.id).map((k) => `${k.text.toLowerCase()}|${k.matchType}`));
    const ids: (string | null)[] = [];
    const errors: unknown[] = [];
    list.forEach((raw: any, i) => {
      const text = typeof raw?.Text === "string" ? raw.Text.trim() : "";
      const key = `${text.toLowerCase()}|${raw?.MatchType}`;
      let err: unknown = null;
      if (!text) err = batch(i, MS_CODES.keywordTextEmpty, "CampaignServiceKeywordTextNullOrEmpty", "The keyword text cannot be null or empty.");
      else if (text.length > 100) err = batch(i, MS_CODES.keywordTextTooLong, "CampaignServiceKeywordTextTooLong", "The keyword text exceeds the maximum length of 100 characters.");
      else if (!MATCH_TYPES.includes(raw?.MatchType)) err = batch(i, MS_CODES.invalidMatchType, "CampaignServiceInvalidKeywordMatchType", "The keyword match type is invalid.");
      else if (have.has(key)) err = batch(i, MS_CODES.duplicateKeyword, "CampaignServiceDuplicateKeyword", "The keyword already exists in the ad group.");
      else if (refusedGroups.has(g.id) || refusedTexts.has(text.toLowerCase())) err = editorial(i, text);
      if (raw && raw.Bid !== undefined && raw.Bid !== null) bidWrites.push({ adGroupId: g.id, text, bid: raw.Bid });
      if (err) { errors.push(err); ids.push(null); return; }
      have.add(key);
      const k: MsKeyword = { id: nextId(80_000_000_000), adGroupId: g.id, text, matchType: raw.MatchType, status: "Active", editorialStatus: "Active", bid: raw?.Bid?.Amount ?? null };
      keywords.set(k.id, k);
      ids.push(k.id);
    });
    return { KeywordIds: ids, PartialErrors: errors };
  }

  function deleteKeywords(g: MsAdGroup, list: unknown) {
    if (!Array.isArray(list) || !list.length) throw operation(MS_CODES.nullRequest, "NullArrayArgument", "KeywordIds cannot be null or empty.");
    if (list.length > 1000) throw operation(MS_CODES.keywordIdsArrayTooLong, "CampaignServiceKeywordIdsArrayExceedsLimit", "The list of keyword IDs exceeds the limit of 1,000.");
    const errors: unknown[] = [];
    list.forEach((raw, i) => {
      const id = longValue(raw);
      const k = id === undefined ? undefined : keywords.get(id);
      if (!k || k.adGroupId !== g.id || k.status === "Deleted") { errors.push(batch(i, MS_CODES.invalidKeywordId, "CampaignServiceInvalidKeywordId", "The keyword ID is invalid.")); return; }
      k.status = "Deleted";
    });
    return { PartialErrors: errors };
  }

  function token(form: URLSearchParams): { status: number; body: unknown } {
    const grant = form.get("grant_type") ?? "";
    if (form.get("client_id") !== app.clientId) return aadsts(400, "unauthorized_client", 700016, `Application with identifier '${form.get("client_id")}' was not found in the directory.`);
    if (form.get("client_secret") !== app.clientSecret) return aadsts(401, "invalid_client", 7000215, "Invalid client secret provided.");
    const issue = (scope: string, accountsSeen: string[] | null) => {
      const access = `EwB${crypto.randomBytes(24).toString("base64url")}`;
      const expiresIn = 3600 + crypto.randomInt(0, 1200);
      tokens.set(access, { expiresAt: Date.now() + expiresIn * 1000, accounts: accountsSeen });
      const granted = scope.split(" ").filter((s) => s !== "offline_access").join(" ");
      const out: Record<string, unknown> = { token_type: "Bearer", scope: granted, expires_in: expiresIn, ext_expires_in: expiresIn, access_token: access };
      if (scope.split(" ").includes("offline_access")) {
        const refresh = `M.C5${crypto.randomBytes(32).toString("base64url")}`;
        refreshTokens.set(refresh, { scope, accounts: accountsSeen, revoked: false });
        out.refresh_token = refresh;
      }
      return { status: 200, body: out };
    };
    if (grant === "authorization_code") {
      const c = codes.get(form.get("code") ?? "");
      if (!c || c.used) return aadsts(400, "invalid_grant", 70000, "The provided value for the 'code' parameter is not valid.");
      if (form.get("redirect_uri") !== c.redirectUri) return aadsts(400, "invalid_grant", 50011, "The redirect URI specified in the request does not match the redirect URIs configured for the application.");
      if (c.codeChallenge) {
        const verifier = form.get("code_verifier") ?? "";
        if (crypto.createHash("sha256").update(verifier).digest("base64url") !== c.codeChallenge) return aadsts(400, "invalid_grant", 501481, "The Code_Verifier does not match the code_challenge supplied in the authorization request.");
      }
      c.used = true;
      return issue(c.scope, c.accounts);
    }
    if (grant === "refresh_token") {
      const scope = form.get("scope");
      if (!scope) return aadsts(400, "invalid_request", 90014, "The required field 'scope' is missing from the credential. Ensure that you have all the necessary parameters for the login request.");
      const r = refreshTokens.get(form.get("refresh_token") ?? "");
      if (!r || r.revoked) return aadsts(400, "invalid_grant", 70000, "The user could not be authenticated or the grant is expired. The user must first sign in and if needed grant the client application access to the requested scope.");
      const asked = scope.split(" ").filter(Boolean);
      if (asked.some((s) => !r.scope.split(" ").includes(s))) return aadsts(400, "invalid_grant", 65001, "The user or administrator has not consented to use the application for the requested scope.");
      return issue(asked.join(" "), r.accounts);
    }
    return aadsts(400, "unsupported_grant_type", 70003, "The app requested an unsupported grant type.");
  }

  const consent = authorizeEndpoint({
    provider: "Microsoft", clientId: app.clientId,
    grants: () => [...accounts.values()].map((a) => `Account ${a.number} (${a.name}), customer ${a.customerId}`),
    issue(q) {
      const code = `M.C5${crypto.randomBytes(24).toString("base64url")}`;
      codes.set(code, { redirectUri: q.get("redirect_uri")!, scope: q.get("scope") ?? "", codeChallenge: q.get("code_challenge") ?? undefined, accounts: null, used: false });
      return { code };
    },
  });

  const server = bodyServer((req, res, url, raw) => {
    if (url.pathname === AUTHORIZE_PATH) return consent(req, res, url, raw);
    const method = (req.method ?? "GET").toUpperCase();
    const trackingId = crypto.randomUUID();
    const send = (status: number, body: unknown, extra: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json; charset=utf-8", TrackingId: trackingId, ...extra });
      res.end(body === undefined ? "" : JSON.stringify(body));
    };
    if (url.pathname === TOKEN_PATH && method === "POST") {
      const form = new URLSearchParams(raw);
      const r = token(form);
      tokenRequests.push({ grant_type: form.get("grant_type") ?? "", scope: form.get("scope"), status: r.status });
      res.writeHead(r.status, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" });
      return res.end(JSON.stringify(r.body));
    }
    const dl = method === "GET" ? DOWNLOAD.exec(url.pathname) : null;
    if (dl) return download(req, res, url, dl[1]);
    const { authorization: _a, developertoken: _d, ...headers } = req.headers;
    const record: MsRequest = { method, op: url.pathname.startsWith(PREFIX) ? url.pathname.slice(PREFIX.length) : url.pathname, headers, body: null, status: 0, trackingId, at: Date.now(), throttled: false };
    requests.push(record);
    try {
      const service = url.pathname.startsWith(PREFIX) ? "campaign" : url.pathname.startsWith(REPORTING) ? "reporting" : url.pathname.startsWith(CUSTOMER) ? "customer" : null;
      if (!service) throw new Fault(404, {});
      const caller = user(req);
      const account = service === "customer" ? null : authorize(req);
      if (fault && fault.n > 0 && (!fault.op || fault.op === record.op)) {
        fault.n--;
        if (fault.kind === "call_rate") {
          record.throttled = true;
          throw adApi(400, MS_CODES.callRate, "CallRateExceeded", "You have exceeded the number of calls that you are allowed to make in a minute. Please reduce the number of calls that you make per minute.");
        }
        throw adApi(500, MS_CODES.internal, "InternalError", "An internal error has occurred.");
      }
      let body: any;
      try { body = JSON.parse(raw || "null"); } catch { body = undefined; }
      record.body = body ?? null;
      if (!body || typeof body !== "object" || !/json/i.test(String(req.headers["content-type"] ?? ""))) {
        throw operation(MS_CODES.nullRequest, "NullRequest", "The request message is null or could not be read as JSON.");
      }
      record.status = 200;
      if (service === "customer") {
        if (method === "POST" && url.pathname === `${CUSTOMER}Account/Query`) return send(200, getAccount(body, caller));
        if (method === "POST" && url.pathname === `${CUSTOMER}User/Query`) return send(200, getUser(body, caller));
        if (method === "POST" && url.pathname === `${CUSTOMER}Accounts/Search`) return send(200, searchAccounts(body, caller));
        throw new Fault(404, {});
      }
      if (service === "reporting") {
        if (method === "POST" && url.pathname === `${REPORTING}GenerateReport/Submit`) return send(200, submitReport(body, account!, caller.token));
        if (method === "POST" && url.pathname === `${REPORTING}GenerateReport/Poll`) return send(200, pollReport(body, caller.token, `http://${req.headers.host}`));
        throw new Fault(404, {});
      }
      return send(200, route(method, record.op, body, account!));
    } catch (e) {
      if (!(e instanceof Fault)) {
        record.status = 500;
        return send(500, { TrackingId: trackingId, Type: "AdApiFaultDetail", Errors: [{ Code: 0, Detail: null, ErrorCode: "InternalError", Message: "An internal error has occurred.", Type: "AdApiError" }] });
      }
      record.status = e.status;
      if (e.status === 404) { res.writeHead(404, { TrackingId: trackingId }); return res.end(); }
      return send(e.status, { TrackingId: trackingId, ...e.body });
    }
  });

  const url = await listenLocal(server, opts.port);
  return {
    faults: peerFaults(server, (m, url) => (m === "POST" || m === "DELETE") && url.pathname.endsWith("/Keywords")),
    url, authorizeUrl: `${url}${AUTHORIZE_PATH}`, tokenUrl: `${url}${TOKEN_PATH}`, developerToken, app, requests, tokenRequests, bidWrites, reports, downloads,
    addToken(t, o = {}) { tokens.set(t, { expiresAt: o.expiresInS === undefined ? null : Date.now() + o.expiresInS * 1000, accounts: o.accounts ?? null }); },
    expireToken(t) { const x = tokens.get(t); if (x) x.expiresAt = Date.now() - 1000; },
    addCode(code, o) { codes.set(code, { redirectUri: o.redirectUri, scope: o.scope, codeChallenge: o.codeChallenge, accounts: o.accounts ?? null, used: false }); },
    revokeRefreshToken(t) { const r = refreshTokens.get(t); if (r) r.revoked = true; },
    addAccount(a) {
      const acc: MsAccount = {
        id: a.id ?? nextId(180_000_000), customerId: a.customerId, name: a.name, number: `F${crypto.randomBytes(4).toString("hex").toUpperCase().slice(0, 7)}`,
        currency: a.currency ?? "USD", timeZone: a.timeZone ?? "PacificTimeUSCanadaTijuana",
      };
      accounts.set(acc.id, acc);
      return { ...acc };
    },
    addCampaign(c) {
      const camp: MsCampaign = { id: c.id ?? nextId(400_000_000), accountId: c.accountId, name: c.name, status: c.status ?? "Active", campaignType: c.campaignType ?? "Search" };
      campaigns.set(camp.id, camp);
      return { ...camp };
    },
    addAdGroup(g) {
      const camp = campaigns.get(g.campaignId);
      if (!camp) throw new Error(`no campaign ${g.campaignId}`);
      const ag: MsAdGroup = { id: g.id ?? nextId(1_200_000_000_000), accountId: camp.accountId, campaignId: camp.id, name: g.name, status: g.status ?? "Active" };
      adGroups.set(ag.id, ag);
      return { ...ag };
    },
    addKeyword(k) {
      const kw: MsKeyword = { id: nextId(80_000_000_000), adGroupId: k.adGroupId, text: k.text, matchType: k.matchType ?? "Phrase", status: "Active", editorialStatus: "Active", bid: null };
      keywords.set(kw.id, kw);
      return { ...kw };
    },
    keywordsOf: (id) => liveKeywords(id).map((k) => ({ ...k })),
    refuseAdGroup(id) { refusedGroups.add(id); },
    refuseText(t) { refusedTexts.add(t.toLowerCase()); },
    failNext(kind, n = 1, op) { fault = { kind, n, op }; },
    addStats(rows) {
      for (const r of rows) {
        const g = adGroups.get(r.adGroupId);
        if (!g) throw new Error(`no ad group ${r.adGroupId}`);
        if (!/^-?\d+(\.\d+)?$/.test(r.spend)) throw new Error(`spend ${r.spend}: a decimal string of the account currency`);
        stats.push({
          accountId: g.accountId, campaignId: g.campaignId, adGroupId: g.id, adId: r.adId ?? `${g.id}0001`, adTitle: r.adTitle ?? `Ad of ${g.name}`,
          date: r.date, impressions: r.impressions, clicks: r.clicks, spend: r.spend, conversions: r.conversions ?? 0,
        });
      }
    },
    reportDelay(polls) { delay = polls; },
    failReports(n = 1) { failing = n; },
    expireDownloads() { for (const s of signatures.values()) s.expiresAt = 0; },
    expireUrls(n = 1) { expiring = n; },
    downloadPace(ms) { pace = ms; },
    resetLog() { requests.length = 0; tokenRequests.length = 0; bidWrites.length = 0; fault = null; reports.length = 0; downloads.length = 0; },
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
