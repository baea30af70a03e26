// Proves the Pinterest API v5 stand-in (tests/peers/pinterest-ads-server.ts) speaks the protocol the Pinterest ads
// connector relies on, with plain fetch, and that what it receives and answers is checked against Pinterest's own
// published description (specViolations stays empty for well-formed traffic, and catches malformed traffic): paths
// under /v5, bearer tokens and Pinterest's 401s, the token endpoint's Basic-only client auth and continuous refresh,
// bookmark paging, the interest catalogue, whole-spec ad group PATCH with per-item exceptions, keyword create and
// archive with per-keyword errors, rate-limit headers, per-category throttles, the Trial daily cap and 500s.
import { PinterestSpec, startPinterestAdsServer, type PinterestAdsServer } from "./pinterest-ads-server.ts";

let pin: PinterestAdsServer;
const TOKEN = "pina_test-token-0001";
const ACCOUNT = "549755885175";
const SPEC = { LOCATION: ["US"], MINIMUM_AGE: "25", MAXIMUM_AGE: "45", GENDER: ["female"], INTEREST: ["935249274030"] };
let campaignId: string;
let groupId: string;

beforeAll(async () => {
  pin = await startPinterestAdsServer();
  pin.addToken(TOKEN);
  pin.addAdAccount({ id: ACCOUNT, name: "Pins US" });
  pin.addAdAccount({ id: "549755800000", name: "Someone else's" });
  campaignId = pin.addCampaign({ adAccountId: ACCOUNT, name: "Spring" }).id;
});
afterAll(() => pin.close());
beforeEach(() => {
  pin.resetLog();
  groupId = pin.addAdGroup({ adAccountId: ACCOUNT, campaignId, name: "Decor lovers", targetingSpec: SPEC }).id;
});
// Everything a test sent and got back matched Pinterest's description, unless the test says otherwise.
afterEach(() => expect(pin.specViolations).toEqual([]));

const v5 = (p: string) => `${pin.url}/v5/${p}`;
async function call(method: string, path: string, opts: { query?: Record<string, string | string[]>; body?: unknown; token?: string | null } = {}) {
  const u = new URL(v5(path));
  for (const [k, val] of Object.entries(opts.query ?? {})) for (const x of Array.isArray(val) ? val : [val]) u.searchParams.append(k, x);
  const token = opts.token === undefined ? TOKEN : opts.token;
  const res = await fetch(u, {
    method, headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(opts.body !== undefined ? { "content-type": "application/json" } : {}) },
    ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
  });
  return { status: res.status, headers: res.headers, body: await res.json() as any };
}
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}`;
async function token(form: Record<string, string>, auth: string | null = basic(pin.app.clientId, pin.app.clientSecret)) {
  const res = await fetch(v5("oauth/token"), { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", ...(auth ? { authorization: auth } : {}) }, body: new URLSearchParams(form) });
  return { status: res.status, body: await res.json() as any };
}

describe("the published description as a checker", () => {
  const spec = new PinterestSpec();

  test("finds operations, their rate-limit category, and flags what the description does not allow", () => {
    expect(spec.operation("PATCH", `/ad_accounts/${ACCOUNT}/ad_groups`)?.template).toBe("/ad_accounts/{ad_account_id}/ad_groups");
    expect(spec.operation("GET", `/ad_accounts/${ACCOUNT}/ad_groups/analytics`)?.template).toBe("/ad_accounts/{ad_account_id}/ad_groups/analytics");
    expect(spec.category("PATCH", `/ad_accounts/${ACCOUNT}/ad_groups`)).toBe("ads_write");
    expect(spec.category("GET", `/ad_accounts/${ACCOUNT}/campaigns`)).toBe("ads_read");
    const req = (method: string, apiPath: string, body: unknown, query = "", auth = "Bearer x") => spec.checkRequest({
      method, apiPath, query: new URLSearchParams(query), headers: { authorization: auth, "content-type": "application/json" }, body: body === undefined ? "" : JSON.stringify(body),
    });
    expect(req("PATCH", `/ad_accounts/${ACCOUNT}/ad_groups`, [{ id: "1", targeting_spec: SPEC }])).toEqual([]);
    expect(req("PATCH", `/ad_accounts/${ACCOUNT}/ad_groups`, { id: "1" }).join()).toMatch(/must be array/);
    expect(req("PATCH", `/ad_accounts/${ACCOUNT}/ad_groups`, [{ targeting_spec: SPEC }]).join()).toMatch(/required property 'id'/);
    expect(req("PATCH", `/ad_accounts/${ACCOUNT}/ad_groups`, [{ id: "1", targeting_spec: { GENDER: ["robot"] } }]).join()).toMatch(/GENDER\/0 must be equal to one of the allowed values/);
    expect(req("PATCH", `/ad_accounts/${ACCOUNT}/ad_groups`, Array.from({ length: 31 }, (_, i) => ({ id: String(i) }))).join()).toMatch(/must NOT have more than 30 items/);
    expect(req("GET", `/ad_accounts/${ACCOUNT}/campaigns`, undefined, "page_size=500").join()).toMatch(/page_size must be <= 250/);
    expect(req("GET", `/ad_accounts/${ACCOUNT}/campaigns`, undefined, "limit=5").join()).toMatch(/query limit is not a parameter/);
    expect(req("GET", `/ad_accounts/act_1/campaigns`, undefined).join()).toMatch(/path ad_account_id must match pattern/);
    expect(req("POST", `/ad_accounts/${ACCOUNT}/keywords`, { parent_id: "1", keywords: [{ value: "x" }] }).join()).toMatch(/required property 'match_type'/);
    expect(req("GET", `/ad_accounts/${ACCOUNT}/campaigns`, undefined, "", "").join()).toMatch(/credentials must be/);
    expect(spec.checkResponse({ method: "GET", apiPath: `/ad_accounts/${ACCOUNT}/campaigns`, status: 200, body: { items: [{ id: "C1" }] } }).join()).toMatch(/id must match pattern/);
    expect(spec.checkResponse({ method: "GET", apiPath: `/ad_accounts/${ACCOUNT}/campaigns`, status: 429, body: { error: "x" } }).join()).toMatch(/required property 'code'/);
    // The token response's discriminator (response_type) picks the schema that requires the rotated refresh token.
    expect(spec.checkResponse({ method: "POST", apiPath: "/oauth/token", status: 200, body: { access_token: "a", token_type: "bearer", expires_in: 1, scope: "ads:read", response_type: "refresh_token" } }).join())
      .toMatch(/required property 'refresh_token'/);
  });

  test("the stand-in records a request the description does not allow", async () => {
    await call("GET", `ad_accounts/${ACCOUNT}/campaigns`, { query: { fields: "id,name" } });
    expect(pin.specViolations).toEqual([expect.stringMatching(/query fields is not a parameter/)]);
    pin.specViolations.length = 0;
  });
});

describe("paths and tokens", () => {
  test("missing, unknown and expired tokens are Pinterest's 401 code 2; another account is 403 code 29", async () => {
    const none = await call("GET", `ad_accounts/${ACCOUNT}/campaigns`, { token: null });
    expect([none.status, none.body]).toEqual([401, { code: 2, message: "Authentication failed." }]);
    pin.specViolations.length = 0; // a request without credentials is, rightly, outside the description
    expect((await call("GET", `ad_accounts/${ACCOUNT}/campaigns`, { token: "pina_nobody" })).status).toBe(401);
    pin.addToken("pina_short", { expiresInS: 3600 });
    expect((await call("GET", `ad_accounts/${ACCOUNT}/campaigns`, { token: "pina_short" })).status).toBe(200);
    pin.expireToken("pina_short");
    expect((await call("GET", `ad_accounts/${ACCOUNT}/campaigns`, { token: "pina_short" })).body.code).toBe(2);
    pin.addToken("pina_narrow", { accounts: ["549755800000"] });
    const other = await call("GET", `ad_accounts/${ACCOUNT}/ad_groups`, { token: "pina_narrow" });
    expect([other.status, other.body.code]).toEqual([403, 29]);
    const answers = pin.requests.map((r) => r.requestId);
    expect(new Set(answers).size).toBe(answers.length);
  });

  test("a read-only token cannot write (401 code 3)", async () => {
    pin.addToken("pina_readonly", { scopes: ["ads:read"] });
    const r = await call("PATCH", `ad_accounts/${ACCOUNT}/ad_groups`, { token: "pina_readonly", body: [{ id: groupId, targeting_spec: SPEC }] });
    expect([r.status, r.body.code]).toEqual([401, 3]);
  });
});

describe("OAuth token endpoint", () => {
  test("Basic client auth only; a code once; each refresh rotates the refresh token (continuous refresh)", async () => {
    pin.addCode("code-1", { redirectUri: "https://app.example/cb", accounts: [ACCOUNT] });
    const asForm = await token({ grant_type: "authorization_code", code: "code-1", redirect_uri: "https://app.example/cb", client_id: pin.app.clientId, client_secret: pin.app.clientSecret }, null);
    expect([asForm.status, asForm.body.code]).toEqual([401, 2]);
    expect((await token({ grant_type: "authorization_code", code: "code-1", redirect_uri: "https://app.example/cb" }, basic(pin.app.clientId, "nope"))).status).toBe(401);
    pin.specViolations.length = 0; // the first one sent no Basic credentials: outside the description, as it should be
    const wrongUri = await token({ grant_type: "authorization_code", code: "code-1", redirect_uri: "https://app.example/other" });
    expect(wrongUri.status).toBe(400);
    const first = await token({ grant_type: "authorization_code", code: "code-1", redirect_uri: "https://app.example/cb", continuous_refresh: "true" });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      access_token: expect.stringMatching(/^pina_/), refresh_token: expect.stringMatching(/^pinr_/), response_type: "authorization_code", token_type: "bearer",
      expires_in: 30 * 86_400, refresh_token_expires_in: 60 * 86_400, refresh_token_expires_at: expect.any(Number), scope: "ads:read,ads:write",
    });
    expect((await token({ grant_type: "authorization_code", code: "code-1", redirect_uri: "https://app.example/cb" })).status).toBe(400);
    expect((await call("GET", `ad_accounts/${ACCOUNT}/campaigns`, { token: first.body.access_token })).status).toBe(200);

    const second = await token({ grant_type: "refresh_token", refresh_token: first.body.refresh_token });
    expect(second.body).toMatchObject({ response_type: "refresh_token", refresh_token: expect.stringMatching(/^pinr_/), expires_in: 30 * 86_400 });
    expect(second.body.refresh_token).not.toBe(first.body.refresh_token);
    expect((await token({ grant_type: "refresh_token", refresh_token: first.body.refresh_token })).status).toBe(400); // used up
    expect((await token({ grant_type: "refresh_token", refresh_token: second.body.refresh_token })).status).toBe(200);
    expect(pin.counts).toMatchObject({ authorization_code: 1, refresh_token: 2 });
    expect(pin.tokenRequests.find((t) => t.continuous_refresh)?.continuous_refresh).toBe("true");
    expect(JSON.stringify(pin.requests)).not.toContain(first.body.refresh_token);
  });
});

describe("reads", () => {
  test("campaigns and ad groups page with bookmarks; statuses default to ACTIVE and PAUSED", async () => {
    const ids = [1, 2, 3, 4].map((i) => pin.addAdGroup({ adAccountId: ACCOUNT, campaignId, name: `Group ${i}`, targetingSpec: { LOCATION: ["US"] } }).id);
    const archived = pin.addAdGroup({ adAccountId: ACCOUNT, campaignId, name: "Old", targetingSpec: { LOCATION: ["US"] }, status: "ARCHIVED" }).id;
    const seen: string[] = [];
    let bookmark: string | null = null;
    let pages = 0;
    do {
      const r = await call("GET", `ad_accounts/${ACCOUNT}/ad_groups`, { query: { page_size: "2", ...(bookmark ? { bookmark } : {}) } });
      expect(r.status).toBe(200);
      expect(r.headers.get("x-ratelimit-limit")).toMatch(/^\d+, \d+;w=60$/);
      seen.push(...r.body.items.map((g: any) => g.id));
      bookmark = r.body.bookmark;
      pages++;
    } while (bookmark && pages < 20);
    expect(pages).toBeGreaterThanOrEqual(3);
    for (const id of [groupId, ...ids]) expect(seen).toContain(id);
    expect(seen).not.toContain(archived);
    expect(new Set(seen).size).toBe(seen.length);
    const withArchived = await call("GET", `ad_accounts/${ACCOUNT}/ad_groups`, { query: { ad_group_ids: [archived, groupId], entity_statuses: ["ACTIVE", "ARCHIVED"] } });
    expect(withArchived.body.items.map((g: any) => g.status).sort()).toEqual(["ACTIVE", "ARCHIVED"]);
    const one = (await call("GET", `ad_accounts/${ACCOUNT}/ad_groups`, { query: { ad_group_ids: groupId } })).body.items[0];
    expect(one).toMatchObject({ id: groupId, campaign_id: campaignId, ad_account_id: ACCOUNT, targeting_spec: SPEC, type: "adgroup" });
    const named = (await call("GET", `ad_accounts/${ACCOUNT}/ad_groups`, { query: { ad_group_ids: groupId, translate_interests_to_names: "true" } })).body.items[0];
    expect(named.targeting_spec.INTEREST).toEqual(["Home decor"]);
    const campaigns = await call("GET", `ad_accounts/${ACCOUNT}/campaigns`);
    expect(campaigns.body.items).toContainEqual(expect.objectContaining({ id: campaignId, name: "Spring", status: "ACTIVE", type: "campaign" }));
    expect((await call("GET", `ad_accounts/${ACCOUNT}/ad_groups`, { query: { bookmark: "garbage" } })).status).toBe(400);
  });

  test("the INTEREST targeting options are Pinterest's id -> name objects; retired interests drop out", async () => {
    pin.addInterest({ id: "970000000001", name: "Retro sneakers" });
    const r = await call("GET", "resources/targeting/INTEREST", { query: { ad_account_id: ACCOUNT } });
    expect(r.status).toBe(200);
    expect(r.body[0]).toMatchObject({ "935249274030": "Home decor", "970000000001": "Retro sneakers" });
    pin.refuseInterest("970000000001");
    expect((await call("GET", "resources/targeting/INTEREST")).body[0]["970000000001"]).toBeUndefined();
  });
});

describe("ad group writes", () => {
  test("a PATCH replaces the whole targeting_spec; items fail alone with exceptions; HTTP 200", async () => {
    const other = pin.addAdGroup({ adAccountId: ACCOUNT, campaignId, name: "Gardeners", targetingSpec: { LOCATION: ["GB"] } }).id;
    const r = await call("PATCH", `ad_accounts/${ACCOUNT}/ad_groups`, { body: [
      { id: groupId, targeting_spec: { LOCATION: ["US", "CA"], INTEREST: ["906810023155"] } },
      { id: other, targeting_spec: { INTEREST: ["906810023155"] } },
      { id: "999999999999", targeting_spec: { LOCATION: ["US"] } },
    ] });
    expect(r.status).toBe(200);
    expect(r.body.items[0].data).toMatchObject({ id: groupId, targeting_spec: { LOCATION: ["US", "CA"], INTEREST: ["906810023155"] } });
    expect(r.body.items[1]).toEqual({ exceptions: [{ code: expect.any(Number), message: expect.stringMatching(/LOCATION or GEO/) }] });
    expect(r.body.items[2].exceptions[0].message).toMatch(/not found/);
    expect(pin.targetingOf(groupId)).toEqual({ LOCATION: ["US", "CA"], INTEREST: ["906810023155"] }); // ages and gender gone: replaced whole
    expect(pin.targetingOf(other)).toEqual({ LOCATION: ["GB"] });
  });

  test("unknown or retired interests and refused ad groups are item exceptions; budget fields are recorded", async () => {
    pin.refuseInterest("924581335376");
    const bad = await call("PATCH", `ad_accounts/${ACCOUNT}/ad_groups`, { body: [{ id: groupId, targeting_spec: { ...SPEC, INTEREST: ["924581335376"] } }] });
    expect(bad.body.items[0].exceptions[0].message).toContain("924581335376");
    pin.refuseAdGroup(groupId);
    expect((await call("PATCH", `ad_accounts/${ACCOUNT}/ad_groups`, { body: [{ id: groupId, targeting_spec: SPEC }] })).body.items[0].exceptions[0].message).toMatch(/review/);
    expect(pin.targetingOf(groupId)).toEqual(SPEC);
    const budget = await call("PATCH", `ad_accounts/${ACCOUNT}/ad_groups`, { body: [{ id: groupId, budget_in_micro_currency: 99_000_000 }] });
    expect(budget.body.items[0].data.budget_in_micro_currency).toBe(99_000_000);
    expect(pin.budgetWrites).toEqual([{ adGroupId: groupId, field: "budget_in_micro_currency", value: 99_000_000 }]);
    expect((await call("PATCH", `ad_accounts/${ACCOUNT}/ad_groups`, { body: [] })).status).toBe(400);
    pin.specViolations.length = 0; // an empty batch is outside the description (minItems 1), as the answer says
  });
});

describe("audience sizing", () => {
  test("a read that estimates who a targeting spec reaches: interests narrow, more interests widen, Pinterest's spec rules apply", async () => {
    pin.addInterest({ id: "970000000002", name: "Obscure hobby", share: 0 });
    const size = async (ts: Record<string, unknown>) => (await call("POST", `ad_accounts/${ACCOUNT}/ad_groups/audience_sizing`, { body: { targeting_spec: ts, auto_targeting_enabled: false } }));
    const all = (await size({ LOCATION: ["US"] })).body;
    const one = (await size({ LOCATION: ["US"], INTEREST: ["935249274030"] })).body;
    const two = (await size({ LOCATION: ["US"], INTEREST: ["935249274030", "906810023155"] })).body;
    expect(all).toEqual({ audience_size_lower_bound: expect.any(Number), audience_size_upper_bound: expect.any(Number) });
    expect(all.audience_size_lower_bound).toBeLessThan(all.audience_size_upper_bound);
    expect(one.audience_size_upper_bound).toBeLessThan(all.audience_size_upper_bound);
    expect(two.audience_size_upper_bound).toBeGreaterThan(one.audience_size_upper_bound);
    expect((await size({ LOCATION: ["US"], INTEREST: ["970000000002"] })).body.audience_size_upper_bound).toBe(0);
    const bad = await size({ GEO: ["Bay Area"] });
    expect([bad.status, bad.body]).toEqual([400, { code: 400, message: "Invalid ad group audience sizing parameters." }]);
    pin.addToken("pina_reader", { scopes: ["ads:read"] });
    expect((await call("POST", `ad_accounts/${ACCOUNT}/ad_groups/audience_sizing`, { token: "pina_reader", body: { targeting_spec: { LOCATION: ["GB"] } } })).status).toBe(200);
    expect(pin.requests.map((r) => r.category)).toEqual(Array(6).fill("ads_read"));
  });
});

describe("keywords", () => {
  test("create with per-keyword errors, list by ad group, archive by id", async () => {
    const created = await call("POST", `ad_accounts/${ACCOUNT}/keywords`, { body: { parent_id: groupId, keywords: [
      { value: "boho living room", match_type: "PHRASE" }, { value: "x".repeat(121), match_type: "BROAD" }, { value: "rattan chair", match_type: "EXACT" },
    ] } });
    expect(created.status).toBe(200);
    expect(created.body.keywords.map((k: any) => [k.value, k.match_type, k.parent_id, k.archived])).toEqual([["boho living room", "PHRASE", groupId, false], ["rattan chair", "EXACT", groupId, false]]);
    expect(created.body.errors).toEqual([{ data: { match_type: "BROAD", value: "x".repeat(121), type: "keyword" }, error_messages: [expect.stringMatching(/120/)] }]);
    const dup = await call("POST", `ad_accounts/${ACCOUNT}/keywords`, { body: { parent_id: groupId, keywords: [{ value: "Boho living room", match_type: "PHRASE" }] } });
    expect(dup.body.errors[0].error_messages[0]).toMatch(/already exists/);
    const listed = await call("GET", `ad_accounts/${ACCOUNT}/keywords`, { query: { ad_group_id: groupId, page_size: "1" } });
    expect(listed.body.items).toHaveLength(1);
    expect(listed.body.bookmark).toEqual(expect.any(String));
    const archived = await call("PATCH", `ad_accounts/${ACCOUNT}/keywords`, { body: { keywords: [{ id: created.body.keywords[0].id, archived: true }, { id: "123456789", archived: true }] } });
    expect(archived.body.keywords[0]).toMatchObject({ id: created.body.keywords[0].id, archived: true });
    expect(archived.body.errors[0].error_messages).toEqual(["Keyword not found."]);
    expect(pin.keywordsOf(groupId).map((k) => k.value)).toEqual(["rattan chair"]);
    pin.refuseAdGroup(groupId);
    const refused = await call("POST", `ad_accounts/${ACCOUNT}/keywords`, { body: { parent_id: groupId, keywords: [{ value: "cane bench", match_type: "PHRASE" }] } });
    expect([refused.status, refused.body.keywords, refused.body.errors[0].error_messages[0]]).toEqual([200, [], expect.stringMatching(/review/)]);
  });
});

describe("rate limits and faults", () => {
  test("every API answer carries the category's rate-limit headers and a request id", async () => {
    const a = await call("GET", `ad_accounts/${ACCOUNT}/campaigns`);
    const b = await call("GET", `ad_accounts/${ACCOUNT}/campaigns`);
    expect(a.headers.get("x-pinterest-rid")).toMatch(/^[0-9a-f]{16}$/);
    expect(Number(b.headers.get("x-ratelimit-remaining"))).toBe(Number(a.headers.get("x-ratelimit-remaining")) - 1);
    expect(Number(a.headers.get("x-ratelimit-reset"))).toBeGreaterThan(0);
    expect(pin.requests.map((r) => r.category)).toEqual(["ads_read", "ads_read"]);
  });

  test("a per-category throttle is a 429 code 8 with the reset in seconds, only for that category", async () => {
    pin.failNext("rate_limit", 1, { resetS: 7, category: "ads_write" });
    expect((await call("GET", `ad_accounts/${ACCOUNT}/campaigns`)).status).toBe(200); // ads_read passes
    const r = await call("PATCH", `ad_accounts/${ACCOUNT}/ad_groups`, { body: [{ id: groupId, targeting_spec: { LOCATION: ["DE"] } }] });
    expect([r.status, r.body.code]).toEqual([429, 8]);
    expect(r.headers.get("x-ratelimit-reset")).toBe("7");
    expect(r.headers.get("x-ratelimit-limit")).toBe("400, 400;w=60");
    expect(r.headers.get("x-envoy-ratelimited")).toBe("true");
    expect(pin.targetingOf(groupId)).toEqual(SPEC);
    expect(pin.requests.at(-1)).toMatchObject({ throttled: true, category: "ads_write", status: 429 });
  });

  test("the Trial daily cap is a 429 whose window is a day and whose reset is the next UTC midnight; 500s pass", async () => {
    pin.failNext("trial_cap", 1);
    const r = await call("GET", `ad_accounts/${ACCOUNT}/campaigns`);
    expect([r.status, r.body.code, r.headers.get("x-ratelimit-limit")]).toEqual([429, 8, "1000, 1000;w=86400"]);
    const untilMidnight = (new Date().setUTCHours(24, 0, 0, 0) - Date.now()) / 1000;
    expect(Math.abs(Number(r.headers.get("x-ratelimit-reset")) - untilMidnight)).toBeLessThan(5);
    pin.failNext("transient", 1);
    expect((await call("GET", `ad_accounts/${ACCOUNT}/campaigns`)).status).toBe(500);
    expect((await call("GET", `ad_accounts/${ACCOUNT}/campaigns`)).status).toBe(200);
  });
});
