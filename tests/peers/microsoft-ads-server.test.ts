// Proves the Microsoft Advertising stand-in (tests/peers/microsoft-ads-server.ts) speaks the protocol the connector
// relies on, with plain fetch: the four credential headers, fault shapes with TrackingId, the Query* reads,
// AddKeywords / DeleteKeywords with PartialErrors aligned by Index, CallRateExceeded, and the identity platform's
// token endpoint (offline_access, scope on refresh, rotation).
import crypto from "node:crypto";
import { MS_CODES, startMicrosoftAdsServer, type MicrosoftAdsServer } from "./microsoft-ads-server.ts";

let ms: MicrosoftAdsServer;
const TOKEN = "EwB-peer-test";
const CUSTOMER = "251000001";
let account: string;
let campaign: string;
let group: string;

beforeAll(async () => {
  ms = await startMicrosoftAdsServer();
  ms.addToken(TOKEN);
  account = ms.addAccount({ customerId: CUSTOMER, name: "Software US" }).id;
  campaign = ms.addCampaign({ accountId: account, name: "Brand" }).id;
  ms.addCampaign({ accountId: account, name: "Display", campaignType: "Audience" });
  group = ms.addAdGroup({ campaignId: campaign, name: "Editors" }).id;
  ms.addKeyword({ adGroupId: group, text: "code editor", matchType: "Phrase" });
});
afterAll(() => ms.close());
beforeEach(() => ms.resetLog());

const headers = (over: Record<string, string | undefined> = {}) => Object.fromEntries(Object.entries({
  authorization: `Bearer ${TOKEN}`, DeveloperToken: ms.developerToken, CustomerId: CUSTOMER, CustomerAccountId: account, "content-type": "application/json", ...over,
}).filter(([, v]) => v !== undefined)) as Record<string, string>;
async function call(method: string, op: string, body: unknown, over: Record<string, string | undefined> = {}) {
  const res = await fetch(`${ms.url}/CampaignManagement/v13/${op}`, { method, headers: headers(over), body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, trackingId: res.headers.get("trackingid"), body: text ? JSON.parse(text) : null };
}

test("credentials: token, developer token and the account headers are all required; faults carry the TrackingId", async () => {
  const none = await call("POST", "Campaigns/QueryByAccountId", { AccountId: Number(account) }, { authorization: undefined });
  expect([none.status, none.body.Type, none.body.Errors[0].Code]).toEqual([401, "AdApiFaultDetail", MS_CODES.invalidCredentials]);
  expect(none.body.TrackingId).toBe(none.trackingId);
  const dev = await call("POST", "Campaigns/QueryByAccountId", { AccountId: Number(account) }, { DeveloperToken: "WRONG" });
  expect([dev.status, dev.body.Errors[0].ErrorCode]).toEqual([401, "InvalidCredentials"]);
  const wrongCustomer = await call("POST", "Campaigns/QueryByAccountId", { AccountId: Number(account) }, { CustomerId: "999" });
  expect(wrongCustomer.body.Errors[0]).toMatchObject({ Code: MS_CODES.notAuthorized, ErrorCode: "UserIsNotAuthorized" });
  const mismatch = await call("POST", "Campaigns/QueryByAccountId", { AccountId: 12345 });
  expect([mismatch.status, mismatch.body.Type, mismatch.body.OperationErrors[0].ErrorCode]).toEqual([400, "ApiFaultDetail", "CampaignServiceInvalidAccountId"]);
  ms.addToken("EwB-old", { expiresInS: -1 });
  const expired = await call("POST", "Campaigns/QueryByAccountId", { AccountId: Number(account) }, { authorization: "Bearer EwB-old" });
  expect([expired.status, expired.body.Errors[0].Code]).toEqual([401, MS_CODES.tokenExpired]);
  expect((await fetch(`${ms.url}/CampaignManagement/v12/Keywords`, { method: "POST", headers: headers(), body: "{}" })).status).toBe(404);
  // Longs are strings of digits, as Microsoft's templates quote them; a JSON number past 2^53 has lost digits: refused.
  expect((await call("POST", "Keywords/QueryByAdGroupId", { AdGroupId: group })).status).toBe(200);
  const unsafe = await call("POST", "Keywords/QueryByAdGroupId", { AdGroupId: 2 ** 60 });
  expect([unsafe.status, unsafe.body.OperationErrors[0].Message]).toEqual([400, expect.stringContaining("send longs as strings")]);
  expect((await call("POST", "Keywords/QueryByAdGroupId", { AdGroupId: "12x" })).status).toBe(400);
});

test("reads: Search campaigns by default, ad groups of a campaign, keywords of an ad group, each whole (no paging)", async () => {
  const c = await call("POST", "Campaigns/QueryByAccountId", { AccountId: Number(account) });
  expect(c.body.Campaigns.map((x: any) => [x.Id, x.Name, x.CampaignType])).toEqual([[campaign, "Brand", "Search"]]);
  const both = await call("POST", "Campaigns/QueryByAccountId", { AccountId: Number(account), CampaignType: "Search Audience" });
  expect(both.body.Campaigns).toHaveLength(2);
  const g = await call("POST", "AdGroups/QueryByCampaignId", { CampaignId: Number(campaign) });
  expect(g.body.AdGroups.map((x: any) => [x.Id, x.Name, x.Status])).toEqual([[group, "Editors", "Active"]]);
  const k = await call("POST", "Keywords/QueryByAdGroupId", { AdGroupId: Number(group) });
  expect(k.body.Keywords.map((x: any) => [x.Text, x.MatchType, x.Status])).toEqual([["code editor", "Phrase", "Active"]]);
  const unknown = await call("POST", "Keywords/QueryByAdGroupId", { AdGroupId: 42 });
  expect(unknown.body.OperationErrors[0]).toMatchObject({ Code: MS_CODES.invalidAdGroupId, ErrorCode: "CampaignServiceInvalidAdGroupId" });
  expect(ms.requests.every((r) => r.status === 200 || r.op === "Keywords/QueryByAdGroupId")).toBe(true);
});

test("AddKeywords applies the valid items; PartialErrors name the others by Index, KeywordIds null there", async () => {
  const g2 = ms.addAdGroup({ campaignId: campaign, name: "IDEs" }).id;
  ms.addKeyword({ adGroupId: g2, text: "ide", matchType: "Exact" });
  ms.refuseText("free ide crack");
  const r = await call("POST", "Keywords", { AdGroupId: Number(g2), Keywords: [
    { Text: "rust ide", MatchType: "Phrase" }, { Text: "x".repeat(101), MatchType: "Phrase" }, { Text: "IDE", MatchType: "Exact" },
    { Text: "go ide", MatchType: "Fuzzy" }, { Text: "free ide crack", MatchType: "Broad" }, { Text: "zig ide", MatchType: "Broad", Bid: { Amount: 9.99 } },
  ] });
  expect(r.status).toBe(200);
  expect(r.body.KeywordIds.map((x: unknown) => x === null ? null : typeof x)).toEqual(["string", null, null, null, null, "string"]);
  expect(r.body.PartialErrors.map((e: any) => [e.Index, e.ErrorCode, e.Type])).toEqual([
    [1, "CampaignServiceKeywordTextTooLong", "BatchError"], [2, "CampaignServiceDuplicateKeyword", "BatchError"],
    [3, "CampaignServiceInvalidKeywordMatchType", "BatchError"], [4, "CampaignServiceEditorialValidationError", "EditorialError"],
  ]);
  expect(ms.keywordsOf(g2).map((k) => k.text)).toEqual(["ide", "rust ide", "zig ide"]);
  expect(ms.bidWrites).toEqual([{ adGroupId: g2, text: "zig ide", bid: { Amount: 9.99 } }]);
  const tooMany = await call("POST", "Keywords", { AdGroupId: Number(g2), Keywords: Array.from({ length: 1001 }, (_, i) => ({ Text: `k${i}`, MatchType: "Exact" })) });
  expect([tooMany.status, tooMany.body.OperationErrors[0].ErrorCode]).toEqual([400, "CampaignServiceKeywordsArrayExceedsLimit"]);

  ms.refuseAdGroup(g2);
  const refused = await call("POST", "Keywords", { AdGroupId: Number(g2), Keywords: [{ Text: "c ide", MatchType: "Phrase" }] });
  expect([refused.status, refused.body.KeywordIds, refused.body.PartialErrors[0].Index]).toEqual([200, [null], 0]);
});

test("DeleteKeywords removes the ad group's keywords; a foreign or unknown id is a PartialError at its Index", async () => {
  const g3 = ms.addAdGroup({ campaignId: campaign, name: "Linters" }).id;
  const mine = ms.addKeyword({ adGroupId: g3, text: "linter" });
  const other = ms.keywordsOf(group)[0];
  const r = await call("DELETE", "Keywords", { AdGroupId: Number(g3), KeywordIds: [Number(other.id), Number(mine.id)] });
  expect([r.status, r.body.PartialErrors.map((e: any) => [e.Index, e.ErrorCode])]).toEqual([200, [[0, "CampaignServiceInvalidKeywordId"]]]);
  expect(ms.keywordsOf(g3)).toEqual([]);
  expect(ms.keywordsOf(group)).toHaveLength(1);
  const k = await call("POST", "Keywords/QueryByAdGroupId", { AdGroupId: Number(g3) });
  expect(k.body.Keywords).toEqual([]);
});

test("throttling is 117 CallRateExceeded in an AdApiFaultDetail (not a 429); internal errors are 500 code 0", async () => {
  ms.failNext("call_rate", 2);
  for (let i = 0; i < 2; i++) {
    const r = await call("POST", "Campaigns/QueryByAccountId", { AccountId: Number(account) });
    expect([r.status, r.body.Errors[0].Code, r.body.Errors[0].ErrorCode]).toEqual([400, 117, "CallRateExceeded"]);
  }
  expect((await call("POST", "Campaigns/QueryByAccountId", { AccountId: Number(account) })).status).toBe(200);
  expect(ms.requests.map((r) => r.throttled)).toEqual([true, true, false]);
  ms.failNext("internal");
  const r = await call("POST", "Campaigns/QueryByAccountId", { AccountId: Number(account) });
  expect([r.status, r.body.Errors[0].ErrorCode]).toEqual([500, "InternalError"]);
});

describe("token endpoint", () => {
  const tokenPost = async (form: Record<string, string>) => {
    const res = await fetch(`${ms.url}/common/oauth2/v2.0/token`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(form) });
    return { status: res.status, body: await res.json() as any };
  };
  const app = () => ({ client_id: ms.app.clientId, client_secret: ms.app.clientSecret });

  test("a refresh token only with offline_access; PKCE checked; refresh needs scope and rotates the refresh token", async () => {
    ms.addCode("no-offline", { redirectUri: "https://app.example/cb", scope: "https://ads.microsoft.com/msads.manage" });
    const plain = await tokenPost({ ...app(), grant_type: "authorization_code", code: "no-offline", redirect_uri: "https://app.example/cb" });
    expect([plain.status, plain.body.refresh_token, plain.body.token_type]).toEqual([200, undefined, "Bearer"]);
    expect(plain.body.expires_in).toBeGreaterThanOrEqual(3600);

    const verifier = crypto.randomBytes(32).toString("base64url");
    ms.addCode("offline", { redirectUri: "https://app.example/cb", scope: "https://ads.microsoft.com/msads.manage offline_access", codeChallenge: crypto.createHash("sha256").update(verifier).digest("base64url") });
    const badPkce = await tokenPost({ ...app(), grant_type: "authorization_code", code: "offline", redirect_uri: "https://app.example/cb", code_verifier: "nope" });
    expect([badPkce.status, badPkce.body.error, badPkce.body.error_codes]).toEqual([400, "invalid_grant", [501481]]);
    const t = await tokenPost({ ...app(), grant_type: "authorization_code", code: "offline", redirect_uri: "https://app.example/cb", code_verifier: verifier });
    expect(t.status).toBe(200);
    expect(typeof t.body.refresh_token).toBe("string");

    const noScope = await tokenPost({ ...app(), grant_type: "refresh_token", refresh_token: t.body.refresh_token });
    expect([noScope.status, noScope.body.error, noScope.body.error_description]).toEqual([400, "invalid_request", expect.stringMatching(/^AADSTS90014:/)]);
    const r = await tokenPost({ ...app(), grant_type: "refresh_token", refresh_token: t.body.refresh_token, scope: "https://ads.microsoft.com/msads.manage offline_access" });
    expect(r.status).toBe(200);
    expect(r.body.refresh_token).not.toBe(t.body.refresh_token);
    const works = await call("POST", "Campaigns/QueryByAccountId", { AccountId: Number(account) }, { authorization: `Bearer ${r.body.access_token}` });
    expect(works.status).toBe(200);

    ms.revokeRefreshToken(r.body.refresh_token);
    const revoked = await tokenPost({ ...app(), grant_type: "refresh_token", refresh_token: r.body.refresh_token, scope: "https://ads.microsoft.com/msads.manage offline_access" });
    expect([revoked.status, revoked.body.error]).toEqual([400, "invalid_grant"]);
    const secret = await tokenPost({ ...app(), client_secret: "wrong", grant_type: "refresh_token", refresh_token: t.body.refresh_token, scope: "x" });
    expect([secret.status, secret.body.error]).toEqual([401, "invalid_client"]);
  });
});
