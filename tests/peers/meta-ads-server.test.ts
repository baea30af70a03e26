// Proves the Meta Graph / Marketing API stand-in (tests/peers/meta-ads-server.ts) speaks the protocol the Meta ads
// connector will rely on, with plain fetch: versioned paths, token checks, OAuth exchanges, field selection, cursor
// paging, interest search, whole-spec targeting writes and validate_only, validation errors, delivery estimates,
// usage headers and injected throttling.
import { META_SUBCODES, startMetaAdsServer, type MetaAdsServer } from "./meta-ads-server.ts";

let meta: MetaAdsServer;
const TOKEN = "EAAtest-token-0001";
const ACCOUNT = "1234567890";
const BUSINESS = "777000111";
let campaignId: string;
const ADSET = "120200000000000001";
const SPEC = { geo_locations: { countries: ["US"] }, age_min: 25, age_max: 45, flexible_spec: [{ interests: [{ id: "6003107902433", name: "Running" }] }] };

beforeAll(async () => {
  meta = await startMetaAdsServer();
  meta.addToken(TOKEN);
  meta.addAdAccount({ id: `act_${ACCOUNT}`, name: "Shoes US", businessId: BUSINESS });
  meta.addAdAccount({ id: "555", name: "Other account" });
  campaignId = meta.addCampaign({ accountId: ACCOUNT, name: "Spring", objective: "OUTCOME_TRAFFIC" }).id;
});
afterAll(() => meta.close());
beforeEach(() => {
  meta.resetLog();
  meta.addAdSet(ADSET, { accountId: ACCOUNT, campaignId, name: "Runners", targeting: SPEC });
});

const v = (path: string) => `${meta.url}/v27.0/${path}`;
async function get(path: string, query: Record<string, string> = {}, token: string | null = TOKEN) {
  const u = new URL(v(path));
  for (const [k, val] of Object.entries(query)) u.searchParams.set(k, val);
  const res = await fetch(u, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: res.status, headers: res.headers, body: await res.json() as any };
}
async function postForm(path: string, form: Record<string, string>, token = TOKEN) {
  const res = await fetch(v(path), { method: "POST", body: new URLSearchParams({ ...form, access_token: token }) });
  return { status: res.status, headers: res.headers, body: await res.json() as any };
}
async function postJson(path: string, body: Record<string, unknown>, token = TOKEN) {
  const res = await fetch(v(path), { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, headers: res.headers, body: await res.json() as any };
}

describe("versions and tokens", () => {
  test("an older version is Meta's deprecated-version error, an unknown one an unknown path; both 400", async () => {
    const old = await fetch(`${meta.url}/v24.0/me/adaccounts`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(old.status).toBe(400);
    expect(((await old.json()) as any).error).toMatchObject({ code: 2635, type: "OAuthException", message: expect.stringContaining("v27.0") });
    const unknown = await fetch(`${meta.url}/v99.0/me/adaccounts`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as any).error.code).toBe(2500);
    const bare = await fetch(`${meta.url}/me/adaccounts`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(bare.status).toBe(400);
  });

  test("missing, unknown and expired tokens are 400 OAuthExceptions with WWW-Authenticate and a trace id", async () => {
    const none = await get("me/adaccounts", {}, null);
    expect(none.status).toBe(400);
    expect(none.body.error.code).toBe(104);
    const unknown = await get("me/adaccounts", {}, "EAAnot-registered");
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: 190, type: "OAuthException" });
    expect(unknown.headers.get("www-authenticate")).toContain("invalid_token");
    meta.addToken("EAAexpired", { expiresInS: 0 });
    const expired = await get("me/adaccounts", {}, "EAAexpired");
    expect(expired.body.error).toMatchObject({ code: 190, error_subcode: META_SUBCODES.tokenExpired, message: expect.stringMatching(/^Error validating access token: Session has expired/) });
    expect(expired.body.error.fbtrace_id).toBe(expired.headers.get("x-fb-trace-id"));
    meta.addToken("EAAshort", { expiresInS: 3600 });
    expect((await get("me/adaccounts", {}, "EAAshort")).status).toBe(200);
    meta.expireToken("EAAshort");
    expect((await get("me/adaccounts", {}, "EAAshort")).body.error.error_subcode).toBe(META_SUBCODES.tokenExpired);
  });

  test("the token is accepted as Bearer, query or form parameter, and is never recorded", async () => {
    const q = await fetch(`${v("me/adaccounts")}?access_token=${TOKEN}`);
    expect(q.status).toBe(200);
    expect((await postForm(ADSET, { name: "Runners" })).status).toBe(200);
    expect((await get("me/adaccounts")).status).toBe(200);
    expect(meta.requests.map((r) => r.auth)).toEqual(["query", "body", "header"]);
    expect(JSON.stringify(meta.requests)).not.toContain(TOKEN);
  });
});

describe("OAuth token endpoint", () => {
  test("a code is exchanged once for a short-lived token, which swaps for a ~60 day token", async () => {
    meta.addCode("code-1", { redirectUri: "https://app.example/cb" });
    const q = (p: Record<string, string>) => fetch(`${v("oauth/access_token")}?${new URLSearchParams(p)}`).then(async (r) => ({ status: r.status, body: await r.json() as any }));
    const creds = { client_id: meta.app.clientId, client_secret: meta.app.clientSecret };
    const wrongUri = await q({ ...creds, redirect_uri: "https://app.example/cb/", code: "code-1" });
    expect(wrongUri.body.error).toMatchObject({ code: 100, error_subcode: META_SUBCODES.redirectMismatch });
    const short = await q({ ...creds, redirect_uri: "https://app.example/cb", code: "code-1" });
    expect(short.status).toBe(200);
    expect(short.body).toMatchObject({ token_type: "bearer", access_token: expect.any(String) });
    expect(short.body.expires_in).toBeGreaterThanOrEqual(3600);
    expect(short.body.expires_in).toBeLessThan(86_400);
    expect((await q({ ...creds, redirect_uri: "https://app.example/cb", code: "code-1" })).body.error.error_subcode).toBe(META_SUBCODES.codeUsed);
    expect((await get("me/adaccounts", {}, short.body.access_token)).status).toBe(200);

    const badSecret = await q({ grant_type: "fb_exchange_token", client_id: meta.app.clientId, client_secret: "nope", fb_exchange_token: short.body.access_token });
    expect(badSecret.status).toBe(400);
    const long = await q({ grant_type: "fb_exchange_token", ...creds, fb_exchange_token: short.body.access_token });
    expect(long.body).toEqual({ access_token: expect.any(String), token_type: "bearer", expires_in: 5_184_000 });
    expect((await get("me/adaccounts", {}, long.body.access_token)).status).toBe(200);
    expect((await q({ grant_type: "fb_exchange_token", ...creds, fb_exchange_token: "EAAunknown" })).body.error.code).toBe(190);
    expect(meta.counts).toMatchObject({ code: 1, fb_exchange_token: 1 });
  });
});

describe("reads", () => {
  test("fields select what comes back; without them only id; unknown fields are refused", async () => {
    const accts = await get("me/adaccounts", { fields: "id,account_id,name,currency,business" });
    expect(accts.body.data).toContainEqual({ id: `act_${ACCOUNT}`, account_id: ACCOUNT, name: "Shoes US", currency: "USD", business: { id: BUSINESS, name: expect.any(String) } });
    const bare = await get(ADSET);
    expect(bare.body).toEqual({ id: ADSET });
    const full = await get(ADSET, { fields: "targeting{geo_locations},name,campaign_id" });
    expect(full.body).toEqual({ targeting: SPEC, name: "Runners", campaign_id: campaignId });
    const bad = await get(ADSET, { fields: "name,colour" });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 100, message: expect.stringContaining("(colour)") });
  });

  test("an unknown id or another token's account is Graph's unsupported request (100/33)", async () => {
    const gone = await get("999999", { fields: "name" });
    expect(gone.body.error).toMatchObject({ code: 100, error_subcode: META_SUBCODES.unknownObject, type: "GraphMethodException" });
    meta.addToken("EAAnarrow", { accounts: ["555"] });
    expect((await get(ADSET, {}, "EAAnarrow")).body.error.error_subcode).toBe(META_SUBCODES.unknownObject);
    expect((await get("me/adaccounts", {}, "EAAnarrow")).body.data).toEqual([{ id: "act_555" }]);
  });

  test("edges page with cursors: limit, after, next until the last page", async () => {
    const ids = [1, 2, 3, 4, 5].map((i) => meta.addAdSet(`12030000000000000${i}`, { accountId: ACCOUNT, campaignId, name: `Set ${i}`, targeting: SPEC }).id);
    const seen: string[] = [];
    let page = await get(`act_${ACCOUNT}/adsets`, { fields: "id,name,status,campaign_id,targeting", limit: "2" });
    expect(page.body.data).toHaveLength(2);
    expect(page.body.data[0]).toMatchObject({ status: "ACTIVE", campaign_id: campaignId, targeting: SPEC });
    let hops = 0;
    for (;;) {
      seen.push(...page.body.data.map((d: any) => d.id));
      expect(page.body.paging.cursors).toEqual({ before: expect.any(String), after: expect.any(String) });
      if (!page.body.paging.next) break;
      const next = new URL(page.body.paging.next);
      expect(next.searchParams.get("after")).toBe(page.body.paging.cursors.after);
      const r = await fetch(next);
      page = { status: r.status, headers: r.headers, body: await r.json() };
      hops++;
    }
    expect(hops).toBeGreaterThanOrEqual(2);
    for (const id of [ADSET, ...ids]) expect(seen).toContain(id);
    expect(new Set(seen).size).toBe(seen.length);
    const bad = await get(`act_${ACCOUNT}/adsets`, { after: "not-a-cursor" });
    expect(bad.body.error.code).toBe(100);
  });

  test("campaigns of an account carry objective and status", async () => {
    const r = await get(`act_${ACCOUNT}/campaigns`, { fields: "id,name,status,objective" });
    expect(r.body.data).toContainEqual({ id: campaignId, name: "Spring", status: "ACTIVE", objective: "OUTCOME_TRAFFIC" });
    expect((await get(`act_555/campaigns`, { fields: "id" })).body.data).toEqual([]);
  });
});

describe("targeting search", () => {
  test("adinterest matches a case-insensitive substring of the name and honours limit", async () => {
    meta.addInterest({ id: "6009999000001", name: "Barefoot RUNNING shoes", audience_size_lower_bound: 100, audience_size_upper_bound: 200 });
    const r = await get("search", { type: "adinterest", q: "running" });
    const names = r.body.data.map((d: any) => d.name);
    expect(names).toEqual(expect.arrayContaining(["Running", "Trail running", "Barefoot RUNNING shoes"]));
    expect(names).not.toContain("Coffee");
    expect(r.body.data[0]).toEqual({ id: expect.any(String), name: expect.any(String), audience_size_lower_bound: expect.any(Number), audience_size_upper_bound: expect.any(Number), path: expect.any(Array), description: null, topic: expect.any(String) });
    expect((await get("search", { type: "adinterest", q: "running", limit: "1" })).body.data).toHaveLength(1);
    expect((await get("search", { type: "adinterest" })).body.error.code).toBe(100);
  });

  test("adinterestvalid reports retired interests as invalid", async () => {
    meta.addInterest({ id: "6009999000002", name: "Retro sneakers" });
    meta.refuseInterest("6009999000002");
    const r = await get("search", { type: "adinterestvalid", interest_fbid_list: JSON.stringify(["6003626773307", "6009999000002", "1"]) });
    expect(r.body.data.map((d: any) => [d.id, d.valid])).toEqual([["6003626773307", true], ["6009999000002", false], ["1", false]]);
    expect((await get("search", { type: "adinterest", q: "retro" })).body.data).toEqual([]);
  });
});

describe("targeting writes", () => {
  const next = { geo_locations: { countries: ["US", "CA"] }, age_min: 18, flexible_spec: [{ interests: [{ id: "6003626773307" }] }] };

  test("a write replaces the whole spec (fields not sent are gone) and names interests like Meta", async () => {
    const r = await postForm(ADSET, { targeting: JSON.stringify(next) });
    expect(r).toMatchObject({ status: 200, body: { success: true } });
    expect(meta.targetingOf(ADSET)).toEqual({ geo_locations: { countries: ["US", "CA"] }, age_min: 18, flexible_spec: [{ interests: [{ id: "6003626773307", name: "Coffee" }] }] });
    expect(meta.targetingOf(ADSET)).not.toHaveProperty("age_max");
    const read = await get(ADSET, { fields: "targeting" });
    expect(read.body.targeting).toEqual(meta.targetingOf(ADSET));
  });

  test("JSON bodies with targeting as an object work too", async () => {
    expect((await postJson(ADSET, { targeting: next, name: "Coffee people" })).body).toEqual({ success: true });
    expect(meta.adSet(ADSET)).toMatchObject({ name: "Coffee people", targeting: { geo_locations: { countries: ["US", "CA"] } } });
  });

  test("validate_only checks the write without saving it", async () => {
    const before = await get(ADSET, { fields: "targeting,updated_time" });
    const ok = await postForm(ADSET, { targeting: JSON.stringify(next), execution_options: '["validate_only"]' });
    expect(ok.body).toEqual({ success: true });
    expect(meta.targetingOf(ADSET)).toEqual(SPEC);
    expect((await get(ADSET, { fields: "targeting,updated_time" })).body).toEqual(before.body);
    const bad = await postJson(ADSET, { targeting: { age_min: 30 }, execution_options: ["validate_only"] });
    expect(bad.body.error.error_subcode).toBe(META_SUBCODES.missingLocation);
    expect(meta.writes.map((w) => [w.validateOnly, w.ok])).toEqual([[true, true], [true, false]]);
    expect((await postJson(ADSET, { targeting: next, execution_options: ["dry_run"] })).body.error.code).toBe(100);
  });

  test("validation errors look like Meta's: missing location, unknown or retired interest, age", async () => {
    const noGeo = await postJson(ADSET, { targeting: { age_min: 20 } });
    expect(noGeo.status).toBe(400);
    expect(noGeo.body.error).toMatchObject({
      message: "Invalid parameter", type: "OAuthException", code: 100, error_subcode: META_SUBCODES.missingLocation, is_transient: false,
      error_user_title: "Missing Target Audience Location", error_user_msg: expect.any(String), error_data: { blame_field_specs: [["targeting"]] }, fbtrace_id: expect.any(String),
    });
    const unknown = await postJson(ADSET, { targeting: { ...next, flexible_spec: [{ interests: [{ id: "42", name: "Made up" }] }] } });
    expect(unknown.body.error).toMatchObject({ code: 100, error_subcode: META_SUBCODES.invalidInterest, error_user_title: expect.any(String) });
    meta.refuseInterest("6003151497811");
    const retired = await postJson(ADSET, { targeting: { ...next, flexible_spec: [{ interests: [{ id: "6003151497811" }] }] } });
    expect(retired.body.error.error_subcode).toBe(META_SUBCODES.invalidInterest);
    expect((await postJson(ADSET, { targeting: { ...next, age_min: 16 } })).body.error.error_subcode).toBe(META_SUBCODES.invalidAge);
    expect((await postJson(ADSET, { targeting: { ...next, age_min: 40, age_max: 30 } })).body.error.error_subcode).toBe(META_SUBCODES.invalidAge);
    expect((await postJson(ADSET, { targeting: { geo_locations: { countries: "US" } } })).body.error.message).toContain("must be an array");
    expect(meta.targetingOf(ADSET)).toEqual(SPEC);
  });

  test("budget and bid fields are accepted and recorded", async () => {
    expect((await postForm(ADSET, { daily_budget: "5000", bid_amount: "150" })).body).toEqual({ success: true });
    expect(meta.adSet(ADSET)).toMatchObject({ daily_budget: "5000", bid_amount: "150" });
    expect(meta.budgetWrites.map((b) => [b.field, b.value])).toEqual([["daily_budget", "5000"], ["bid_amount", "150"]]);
  });

  test("a write to an unknown ad set is Graph's unsupported post request", async () => {
    const r = await postJson("120299999999999999", { targeting: next });
    expect(r.body.error).toMatchObject({ code: 100, error_subcode: META_SUBCODES.unknownObject, message: expect.stringMatching(/^Unsupported post request/) });
  });
});

describe("delivery estimates", () => {
  test("the stored targeting, or a proposed spec, is estimated; narrower specs reach fewer people", async () => {
    const stored = await get(`${ADSET}/delivery_estimate`, { optimization_goal: "LINK_CLICKS" });
    expect(stored.body.data[0]).toEqual({ estimate_dau: expect.any(Number), estimate_mau_lower_bound: expect.any(Number), estimate_mau_upper_bound: expect.any(Number), estimate_ready: true });
    const wide = await get(`${ADSET}/delivery_estimate`, { targeting_spec: JSON.stringify({ geo_locations: { countries: ["US", "CA"] } }), optimization_goal: "LINK_CLICKS" });
    const narrow = await get(`${ADSET}/delivery_estimate`, { targeting_spec: JSON.stringify({ ...SPEC, flexible_spec: [{ interests: [{ id: "6003384248805" }] }] }), optimization_goal: "LINK_CLICKS" });
    const s = stored.body.data[0], w = wide.body.data[0], n = narrow.body.data[0];
    expect(s.estimate_mau_lower_bound).toBeLessThan(s.estimate_mau_upper_bound);
    expect(w.estimate_mau_upper_bound).toBeGreaterThan(s.estimate_mau_upper_bound);
    expect(n.estimate_mau_upper_bound).toBeLessThan(s.estimate_mau_upper_bound);
    const bad = await get(`${ADSET}/delivery_estimate`, { targeting_spec: JSON.stringify({ age_min: 20 }) });
    expect(bad.body.error.error_subcode).toBe(META_SUBCODES.missingLocation);
    expect((await get(`${ADSET}/delivery_estimate`, { optimization_goal: "FAME" })).body.error.code).toBe(100);
  });
});

describe("usage headers and throttling", () => {
  const buc = (h: Headers) => JSON.parse(h.get("x-business-use-case-usage")!);

  test("every answer carries the usage headers, keyed by the account's business", async () => {
    const first = await get(ADSET, { fields: "name" });
    for (const h of ["x-fb-trace-id", "x-business-use-case-usage", "x-ad-account-usage", "x-app-usage"]) expect(first.headers.get(h)).toBeTruthy();
    const usage = buc(first.headers)[BUSINESS][0];
    expect(usage).toMatchObject({ type: "ads_management", call_count: expect.any(Number), total_cputime: expect.any(Number), total_time: expect.any(Number), estimated_time_to_regain_access: 0 });
    for (let i = 0; i < 5; i++) await get(ADSET, { fields: "name" });
    const later = buc((await get(ADSET, { fields: "name" })).headers)[BUSINESS][0];
    expect(later.call_count).toBeGreaterThan(usage.call_count);
    expect((await get(ADSET, {}, "EAAnobody")).headers.get("x-business-use-case-usage")).toBeTruthy();
  });

  test.each([
    ["user_limit", 17, META_SUBCODES.userLimit],
    ["ad_account_limit", 613, META_SUBCODES.adAccountLimit],
    ["app_limit", 4, undefined],
    ["buc_limit", 80004, META_SUBCODES.userLimit],
  ] as const)("%s: the next n calls are a 400 with code %i and the time to regain access, then calls pass", async (kind, code, subcode) => {
    meta.failNext(kind, 2, { regainMinutes: 7 });
    for (let i = 0; i < 2; i++) {
      const r = await postJson(ADSET, { targeting: { geo_locations: { countries: ["GB"] } } });
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({ code, type: "OAuthException", fbtrace_id: expect.any(String) });
      expect(r.body.error.error_subcode).toBe(subcode);
      expect(buc(r.headers)[BUSINESS][0]).toMatchObject({ call_count: 100, estimated_time_to_regain_access: 7 });
    }
    expect(meta.targetingOf(ADSET)).toEqual(SPEC);
    const ok = await postJson(ADSET, { targeting: { geo_locations: { countries: ["GB"] } } });
    expect(ok.body).toEqual({ success: true });
    expect(buc(ok.headers)[BUSINESS][0].estimated_time_to_regain_access).toBe(0);
    expect(meta.targetingOf(ADSET)).toEqual({ geo_locations: { countries: ["GB"] } });
  });

  test("transient: a 500 with is_transient, then the call passes", async () => {
    meta.failNext("transient", 1);
    const r = await get(ADSET, { fields: "name" });
    expect(r.status).toBe(500);
    expect(r.body.error).toMatchObject({ message: "An unknown error occurred", type: "OAuthException", code: 1, is_transient: true });
    expect((await get(ADSET, { fields: "name" })).status).toBe(200);
  });

  test("requests are recorded with method, path, query and parsed body", async () => {
    await postForm(ADSET, { targeting: JSON.stringify(SPEC), execution_options: '["validate_only"]' });
    await get("search", { type: "adinterest", q: "yoga" });
    expect(meta.requests.map((r) => [r.method, r.path, r.status])).toEqual([["POST", `/v27.0/${ADSET}`, 200], ["GET", "/v27.0/search", 200]]);
    expect(meta.requests[0].body).toEqual({ targeting: JSON.stringify(SPEC), execution_options: '["validate_only"]' });
    expect(meta.requests[1].query).toEqual({ type: "adinterest", q: "yoga" });
    expect(meta.requests[1].headers.authorization).toBeUndefined();
  });
});
