// Proves the Google Ads API stand-in (tests/peers/google-ads-server.ts) with plain fetch before connectors rely on it:
// version pinning, auth and access levels, GAQL reads and paging, keyword mutates (validateOnly, all-or-nothing,
// partial failure, policy refusal), quota signals and request recording.
import { startGoogleAdsServer, type AdsAdGroup, type AdsCustomer, type GoogleAdsServer } from "./google-ads-server.ts";

let ads: GoogleAdsServer;
let customer: AdsCustomer;
let groupA: AdsAdGroup;
let groupB: AdsAdGroup;
const TOKEN = "ya29.test-token-main";
const V = "/v25";

beforeEach(async () => {
  ads = await startGoogleAdsServer();
  ads.addToken(TOKEN);
  customer = ads.addCustomer({ currencyCode: "EUR", timeZone: "Europe/Berlin" });
  const campaign = ads.addCampaign({ customerId: customer.id, name: "Brand search" });
  ads.addCampaign({ customerId: customer.id, name: "Video", advertisingChannelType: "VIDEO", status: "PAUSED" });
  groupA = ads.addAdGroup({ campaignId: campaign.id, name: "Shoes" });
  groupB = ads.addAdGroup({ campaignId: campaign.id, name: "Boots" });
  ads.addKeyword({ adGroupId: groupA.id, text: "running shoes", matchType: "PHRASE" });
  ads.addKeyword({ adGroupId: groupB.id, text: "winter boots", matchType: "EXACT" });
});
afterEach(async () => { await ads.close(); });

async function call(path: string, o: { method?: string; token?: string | null; body?: unknown; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { "content-type": "application/json", ...o.headers };
  if (o.token !== null) headers.authorization = `Bearer ${o.token ?? TOKEN}`;
  const res = await fetch(ads.url + path, { method: o.method ?? (o.body === undefined ? "GET" : "POST"), headers, body: o.body === undefined ? undefined : JSON.stringify(o.body) });
  const text = await res.text();
  let json: any;
  try { json = JSON.parse(text); } catch { json = undefined; }
  return { status: res.status, headers: res.headers, text, json };
}
const search = (query: string, extra: Record<string, unknown> = {}, cid = customer.id, o: Parameters<typeof call>[1] = {}) =>
  call(`${V}/customers/${cid}/googleAds:search`, { ...o, body: { query, ...extra } });
const mutate = (body: Record<string, unknown>, cid = customer.id) => call(`${V}/customers/${cid}/adGroupCriteria:mutate`, { body });
const create = (adGroupId: string, text: string, matchType = "BROAD") => ({ create: { adGroup: `customers/${customer.id}/adGroups/${adGroupId}`, status: "ENABLED", keyword: { text, matchType } } });
const failure = (json: any) => json.error.details[0];
const codes = (json: any) => failure(json).errors.map((e: any) => e.errorCode);
const KEYWORDS = "SELECT ad_group_criterion.resource_name, ad_group_criterion.criterion_id, ad_group_criterion.keyword.text, ad_group_criterion.keyword.match_type, ad_group_criterion.status, ad_group_criterion.negative FROM ad_group_criterion WHERE ad_group_criterion.type = 'KEYWORD'";

describe("version and authentication", () => {
  test("only the pinned version answers; others get the front end's HTML 404", async () => {
    const old = await call("/v24/customers:listAccessibleCustomers");
    expect(old.status).toBe(404);
    expect(old.headers.get("content-type")).toMatch(/text\/html/);
    expect((await call(`${V}/customers:listAccessibleCustomers`)).status).toBe(200);
    const v26 = await startGoogleAdsServer({ version: 26 });
    try {
      v26.addToken(TOKEN);
      const res = await fetch(`${v26.url}/v26/customers:listAccessibleCustomers`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(res.status).toBe(200);
      expect((await fetch(`${v26.url}/v25/customers:listAccessibleCustomers`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
    } finally { await v26.close(); }
  });

  test("no credential and an unknown token answer 401 UNAUTHENTICATED; every answer carries request-id", async () => {
    const none = await call(`${V}/customers:listAccessibleCustomers`, { token: null });
    expect(none.status).toBe(401);
    expect(none.json.error).toMatchObject({ code: 401, status: "UNAUTHENTICATED" });
    expect(none.json.error.message).toMatch(/^Request is missing required authentication credential/);
    const bad = await call(`${V}/customers:listAccessibleCustomers`, { token: "ya29.unknown" });
    expect(bad.status).toBe(401);
    expect(failure(bad.json)["@type"]).toBe("type.googleapis.com/google.ads.googleads.v25.errors.GoogleAdsFailure");
    expect(codes(bad.json)).toEqual([{ authenticationError: "OAUTH_TOKEN_INVALID" }]);
    expect(failure(bad.json).requestId).toBe(bad.headers.get("request-id"));
    for (const r of [none, bad, await call(`${V}/customers:listAccessibleCustomers`)]) expect(r.headers.get("request-id")).toMatch(/^[\w-]{10,}$/);
    ads.revokeToken(TOKEN);
    expect((await call(`${V}/customers:listAccessibleCustomers`)).status).toBe(401);
  });

  test("developer-token is ignored; login-customer-id must be digits and name the customer's manager", async () => {
    const manager = ads.addCustomer({ manager: true });
    const client = ads.addCustomer({ managerId: manager.id });
    ads.addToken("mcc-token", { customers: [manager.id] });
    const q = "SELECT customer.id FROM customer";
    const ok = await search(q, {}, client.id, { token: "mcc-token", headers: { "login-customer-id": manager.id, "developer-token": "retired" } });
    expect(ok.status).toBe(200);
    expect(ok.json.results).toEqual([{ customer: { resourceName: `customers/${client.id}`, id: client.id } }]);
    const dashed = manager.id.replace(/^(\d{3})(\d{3})/, "$1-$2-");
    const bad = await search(q, {}, client.id, { token: "mcc-token", headers: { "login-customer-id": dashed } });
    expect(bad.status).toBe(400);
    expect(codes(bad.json)).toEqual([{ headerError: "INVALID_LOGIN_CUSTOMER_ID" }]);
    const noHeader = await search(q, {}, client.id, { token: "mcc-token" });
    expect(noHeader.status).toBe(403);
    expect(codes(noHeader.json)).toEqual([{ authorizationError: "USER_PERMISSION_DENIED" }]);
  });

  test("a Test-level project reaches test accounts only", async () => {
    const testAccount = ads.addCustomer({ testAccount: true });
    ads.addToken("test-level", { testLevel: true });
    expect((await search("SELECT customer.id FROM customer", {}, testAccount.id, { token: "test-level" })).status).toBe(200);
    const prod = await search("SELECT customer.id FROM customer", {}, customer.id, { token: "test-level" });
    expect(prod.status).toBe(403);
    expect(prod.json.error.status).toBe("PERMISSION_DENIED");
    expect(codes(prod.json)).toEqual([{ authorizationError: "CLOUD_PROJECT_NOT_APPROVED_FOR_PRODUCTION" }]);
  });

  test("listAccessibleCustomers lists what the token reaches", async () => {
    const other = ads.addCustomer();
    ads.addToken("narrow", { customers: [other.id] });
    expect((await call(`${V}/customers:listAccessibleCustomers`)).json.resourceNames).toEqual(expect.arrayContaining([`customers/${customer.id}`, `customers/${other.id}`]));
    expect((await call(`${V}/customers:listAccessibleCustomers`, { token: "narrow" })).json).toEqual({ resourceNames: [`customers/${other.id}`] });
  });
});

describe("googleAds:search", () => {
  test("campaigns, ad groups by campaign, customer: camelCase rows with resource names and a field mask", async () => {
    const camps = await search("SELECT campaign.id, campaign.name, campaign.status, campaign.advertising_channel_type FROM campaign");
    expect(camps.status).toBe(200);
    expect(camps.json.fieldMask).toBe("campaign.id,campaign.name,campaign.status,campaign.advertisingChannelType");
    expect(camps.json.results.map((r: any) => r.campaign)).toEqual([
      { resourceName: `customers/${customer.id}/campaigns/${groupA.campaignId}`, id: groupA.campaignId, name: "Brand search", status: "ENABLED", advertisingChannelType: "SEARCH" },
      expect.objectContaining({ name: "Video", status: "PAUSED", advertisingChannelType: "VIDEO" }),
    ]);
    const groups = await search(`SELECT ad_group.id, ad_group.name, ad_group.status, ad_group.campaign FROM ad_group WHERE ad_group.campaign = 'customers/${customer.id}/campaigns/${groupA.campaignId}'`);
    expect(groups.json.results.map((r: any) => r.adGroup.name)).toEqual(["Shoes", "Boots"]);
    expect(groups.json.results[0].adGroup.campaign).toBe(`customers/${customer.id}/campaigns/${groupA.campaignId}`);
    // REMOVED rows and other channels are listed unless the query filters them.
    ads.addCampaign({ customerId: customer.id, name: "Gone", status: "REMOVED" });
    const live = await search("SELECT campaign.name FROM campaign WHERE campaign.status != 'REMOVED' AND campaign.advertising_channel_type = 'SEARCH'");
    expect(live.json.results.map((r: any) => r.campaign.name)).toEqual(["Brand search"]);
    const cust = await search("SELECT customer.id, customer.currency_code, customer.time_zone FROM customer");
    expect(cust.json.results).toEqual([{ customer: { resourceName: `customers/${customer.id}`, id: customer.id, currencyCode: "EUR", timeZone: "Europe/Berlin" } }]);
  });

  test("keywords filtered by ad group; no match leaves `results` out", async () => {
    const res = await search(`${KEYWORDS} AND ad_group.id IN (${groupA.id})`);
    expect(res.json.results).toEqual([{ adGroupCriterion: {
      resourceName: ads.keywordsOf(groupA.id)[0].resourceName, criterionId: ads.keywordsOf(groupA.id)[0].criterionId,
      keyword: { text: "running shoes", matchType: "PHRASE" }, status: "ENABLED", negative: false,
    } }]);
    const none = await search(`${KEYWORDS} AND ad_group.id IN (999999)`);
    expect(none.status).toBe(200);
    expect(none.json).not.toHaveProperty("results");
    expect(none.json.fieldMask).toContain("adGroupCriterion.keyword.matchType");
  });

  test("unknown resources and fields, bad syntax and pageSize are refused with GoogleAdsFailure errors", async () => {
    const cases: [string, Record<string, unknown>, Record<string, string>][] = [
      ["SELECT ad.id FROM ad", {}, { queryError: "BAD_RESOURCE_TYPE_IN_FROM_CLAUSE" }],
      ["SELECT campaign.budget_magic FROM campaign", {}, { queryError: "UNRECOGNIZED_FIELD" }],
      ["SELECT ad_group_criterion.criterion_id FROM campaign", {}, { queryError: "UNRECOGNIZED_FIELD" }],
      ["campaign.id FROM campaign", {}, { queryError: "EXPECTED_SELECT" }],
      ["SELECT campaign.id FROM campaign WHERE campaign.name = 'x", {}, { queryError: "STRING_NOT_TERMINATED" }],
      ["SELECT campaign.id FROM campaign banana", {}, { queryError: "UNEXPECTED_INPUT" }],
      ["SELECT campaign.id FROM campaign WHERE campaign.advertising_channel_type = 'SEARCH_NETWORK'", {}, { queryError: "BAD_ENUM_CONSTANT" }],
      ["SELECT ad_group.id FROM ad_group WHERE ad_group.status != 'DELETED'", {}, { queryError: "BAD_ENUM_CONSTANT" }],
      ["SELECT campaign.id FROM campaign", { pageSize: 50 }, { requestError: "PAGE_SIZE_NOT_SUPPORTED" }],
      ["SELECT campaign.id FROM campaign", { pageToken: "not-a-token" }, { requestError: "INVALID_PAGE_TOKEN" }],
    ];
    for (const [q, extra, code] of cases) {
      const res = await search(q, extra);
      expect([q, res.status, res.json.error.status]).toEqual([q, 400, "INVALID_ARGUMENT"]);
      expect(codes(res.json)).toEqual([code]);
    }
    const unknownField = await search("SELECT campaign.id FROM campaign", { pages: 2 });
    expect(unknownField.status).toBe(400);
    expect(unknownField.json.error.message).toMatch(/Unknown name "pages"/);
  });

  test("pages through nextPageToken; a token from another query is refused", async () => {
    for (let i = 0; i < 5; i++) ads.addKeyword({ adGroupId: groupA.id, text: `trail shoes ${i}`, matchType: "BROAD" });
    ads.pageSize = 2;
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const res = await search(KEYWORDS, token ? { pageToken: token } : {});
      expect(res.status).toBe(200);
      seen.push(...res.json.results.map((r: any) => r.adGroupCriterion.keyword.text));
      token = res.json.nextPageToken;
      pages++;
    } while (token);
    expect(pages).toBe(4);
    expect(seen.sort()).toEqual(["running shoes", "trail shoes 0", "trail shoes 1", "trail shoes 2", "trail shoes 3", "trail shoes 4", "winter boots"]);
    const first = await search(KEYWORDS);
    const crossed = await search("SELECT campaign.id FROM campaign", { pageToken: first.json.nextPageToken });
    expect(codes(crossed.json)).toEqual([{ requestError: "INVALID_PAGE_TOKEN" }]);
  });
});

describe("adGroupCriteria:mutate", () => {
  test("validateOnly checks every operation and changes nothing", async () => {
    const before = ads.keywordsOf(groupA.id);
    const ok = await mutate({ operations: [create(groupA.id, "trail running shoes")], validateOnly: true });
    expect(ok.status).toBe(200);
    expect(ok.json).toEqual({});
    expect(ads.keywordsOf(groupA.id)).toEqual(before);
    const bad = await mutate({ operations: [create(groupA.id, "fine words"), create(groupA.id, "shoes!!! 50% off")], validateOnly: true });
    expect(bad.status).toBe(400);
    expect(failure(bad.json).errors[0]).toMatchObject({
      errorCode: { criterionError: "KEYWORD_HAS_INVALID_CHARS" }, trigger: { stringValue: "shoes!!! 50% off" },
      location: { fieldPathElements: [{ fieldName: "operations", index: 1 }, { fieldName: "create" }, { fieldName: "keyword" }, { fieldName: "text" }] },
    });
    expect(ads.keywordsOf(groupA.id)).toEqual(before);
  });

  test("keyword text rules: length, word count, characters, duplicates, match type", async () => {
    const res = await mutate({ operations: [
      create(groupA.id, "x".repeat(81)),
      create(groupA.id, "one two three four five six seven eight nine ten eleven"),
      create(groupA.id, "running shoes", "PHRASE"),
      create(groupA.id, "ok text", "UNSPECIFIED"),
      create("424242", "ok text"),
      create(groupA.id, "x".repeat(80)),
    ], validateOnly: true });
    expect(res.status).toBe(400);
    expect(failure(res.json).errors.map((e: any) => [e.location.fieldPathElements[0].index, e.errorCode])).toEqual([
      [0, { criterionError: "KEYWORD_TEXT_TOO_LONG" }],
      [1, { criterionError: "KEYWORD_HAS_TOO_MANY_WORDS" }],
      [2, { mutateError: "RESOURCE_ALREADY_EXISTS" }],
      [3, { fieldError: "INVALID_VALUE" }],
      [4, { mutateError: "RESOURCE_NOT_FOUND" }],
    ]);
    const badEnum = await mutate({ operations: [create(groupA.id, "ok", "FUZZY")], partialFailure: true });
    expect(badEnum.status).toBe(400);
    expect(badEnum.json.error.message).toMatch(/Invalid value at 'operations\[0\]\.create\.keyword\.match_type'.*"FUZZY"/);
  });

  test("without partialFailure one bad operation fails the whole request and nothing is applied", async () => {
    const before = ads.keywordsOf(groupA.id);
    const res = await mutate({ operations: [create(groupA.id, "leather shoes"), create(groupA.id, "shoes@home")] });
    expect(res.status).toBe(400);
    expect(codes(res.json)).toEqual([{ criterionError: "KEYWORD_HAS_INVALID_CHARS" }]);
    expect(ads.keywordsOf(groupA.id)).toEqual(before);
    const ok = await mutate({ operations: [create(groupA.id, "leather shoes"), create(groupB.id, "leather boots", "EXACT")] });
    expect(ok.status).toBe(200);
    expect(ok.json.results).toHaveLength(2);
    expect(ads.keywordsOf(groupA.id).map((k) => k.text)).toEqual(["running shoes", "leather shoes"]);
    expect(ok.json.results[1].resourceName).toBe(ads.keywordsOf(groupB.id)[1].resourceName);
  });

  test("partialFailure applies the valid operations and reports a policy refusal by location", async () => {
    ads.refuseText("Cheap Replica Shoes");
    const res = await mutate({ operations: [create(groupA.id, "suede shoes"), create(groupA.id, "cheap replica shoes"), create(groupA.id, "canvas shoes")], partialFailure: true });
    expect(res.status).toBe(200);
    expect(res.json.results[0].resourceName).toMatch(new RegExp(`^customers/${customer.id}/adGroupCriteria/${groupA.id}~\\d+$`));
    expect(res.json.results[1]).toEqual({});
    expect(res.json.partialFailureError.code).toBe(3);
    const err = res.json.partialFailureError.details[0].errors[0];
    expect(err.errorCode).toEqual({ policyFindingError: "POLICY_FINDING" });
    expect(err.location.fieldPathElements[0]).toEqual({ fieldName: "operations", index: 1 });
    expect(res.json.partialFailureError.details[0].requestId).toBe(res.headers.get("request-id"));
    expect(ads.keywordsOf(groupA.id).map((k) => k.text)).toEqual(["running shoes", "suede shoes", "canvas shoes"]);
  });

  test("remove, then re-create gives back the same resource name; removed keywords stay visible as REMOVED", async () => {
    const [kw] = ads.keywordsOf(groupA.id);
    const removed = await mutate({ operations: [{ remove: kw.resourceName }] });
    expect(removed.json).toEqual({ results: [{ resourceName: kw.resourceName }] });
    expect(ads.keywordsOf(groupA.id)).toEqual([]);
    const again = await mutate({ operations: [{ remove: kw.resourceName }] });
    expect(codes(again.json)).toEqual([{ mutateError: "RESOURCE_NOT_FOUND" }]);
    const listed = await search(`${KEYWORDS} AND ad_group.id = ${groupA.id}`);
    expect(listed.json.results[0].adGroupCriterion.status).toBe("REMOVED");
    const back = await mutate({ operations: [create(groupA.id, "running shoes", "PHRASE")] });
    expect(back.json.results[0].resourceName).toBe(kw.resourceName);
    expect(ads.keywordsOf(groupA.id).map((k) => [k.text, k.status])).toEqual([["running shoes", "ENABLED"]]);
  });

  test("update changes status only; text is immutable; MUTABLE_RESOURCE returns the resource", async () => {
    const [kw] = ads.keywordsOf(groupA.id);
    const paused = await mutate({ operations: [{ update: { resourceName: kw.resourceName, status: "PAUSED" }, updateMask: "status" }], responseContentType: "MUTABLE_RESOURCE" });
    expect(paused.status).toBe(200);
    expect(paused.json.results[0].adGroupCriterion).toMatchObject({ resourceName: kw.resourceName, status: "PAUSED", keyword: { text: "running shoes", matchType: "PHRASE" } });
    expect(ads.keyword(kw.resourceName)!.status).toBe("PAUSED");
    const renamed = await mutate({ operations: [{ update: { resourceName: kw.resourceName, keyword: { text: "other" } }, updateMask: "keyword.text" }] });
    expect(codes(renamed.json)).toEqual([{ fieldError: "IMMUTABLE_FIELD" }]);
    const noMask = await mutate({ operations: [{ update: { resourceName: kw.resourceName, status: "ENABLED" } }] });
    expect(codes(noMask.json)).toEqual([{ fieldMaskError: "FIELD_MASK_MISSING" }]);
    expect(ads.keyword(kw.resourceName)!.status).toBe("PAUSED");
  });
});

describe("quota and faults", () => {
  test("RESOURCE_TEMPORARILY_EXHAUSTED carries a retry delay, then calls succeed again", async () => {
    ads.failNext("RESOURCE_TEMPORARILY_EXHAUSTED", 1);
    const res = await search("SELECT customer.id FROM customer");
    expect(res.status).toBe(429);
    expect(res.json.error.status).toBe("RESOURCE_EXHAUSTED");
    expect(failure(res.json).errors[0]).toMatchObject({ errorCode: { quotaError: "RESOURCE_TEMPORARILY_EXHAUSTED" }, details: { quotaErrorDetails: { retryDelay: "5s" } } });
    expect((await search("SELECT customer.id FROM customer")).status).toBe(200);
    ads.failNext("INTERNAL", 1);
    expect((await search("SELECT customer.id FROM customer")).status).toBe(500);
    ads.failNext("UNAVAILABLE", 1);
    expect((await mutate({ operations: [create(groupA.id, "x shoes")] })).status).toBe(503);
    expect(ads.keywordsOf(groupA.id)).toHaveLength(1);
  });

  test("each mutate operation counts against the daily limit; past it RESOURCE_EXHAUSTED without retry delay", async () => {
    ads.dailyOperationLimit = 3;
    const first = await mutate({ operations: [create(groupA.id, "a shoes"), create(groupA.id, "b shoes")] });
    expect(first.status).toBe(200);
    expect(ads.operationsToday()).toBe(2);
    const over = await mutate({ operations: [create(groupA.id, "c shoes"), create(groupA.id, "d shoes")] });
    expect(over.status).toBe(429);
    expect(codes(over.json)).toEqual([{ quotaError: "RESOURCE_EXHAUSTED" }]);
    expect(JSON.stringify(over.json)).not.toMatch(/retryDelay/);
    expect(ads.keywordsOf(groupA.id).map((k) => k.text)).toEqual(["running shoes", "a shoes", "b shoes"]);
    ads.resetDay();
    expect((await mutate({ operations: [create(groupA.id, "c shoes"), create(groupA.id, "d shoes")] })).status).toBe(200);
    ads.failNext("RESOURCE_EXHAUSTED", 1);
    expect(codes((await search("SELECT customer.id FROM customer")).json)).toEqual([{ quotaError: "RESOURCE_EXHAUSTED" }]);
  });

  test("requests are recorded without the authorization header", async () => {
    await search("SELECT customer.id FROM customer", {}, customer.id, { headers: { "login-customer-id": customer.id } });
    const last = ads.requests.at(-1)!;
    expect(last).toMatchObject({ method: "POST", path: `${V}/customers/${customer.id}/googleAds:search`, status: 200, body: { query: "SELECT customer.id FROM customer" } });
    expect(last.headers).not.toHaveProperty("authorization");
    expect(last.headers["login-customer-id"]).toBe(customer.id);
  });
});
