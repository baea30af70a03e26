// Proves the TikTok API for Business stand-in (tests/peers/tiktok-ads-server.ts) speaks the protocol the TikTok ads
// connector relies on, with plain fetch: the `{code, message, request_id, data}` envelope with HTTP 200 for failures,
// the Access-Token header, the JSON auth_code exchange and revocation, page-numbered reads with JSON-string
// parameters, the interest lookups, list-replacing ad group updates with TikTok's refusals, and injected 40100s.
import { startTikTokAdsServer, TIKTOK_CODES, type TikTokAdsServer } from "./tiktok-ads-server.ts";

let tt: TikTokAdsServer;
const TOKEN = "tt-token-0001";
const ADV = "7000000001";
const OTHER = "7000000002";
let campaignId: string;
let adgroupId: string;

beforeAll(async () => {
  tt = await startTikTokAdsServer();
  tt.addToken(TOKEN, { advertisers: [ADV] });
  campaignId = tt.addCampaign({ advertiserId: ADV, name: "Spring" }).campaign_id;
  tt.addCampaign({ advertiserId: OTHER, name: "Not yours" });
});
afterAll(() => tt.close());
beforeEach(() => {
  tt.resetLog();
  adgroupId = tt.addAdGroup({ advertiserId: ADV, campaignId, name: "Coffee lovers", interestCategoryIds: ["30"], interestKeywordIds: ["710001"] }).adgroup_id;
});

const u = (path: string, query: Record<string, unknown> = {}) => {
  const url = new URL(`${tt.url}/open_api/v1.3/${path}`);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, typeof v === "string" ? v : JSON.stringify(v));
  return url;
};
async function get(path: string, query: Record<string, unknown> = {}, headers: Record<string, string> = { "Access-Token": TOKEN }) {
  const res = await fetch(u(path, query), { headers });
  return { status: res.status, headers: res.headers, body: await res.json() as any };
}
async function post(path: string, body: unknown, headers: Record<string, string> = { "Access-Token": TOKEN }) {
  const res = await fetch(u(path), { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  return { status: res.status, headers: res.headers, body: await res.json() as any };
}

describe("envelope and auth", () => {
  test("every answer is the envelope; failures come with HTTP 200 and code != 0; request_id is in X-Tt-Logid", async () => {
    const ok = await get("campaign/get/", { advertiser_id: ADV });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ code: 0, message: "OK", request_id: expect.any(String), data: expect.any(Object) });
    expect(ok.headers.get("x-tt-logid")).toBe(ok.body.request_id);
    const bad = await get("campaign/get/", { advertiser_id: ADV, page_size: "1001" });
    expect([bad.status, bad.body.code]).toEqual([200, TIKTOK_CODES.invalidParam]);
    expect(bad.body.message).toMatch(/page_size/);
    const lost = await get("nothing/here/", { advertiser_id: ADV });
    expect([lost.status, lost.body.code]).toEqual([404, TIKTOK_CODES.invalidParam]);
  });

  test("only Access-Token authenticates: Bearer is not read, unknown tokens and other advertisers are refused", async () => {
    expect((await get("campaign/get/", { advertiser_id: ADV }, {})).body.code).toBe(TIKTOK_CODES.tokenMissing);
    expect((await get("campaign/get/", { advertiser_id: ADV }, { authorization: `Bearer ${TOKEN}` })).body.code).toBe(TIKTOK_CODES.tokenMissing);
    expect((await get("campaign/get/", { advertiser_id: ADV }, { "Access-Token": "nope" })).body.code).toBe(TIKTOK_CODES.tokenInvalid);
    expect((await get("campaign/get/", { advertiser_id: OTHER })).body.code).toBe(TIKTOK_CODES.noPermission);
    expect((await get("campaign/get/", {})).body.code).toBe(TIKTOK_CODES.invalidParam);
    expect(tt.requests.map((r) => r.auth)).toEqual([null, "authorization", "access-token", "access-token", "access-token"]);
    expect(JSON.stringify(tt.requests)).not.toContain(TOKEN);
  });
});

describe("OAuth", () => {
  test("auth_code exchanges once (JSON body) for a long-term token with the advertisers; revocation ends it", async () => {
    tt.addAuthCode("ac-1", { advertisers: [ADV] });
    const creds = { app_id: tt.app.appId, secret: tt.app.secret };
    expect((await post("oauth2/access_token/", { ...creds, secret: "wrong", auth_code: "ac-1" }, {})).body.code).toBe(TIKTOK_CODES.badApp);
    const r = await post("oauth2/access_token/", { ...creds, auth_code: "ac-1" }, {});
    expect([r.status, r.body.code]).toEqual([200, 0]);
    expect(r.body.data).toEqual({ access_token: expect.any(String), advertiser_ids: [ADV], scope: expect.any(Array) });
    expect(r.body.data).not.toHaveProperty("expires_in");
    expect((await post("oauth2/access_token/", { ...creds, auth_code: "ac-1" }, {})).body.code).toBe(TIKTOK_CODES.badAuthCode);
    tt.addAuthCode("ac-old", { advertisers: [ADV], expiresInS: -1 });
    expect((await post("oauth2/access_token/", { ...creds, auth_code: "ac-old" }, {})).body.code).toBe(TIKTOK_CODES.badAuthCode);
    // A form body is not what TikTok takes.
    const form = await fetch(u("oauth2/access_token/"), { method: "POST", body: new URLSearchParams({ ...creds, auth_code: "x" }) });
    expect(((await form.json()) as any).code).toBe(TIKTOK_CODES.invalidParam);

    const token = r.body.data.access_token;
    expect((await get("campaign/get/", { advertiser_id: ADV }, { "Access-Token": token })).body.code).toBe(0);
    expect((await post("oauth2/revoke_token/", { ...creds, access_token: token }, {})).body.code).toBe(0);
    expect((await get("campaign/get/", { advertiser_id: ADV }, { "Access-Token": token })).body.code).toBe(TIKTOK_CODES.tokenInvalid);
    expect(tt.counts).toMatchObject({ exchanged: 1, revoked: 1 });
    expect(JSON.stringify(tt.requests)).not.toContain(tt.app.secret);
  });
});

describe("reads", () => {
  test("pages by number with page_info; fields select what comes back; unknown fields are refused", async () => {
    for (let i = 0; i < 4; i++) tt.addAdGroup({ advertiserId: ADV, campaignId, name: `Extra ${i}` });
    const first = await get("adgroup/get/", { advertiser_id: ADV, page: "1", page_size: "2", fields: ["adgroup_id", "adgroup_name"] });
    expect(first.body.data.list).toHaveLength(2);
    expect(Object.keys(first.body.data.list[0]).sort()).toEqual(["adgroup_id", "adgroup_name"]);
    expect(first.body.data.page_info).toMatchObject({ page: 1, page_size: 2 });
    const pages = first.body.data.page_info.total_page;
    const seen = [];
    for (let p = 1; p <= pages; p++) seen.push(...(await get("adgroup/get/", { advertiser_id: ADV, page: String(p), page_size: "2" })).body.data.list.map((a: any) => a.adgroup_id));
    expect(seen).toContain(adgroupId);
    expect(new Set(seen).size).toBe(first.body.data.page_info.total_number);
    expect((await get("adgroup/get/", { advertiser_id: ADV, fields: ["colour"] })).body.code).toBe(TIKTOK_CODES.invalidParam);
    expect((await get("adgroup/get/", { advertiser_id: ADV, filtering: "{not json" })).body.code).toBe(TIKTOK_CODES.invalidParam);
  });

  test("filtering by ad group ids gives the interest lists; deleted ad groups are left out", async () => {
    const r = await get("adgroup/get/", { advertiser_id: ADV, filtering: { adgroup_ids: [adgroupId] }, fields: ["adgroup_id", "interest_category_ids", "interest_keyword_ids"] });
    expect(r.body.data.list).toEqual([{ adgroup_id: adgroupId, interest_category_ids: ["30"], interest_keyword_ids: ["710001"] }]);
    tt.deleteAdGroup(adgroupId);
    expect((await get("adgroup/get/", { advertiser_id: ADV, filtering: { adgroup_ids: [adgroupId] } })).body.data.list).toEqual([]);
    const tooMany = Array.from({ length: 101 }, (_, i) => String(i + 1));
    expect((await get("adgroup/get/", { advertiser_id: ADV, filtering: { adgroup_ids: tooMany } })).body.code).toBe(TIKTOK_CODES.invalidParam);
  });

  test("interest lookups: keyword recommendations with status, keywords by id, the category tree", async () => {
    const rec = await get("tool/interest_keyword/recommend/", { advertiser_id: ADV, keyword: "coffee", limit: "10" });
    expect(rec.body.data.recommended_keywords.map((k: any) => [k.keyword, k.status])).toEqual([
      ["coffee", "EFFECTIVE"], ["coffee beans", "EFFECTIVE"], ["iced coffee recipes", "EFFECTIVE"], ["coffee grinder repair", "INEFFECTIVE"],
    ]);
    expect((await get("tool/interest_keyword/recommend/", { advertiser_id: ADV })).body.code).toBe(TIKTOK_CODES.invalidParam);
    const byId = await get("tool/interest_keyword/get/", { advertiser_id: ADV, keyword_query: [{ keyword_id: "710005" }, { keyword_id: "999" }] });
    expect(byId.body.data.keywords).toEqual([expect.objectContaining({ keyword_id: "710005", keyword: "running shoes" })]);
    const cats = await get("tool/interest_category/", { advertiser_id: ADV, version: "2" });
    expect(cats.body.data.interest_categories).toContainEqual(expect.objectContaining({ interest_category_id: "1001", interest_category_name: "Running", level: 2 }));
  });
});

describe("writes", () => {
  const update = (body: Record<string, unknown>) => post("adgroup/update/", { advertiser_id: ADV, adgroup_id: adgroupId, ...body });

  test("a list sent replaces that list; lists not sent are kept", async () => {
    const r = await update({ interest_keyword_ids: ["710002"] });
    expect([r.status, r.body.code]).toEqual([200, 0]);
    expect(tt.adGroup(adgroupId)).toMatchObject({ interest_keyword_ids: ["710002"], interest_category_ids: ["30"], location_ids: ["6252001"] });
    await update({ interest_category_ids: [] });
    expect(tt.adGroup(adgroupId)).toMatchObject({ interest_keyword_ids: ["710002"], interest_category_ids: [] });
  });

  test("refusals save nothing: ineffective or offline keywords, unknown categories, keyword conflict, deleted ad groups", async () => {
    const before = tt.adGroup(adgroupId);
    for (const body of [{ interest_keyword_ids: ["710001", "710004"] }, { interest_keyword_ids: ["710007"] }, { interest_category_ids: ["999"] }]) {
      const r = await update(body);
      expect([r.status, r.body.code]).toEqual([200, TIKTOK_CODES.invalidParam]);
    }
    expect((await update({ purchase_intention_keyword_ids: ["880001"] })).body.message).toMatch(/Keyword conflict/);
    expect(tt.adGroup(adgroupId)).toEqual(before);
    tt.refuseAdGroup(adgroupId);
    expect((await update({ interest_keyword_ids: ["710002"] })).body.code).toBe(TIKTOK_CODES.invalidParam);
    tt.deleteAdGroup(adgroupId);
    expect((await update({ interest_keyword_ids: [] })).body.message).toMatch(/does not exist/);
    expect(tt.writes.map((w) => w.ok)).toEqual([false, false, false, false, false, false]);
  });

  test("an ad group of a Smart+ campaign refuses targeting edits (40002) and keeps its lists; other fields still change", async () => {
    const smart = tt.addCampaign({ advertiserId: ADV, name: "Smart+", smartPlus: true }).campaign_id;
    const g = tt.addAdGroup({ advertiserId: ADV, campaignId: smart, name: "Automated", interestCategoryIds: ["30"] }).adgroup_id;
    const listed = await get("adgroup/get/", { advertiser_id: ADV, fields: ["adgroup_id", "is_smart_performance_campaign"], filtering: { adgroup_ids: [g, adgroupId] } });
    expect(listed.body.data.list).toEqual(expect.arrayContaining([{ adgroup_id: g, is_smart_performance_campaign: true }, { adgroup_id: adgroupId, is_smart_performance_campaign: false }]));
    const r = await post("adgroup/update/", { advertiser_id: ADV, adgroup_id: g, interest_category_ids: ["30", "1002"] });
    expect([r.status, r.body.code, r.body.message]).toEqual([200, TIKTOK_CODES.invalidParam, expect.stringContaining("Smart+")]);
    expect(tt.adGroup(g)!.interest_category_ids).toEqual(["30"]);
    expect((await post("adgroup/update/", { advertiser_id: ADV, adgroup_id: g, adgroup_name: "Renamed" })).body.code).toBe(0);
  });

  test("budget and bid fields are accepted and recorded (so tests can prove a connector never sends them)", async () => {
    expect((await update({ budget: 999 })).body.code).toBe(0);
    expect(tt.budgetWrites).toEqual([{ adgroupId, field: "budget", value: 999 }]);
  });
});

test("40100 and 50000 come with HTTP 200 for the next n calls, then calls answer again", async () => {
  tt.failNext("rate_limit", 2);
  for (let i = 0; i < 2; i++) {
    const r = await get("campaign/get/", { advertiser_id: ADV });
    expect([r.status, r.body.code, r.headers.get("retry-after")]).toEqual([200, TIKTOK_CODES.rateLimited, null]);
  }
  expect((await get("campaign/get/", { advertiser_id: ADV })).body.code).toBe(0);
  tt.failNext("system_error", 1);
  expect((await get("campaign/get/", { advertiser_id: ADV })).body.code).toBe(TIKTOK_CODES.systemError);
  expect(tt.requests.filter((r) => r.throttled)).toHaveLength(2);
});
