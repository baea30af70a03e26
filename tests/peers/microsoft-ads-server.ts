import crypto from "node:crypto";
import type http from "node:http";
import { bodyServer, listenLocal } from "./listen.ts";

// A local stand-in for Microsoft Advertising's Campaign Management REST API v13 and the Microsoft identity platform's
// token endpoint (providers.md §3e), strict where a connector could get it wrong:
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
// - Longs are JSON numbers (a string id is a 400: how the service deserializes them is not documented; numbers are
//   what every SDK sends). Ids answered are numbers too.
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
// Numeric error codes other than 0, 105, 106, 109 and 117 are approximate (Microsoft's list was not at hand); the
// symbolic ErrorCode is what a client should read for them.

export const MS_CODES = {
  internal: 0, nullRequest: 100, invalidCredentials: 105, notAuthorized: 106, tokenExpired: 109, callRate: 117,
  invalidCampaignId: 1100, invalidAccountId: 1102, invalidAdGroupId: 1201,
  keywordsArrayTooLong: 1507, keywordTextEmpty: 1510, keywordTextTooLong: 1511, invalidMatchType: 1512, duplicateKeyword: 1542,
  invalidKeywordId: 1529, keywordIdsArrayTooLong: 1530, editorial: 1043,
} as const;

export type MsMatchType = "Exact" | "Phrase" | "Broad";
export interface MsAccount { id: string; customerId: string; name: string; number: string }
export interface MsCampaign { id: string; accountId: string; name: string; status: string; campaignType: string }
export interface MsAdGroup { id: string; accountId: string; campaignId: string; name: string; status: string }
export interface MsKeyword { id: string; adGroupId: string; text: string; matchType: MsMatchType; status: "Active" | "Paused" | "Deleted"; editorialStatus: string; bid: number | null }

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
  developerToken: string;
  app: { clientId: string; clientSecret: string };
  /** Registers an access token; `accounts` it reaches (default all); `expiresInS` <= 0 is expired. */
  addToken(token: string, opts?: { accounts?: string[]; expiresInS?: number }): void;
  expireToken(token: string): void;
  /** An authorization code as the consent page would issue it; `scope` is what the user consented to. */
  addCode(code: string, opts: { redirectUri: string; scope: string; codeChallenge?: string; accounts?: string[] }): void;
  /** Revokes a refresh token (invalid_grant from then on). */
  revokeRefreshToken(token: string): void;
  addAccount(a: { customerId: string; name: string; id?: string }): MsAccount;
  addCampaign(c: { accountId: string; name: string; id?: string; status?: string; campaignType?: string }): MsCampaign;
  addAdGroup(g: { campaignId: string; name: string; id?: string; status?: string }): MsAdGroup;
  /** Seeds a keyword (no checks); the object returned is a copy. */
  addKeyword(k: { adGroupId: string; text: string; matchType?: MsMatchType }): MsKeyword;
  /** Copies of the ad group's keywords that are not deleted, in creation order. */
  keywordsOf(adGroupId: string): MsKeyword[];
  refuseAdGroup(adGroupId: string): void;
  refuseText(text: string): void;
  failNext(kind: "call_rate" | "internal", n?: number): void;
  requests: MsRequest[];
  /** Token endpoint requests: grant type, scope sent, and the answer's status. */
  tokenRequests: { grant_type: string; scope: string | null; status: number }[];
  bidWrites: { adGroupId: string; text: string; bid: unknown }[];
  resetLog(): void;
  close(): Promise<void>;
}

const PREFIX = "/CampaignManagement/v13/";
const TOKEN_PATH = "/common/oauth2/v2.0/token";
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

export async function startMicrosoftAdsServer(): Promise<MicrosoftAdsServer> {
  const developerToken = crypto.randomBytes(8).toString("hex").toUpperCase();
  const app = { clientId: crypto.randomUUID(), clientSecret: crypto.randomBytes(20).toString("base64url") };
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
  let fault: { kind: "call_rate" | "internal"; n: number } | null = null;
  let seq = 0;
  const nextId = (base: number) => String(base + ++seq);

  const long = (v: unknown, name: string): string => {
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v <= 0) throw operation(MS_CODES.nullRequest, "InvalidRequest", `${name} must be a long (JSON number).`);
    return String(v);
  };
  const liveKeywords = (adGroupId: string) => [...keywords.values()].filter((k) => k.adGroupId === adGroupId && k.status !== "Deleted");
  const keywordView = (k: MsKeyword) => ({
    Bid: k.bid === null ? null : { Amount: k.bid }, BiddingScheme: { Type: "InheritFromParent", InheritedBidStrategyType: "EnhancedCpc" }, DestinationUrl: null,
    EditorialStatus: k.editorialStatus, FinalAppUrls: null, FinalMobileUrls: null, FinalUrlSuffix: null, FinalUrls: null, ForwardCompatibilityMap: null,
    Id: Number(k.id), MatchType: k.matchType, Param1: null, Param2: null, Param3: null, Status: k.status, Text: k.text, TrackingUrlTemplate: null, UrlCustomParameters: null,
  });

  function authorize(req: http.IncomingMessage): MsAccount {
    const auth = /^Bearer\s+(.+)$/i.exec(String(req.headers.authorization ?? ""));
    const t = auth ? tokens.get(auth[1]) : undefined;
    if (!t) throw adApi(401, MS_CODES.invalidCredentials, "InvalidCredentials", "Authentication failed. Either supplied credentials are invalid or the account is inactive.");
    if (t.expiresAt !== null && t.expiresAt <= Date.now()) throw adApi(401, MS_CODES.tokenExpired, "AuthenticationTokenExpired", "The OAuth access token has expired. Please use the refresh token to get a new access token.");
    if (req.headers.developertoken !== developerToken) throw adApi(401, MS_CODES.invalidCredentials, "InvalidCredentials", "Authentication failed. Either supplied credentials are invalid or the account is inactive.");
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
          ForwardCompatibilityMap: [], Id: Number(c.id), MultimediaAdsBidAdjustment: null, Name: c.name, Status: c.status, SubType: null, TimeZone: "PacificTimeUSCanadaTijuana",
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
          ForwardCompatibilityMap: [], Id: Number(g.id), Language: null, Name: g.name, Network: "OwnedAndOperatedAndSyndicatedSearch", PrivacyStatus: "Active",
          Settings: null, StartDate: null, Status: g.status, TrackingUrlTemplate: null, UrlCustomParameters: null, AdScheduleUseSearcherTimeZone: false, AdGroupType: "SearchStandard",
        })),
      };
    }
    if (method === "POST" && op === "Keywords/QueryByAdGroupId") return { Keywords: liveKeywords(group(body.AdGroupId).id).map(keywordView) };
    if (method === "POST" && op === "Keywords") return addKeywords(group(body.AdGroupId), body.Keywords);
    if (method === "DELETE" && op === "Keywords") return deleteKeywords(group(body.AdGroupId), body.KeywordIds);
    throw new Fault(404, {});
  }

  function addKeywords(g: MsAdGroup, list: unknown) {
    if (!Array.isArray(list) || !list.length) throw operation(MS_CODES.nullRequest, "NullArrayArgument", "Keywords cannot be null or empty.");
    if (list.length > 1000) throw operation(MS_CODES.keywordsArrayTooLong, "CampaignServiceKeywordsArrayExceedsLimit", "The list of keywords exceeds the limit of 1,000.");
    const have = new Set(liveKeywords(g.id).map((k) => `${k.text.toLowerCase()}|${k.matchType}`));
    const ids: (number | null)[] = [];
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
      ids.push(Number(k.id));
    });
    return { KeywordIds: ids, PartialErrors: errors };
  }

  function deleteKeywords(g: MsAdGroup, list: unknown) {
    if (!Array.isArray(list) || !list.length) throw operation(MS_CODES.nullRequest, "NullArrayArgument", "KeywordIds cannot be null or empty.");
    if (list.length > 1000) throw operation(MS_CODES.keywordIdsArrayTooLong, "CampaignServiceKeywordIdsArrayExceedsLimit", "The list of keyword IDs exceeds the limit of 1,000.");
    const errors: unknown[] = [];
    list.forEach((raw, i) => {
      const k = typeof raw === "number" ? keywords.get(String(raw)) : undefined;
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

  const server = bodyServer((req, res, url, raw) => {
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
    const { authorization: _a, developertoken: _d, ...headers } = req.headers;
    const record: MsRequest = { method, op: url.pathname.startsWith(PREFIX) ? url.pathname.slice(PREFIX.length) : url.pathname, headers, body: null, status: 0, trackingId, at: Date.now(), throttled: false };
    requests.push(record);
    try {
      if (!url.pathname.startsWith(PREFIX)) throw new Fault(404, {});
      const account = authorize(req);
      if (fault && fault.n > 0) {
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
      return send(200, route(method, record.op, body, account));
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

  const url = await listenLocal(server);
  return {
    url, developerToken, app, requests, tokenRequests, bidWrites,
    addToken(t, o = {}) { tokens.set(t, { expiresAt: o.expiresInS === undefined ? null : Date.now() + o.expiresInS * 1000, accounts: o.accounts ?? null }); },
    expireToken(t) { const x = tokens.get(t); if (x) x.expiresAt = Date.now() - 1000; },
    addCode(code, o) { codes.set(code, { redirectUri: o.redirectUri, scope: o.scope, codeChallenge: o.codeChallenge, accounts: o.accounts ?? null, used: false }); },
    revokeRefreshToken(t) { const r = refreshTokens.get(t); if (r) r.revoked = true; },
    addAccount(a) {
      const acc: MsAccount = { id: a.id ?? nextId(180_000_000), customerId: a.customerId, name: a.name, number: `F${crypto.randomBytes(4).toString("hex").toUpperCase().slice(0, 7)}` };
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
    failNext(kind, n = 1) { fault = { kind, n }; },
    resetLog() { requests.length = 0; tokenRequests.length = 0; bidWrites.length = 0; fault = null; },
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
