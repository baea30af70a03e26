import { OAuth2Client, ProviderError, type OAuthClientSettings, type OAuthManifest, ProviderHttp } from "@trendgate/connector-core";
import { tiktokAds, type TargetingChange, type TargetingItem } from "@trendgate/connector-ads";
import { kindOf } from "../../packages/connectors/ads/src/tiktok/errors.ts";
import { startTikTokAdsServer, type TikTokAdsServer } from "../peers/tiktok-ads-server.ts";

// The vendor stand-ins listen on loopback; provider calls reach private addresses only where OUTBOUND_ALLOWLIST allows.
process.env.OUTBOUND_ALLOWLIST = "127.0.0.1";

// The TikTok Ads connector's client against the local TikTok API for Business: campaigns and ad groups
// through page numbers, interest categories and interest keywords read from each ad group (named through TikTok's
// lookups), trend phrases resolved through /tool/interest_keyword/recommend/ and the category tree, one
// read-merge-write /adgroup/update/ per ad group, the connector's own dry run (TikTok has none) refusing what TikTok
// would refuse without writing, `code != 0` with HTTP 200 as failure, 40100 and token errors onto the framework's
// kinds, and the OAuth hook's JSON auth_code exchange and revocation.

const TOKEN = "tt-connector-token";
const ADV = "7100000001";
const FOOD = { id: "30", name: "Food & Beverage" };
const CYCLING = { id: "1002", name: "Cycling" };
const COFFEE = { id: "710001", name: "coffee" };
const BEANS = { id: "710002", name: "coffee beans" };
const SHOES = { id: "710005", name: "running shoes" };
const TRAIL = { id: "710006", name: "trail running" };
const INEFFECTIVE = { id: "710004", name: "coffee grinder repair" };

let tt: TikTokAdsServer;
beforeEach(async () => { tt = await startTikTokAdsServer(); });
afterEach(() => tt.close());

function seed() {
  tt.addToken(TOKEN, { advertisers: [ADV] });
  const c1 = tt.addCampaign({ advertiserId: ADV, name: "Spring" });
  const c2 = tt.addCampaign({ advertiserId: ADV, name: "Summer" });
  const rich = tt.addAdGroup({ advertiserId: ADV, campaignId: c1.campaign_id, name: "Coffee lovers", interestCategoryIds: [FOOD.id], interestKeywordIds: [COFFEE.id], locationIds: ["6252001", "2635167"] });
  const bare = tt.addAdGroup({ advertiserId: ADV, campaignId: c2.campaign_id, name: "Everyone" });
  const other = tt.addCampaign({ advertiserId: "7100000009", name: "Theirs" });
  tt.addAdGroup({ advertiserId: "7100000009", campaignId: other.campaign_id, name: "Theirs" });
  return { c1, c2, rich, bare, client: tiktokAds.client({ baseUrl: tt.url, accessToken: TOKEN }) };
}

const cat = (i: { id: string; name: string }): TargetingItem => ({ key: `category:${i.id}`, id: i.id, text: i.name });
const kw = (i: { id: string; name: string }): TargetingItem => ({ key: `keyword:${i.id}`, id: i.id, text: i.name });
const change = (id: string, entity: string, op: "add" | "remove", item: TargetingItem): TargetingChange => ({ id, entity_id: entity, field: "interests", op, item, trend_id: "trd_1" });
const failure = (p: Promise<unknown>) => p.then(() => { throw new Error("expected a failure"); }, (e: ProviderError) => e);
const writeIds = () => tt.requests.filter((r) => r.path.endsWith("/adgroup/update/")).map((r) => r.requestId);

test("lists campaigns then ad groups through TikTok's page numbers, only the connected advertiser's", async () => {
  const { c1, c2, rich, bare, client } = seed();
  const seen = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await client.listEntities(ADV, { cursor, limit: 1 });
    seen.push(...page.data);
    cursor = page.next_cursor ?? undefined;
    pages++;
  } while (cursor && pages < 10);
  expect(seen.map((e) => [e.level, e.id, e.parent_id])).toEqual([
    ["campaign", c1.campaign_id, null], ["campaign", c2.campaign_id, null], ["ad_group", rich.adgroup_id, c1.campaign_id], ["ad_group", bare.adgroup_id, c2.campaign_id],
  ]);
  expect(seen.find((e) => e.id === rich.adgroup_id)).toMatchObject({ name: "Coffee lovers", status: "ENABLE", targeting: ["interests"] });
  expect(tt.requests.map((r) => r.query.page)).toEqual(["1", "2", "1", "2"]);
  // The token rode in Access-Token, never in a URL or an Authorization header.
  expect(tt.requests.every((r) => r.auth === "access-token" && !JSON.stringify(r.query).includes(TOKEN))).toBe(true);
  // Another advertiser: a permission refusal (40001), not a reason to mark the connection needs_reauth.
  await expect(client.listEntities("7100000009", { limit: 10 })).rejects.toMatchObject({ kind: "bad_request", detail: { providerCode: "40001" }, message: expect.stringContaining("authorize again") });
  await expect(client.listEntities(ADV, { cursor: "garbage", limit: 10 })).rejects.toMatchObject({ kind: "bad_request" });
});

test("reads each ad group's interest categories and keywords by name, keeping the lists as prior state", async () => {
  const { rich, bare, client } = seed();
  const [r, b] = await client.readTargeting(ADV, [rich.adgroup_id, bare.adgroup_id], "interests");
  expect(r.items).toEqual([cat(FOOD), kw(COFFEE)]);
  expect(r.spec).toEqual({ interest_category_ids: [FOOD.id], interest_keyword_ids: [COFFEE.id], purchase_intention_keyword_ids: [] });
  expect(b).toEqual({ entity_id: bare.adgroup_id, field: "interests", items: [], spec: { interest_category_ids: [], interest_keyword_ids: [], purchase_intention_keyword_ids: [] } });
  tt.deleteAdGroup(bare.adgroup_id);
  await expect(client.readTargeting(ADV, [rich.adgroup_id, bare.adgroup_id], "interests")).rejects.toMatchObject({ kind: "not_found", message: expect.stringContaining(bare.adgroup_id) });
  await expect(client.readTargeting(ADV, [rich.adgroup_id], "keywords")).rejects.toMatchObject({ kind: "bad_request" });
});

test("resolves trend phrases: an interest keyword of that name, else a category of that name, else TikTok's best effective few", async () => {
  const { client } = seed();
  const m = await client.resolveItems(ADV, "interests", ["Coffee", "cycling", "running", "run", "quantum knitting", "  "]);
  expect(m.get("Coffee")).toEqual([kw(COFFEE)]);
  expect(m.get("cycling")).toEqual([cat(CYCLING)]);
  expect(m.get("running")).toEqual([cat({ id: "1001", name: "Running" })]);
  // "running playlist" is OFFLINE: never proposed.
  expect(m.get("run")).toEqual([kw(SHOES), kw(TRAIL)]);
  expect(m.get("quantum knitting")).toEqual([]);
  expect(m.get("  ")).toEqual([]);
  expect(tt.requests.filter((r) => r.path.endsWith("/tool/interest_keyword/recommend/")).map((r) => r.query.keyword)).toEqual(["Coffee", "cycling", "running", "run", "quantum knitting"]);
});

describe("preview, apply and rollback", () => {
  async function planned() {
    const s = seed();
    const prior = await s.client.readTargeting(ADV, [s.rich.adgroup_id, s.bare.adgroup_id], "interests");
    const changes = [change("c1", s.rich.adgroup_id, "add", kw(BEANS)), change("c2", s.rich.adgroup_id, "add", cat(CYCLING)), change("c3", s.bare.adgroup_id, "add", kw(TRAIL))];
    return { ...s, prior, changes, calls: s.client.calls(ADV, changes, prior) };
  }

  test("one /adgroup/update/ per ad group carrying both interest lists whole, nothing else", async () => {
    const { rich, bare, calls } = await planned();
    expect(calls.map((c) => [c.method, c.path, c.change_ids])).toEqual([["POST", "adgroup/update/", ["c1", "c2"]], ["POST", "adgroup/update/", ["c3"]]]);
    expect(calls.map((c) => c.body)).toEqual([
      { advertiser_id: ADV, adgroup_id: rich.adgroup_id, interest_category_ids: [FOOD.id, CYCLING.id], interest_keyword_ids: [COFFEE.id, BEANS.id] },
      { advertiser_id: ADV, adgroup_id: bare.adgroup_id, interest_category_ids: [], interest_keyword_ids: [TRAIL.id] },
    ]);
    expect(JSON.stringify(calls)).not.toContain(TOKEN);
  });

  test("the dry run is the connector's own checks: reads only, one verdict per change with TikTok's request id", async () => {
    const { rich, bare, client, calls } = await planned();
    tt.resetLog();
    const verdicts = await client.run(ADV, calls, { dryRun: true });
    expect(verdicts.map((v) => [v.change_id, v.ok])).toEqual([["c1", true], ["c2", true], ["c3", true]]);
    expect(verdicts[0].request_id).toBe(tt.requests.find((r) => r.path.endsWith("/adgroup/get/"))!.requestId);
    expect(tt.writes).toEqual([]);
    expect(tt.requests.every((r) => r.method === "GET")).toBe(true);
    expect(tt.adGroup(rich.adgroup_id)!.interest_keyword_ids).toEqual([COFFEE.id]);
    expect(tt.adGroup(bare.adgroup_id)!.interest_keyword_ids).toEqual([]);
  });

  test("the dry run refuses what TikTok would: keyword conflict, ineffective keywords, unknown categories, a deleted ad group", async () => {
    const { rich, bare, client, prior } = await planned();
    tt.setTargeting(bare.adgroup_id, { purchase_intention_keyword_ids: ["880001"] });
    const calls = client.calls(ADV, [
      change("a", rich.adgroup_id, "add", kw(INEFFECTIVE)), change("b", rich.adgroup_id, "add", cat({ id: "999", name: "Gone" })), change("c", bare.adgroup_id, "add", kw(TRAIL)),
    ], prior);
    const v = await client.run(ADV, calls, { dryRun: true });
    expect(v.map((x) => [x.change_id, x.ok, x.error?.kind])).toEqual([["a", false, "bad_request"], ["b", false, "bad_request"], ["c", false, "bad_request"]]);
    expect(v[0].error!.message).toMatch(new RegExp(`interest keyword ${INEFFECTIVE.id} \\(${INEFFECTIVE.name}\\) is not effective`));
    expect(v[0].error!.message).toMatch(/interest category 999 is not one of TikTok's/);
    expect(v[2].error!.message).toMatch(/purchase-intention keywords/);
    // What the preview refused, TikTok refuses too (the checks are not stricter than the provider here).
    expect((await client.run(ADV, calls, { dryRun: false })).every((x) => !x.ok)).toBe(true);
    expect(tt.writes.map((w) => w.ok)).toEqual([false, false]);

    tt.deleteAdGroup(bare.adgroup_id);
    const gone = await client.run(ADV, client.calls(ADV, [change("d", bare.adgroup_id, "add", kw(BEANS))], prior), { dryRun: true });
    expect(gone.map((x) => [x.ok, x.error?.kind])).toEqual([[false, "not_found"]]);
  });

  test("apply writes the merged lists and keeps every other field; rollback gives back the prior lists", async () => {
    const { rich, bare, client, calls, changes, prior } = await planned();
    const applied = await client.run(ADV, calls, { dryRun: false });
    expect(applied.map((v) => [v.change_id, v.ok])).toEqual([["c1", true], ["c2", true], ["c3", true]]);
    const ids = writeIds();
    expect(applied.map((v) => v.request_id)).toEqual([ids[0], ids[0], ids[1]]);
    expect(tt.adGroup(rich.adgroup_id)).toMatchObject({ interest_category_ids: [FOOD.id, CYCLING.id], interest_keyword_ids: [COFFEE.id, BEANS.id], location_ids: ["6252001", "2635167"], budget: 50 });
    expect(tt.budgetWrites).toEqual([]);

    const now = await client.readTargeting(ADV, [rich.adgroup_id, bare.adgroup_id], "interests");
    expect(now[0].items.map((i) => i.text)).toEqual([FOOD.name, CYCLING.name, COFFEE.name, BEANS.name]);
    const undo = changes.map((c) => ({ ...c, id: `undo-${c.id}`, op: "remove" as const }));
    expect((await client.run(ADV, client.calls(ADV, undo, now), { dryRun: false })).every((r) => r.ok)).toBe(true);
    const back = await client.readTargeting(ADV, [rich.adgroup_id, bare.adgroup_id], "interests");
    expect(back.map((t) => t.spec)).toEqual(prior.map((t) => t.spec));
  });

  test("an ad group TikTok refuses (code != 0, HTTP 200) fails its changes with TikTok's words; the other is written", async () => {
    const { rich, bare, client, calls } = await planned();
    tt.refuseAdGroup(rich.adgroup_id);
    const applied = await client.run(ADV, calls, { dryRun: false });
    expect(applied.map((v) => [v.change_id, v.ok])).toEqual([["c1", false], ["c2", false], ["c3", true]]);
    expect(applied[0].error).toMatchObject({ kind: "bad_request", detail: { status: 200, providerCode: "40002" } });
    expect(applied[0].error!.message).toMatch(/under review/);
    expect(applied[0].request_id).toBe(writeIds()[0]);
    expect(tt.adGroup(rich.adgroup_id)!.interest_keyword_ids).toEqual([COFFEE.id]);
    expect(tt.adGroup(bare.adgroup_id)!.interest_keyword_ids).toEqual([TRAIL.id]);
  });

  test("calls need the lists read at preview, and run refuses anything but an interest write of this advertiser", async () => {
    const { rich, client, changes, calls, prior } = await planned();
    expect(() => client.calls(ADV, changes, [])).toThrow(/read at preview/);
    for (const bad of [{ ...calls[0], body: { ...(calls[0].body as object), budget: 999 } }, { ...calls[0], body: { ...(calls[0].body as object), advertiser_id: "7100000009" } }, { ...calls[0], path: "campaign/update/" }]) {
      await expect(client.run(ADV, [bad], { dryRun: false })).rejects.toMatchObject({ kind: "bad_request" });
    }
    expect(tt.writes).toEqual([]);
    // Adding what is there and removing what is not leave the lists as read.
    const same = client.calls(ADV, [change("x", rich.adgroup_id, "add", kw(COFFEE)), change("y", rich.adgroup_id, "remove", kw(BEANS))], prior);
    expect(same[0].body).toMatchObject({ interest_category_ids: [FOOD.id], interest_keyword_ids: [COFFEE.id] });
    // An executor gets the same write with the token's place named; TikTok has no validate-only variant.
    expect(client.executorRequest!(calls[0], { dryRun: false })).toEqual({ method: "POST", url: `${tt.url}/open_api/v1.3/adgroup/update/`, headers: { "content-type": "application/json" }, body: calls[0].body, credentials: "Access-Token: <access token>" });
    expect(() => client.executorRequest!(calls[0], { dryRun: true })).toThrow(/no validate-only/);
  });
});

test("40100, 50000 and token errors map onto the framework's kinds, all answered with HTTP 200", async () => {
  const { rich, bare, client } = seed();
  const prior = await client.readTargeting(ADV, [rich.adgroup_id, bare.adgroup_id], "interests");
  const calls = client.calls(ADV, [change("c1", rich.adgroup_id, "add", kw(BEANS)), change("c2", bare.adgroup_id, "add", kw(BEANS))], prior);

  tt.failNext("rate_limit", 1);
  let e = await failure(client.run(ADV, calls, { dryRun: false }));
  // TikTok says nothing of how long: no retryAfterMs, the caller's back-off decides.
  expect([e.kind, e.detail.status, e.detail.providerCode, e.detail.retryAfterMs]).toEqual(["rate_limited", 200, "40100", undefined]);
  expect(e.message).toContain(tt.requests.at(-1)!.requestId);
  tt.failNext("rate_limit", 1);
  expect((await failure(client.listEntities(ADV, { limit: 5 }))).kind).toBe("rate_limited");
  tt.failNext("system_error", 1);
  expect((await failure(client.run(ADV, calls, { dryRun: true }))).kind).toBe("unavailable");
  expect(tt.writes).toEqual([]);

  // A throttle after the first ad group was written: the run reports that write and fails the rest, retryable.
  const realFetch = ProviderHttp.prototype.fetch;
  let armed = false;
  ProviderHttp.prototype.fetch = async function (this: ProviderHttp, ...args: Parameters<ProviderHttp["fetch"]>) {
    const res = await realFetch.apply(this, args);
    if (!armed && tt.writes.length === 1) { armed = true; tt.failNext("rate_limit", 1); }
    return res;
  };
  let partial;
  try { partial = await client.run(ADV, calls, { dryRun: false }); } finally { ProviderHttp.prototype.fetch = realFetch; }
  expect(partial.map((r) => [r.change_id, r.ok, r.error?.kind, r.error?.retryable])).toEqual([["c1", true, undefined, undefined], ["c2", false, "rate_limited", true]]);
  expect(tt.adGroup(bare.adgroup_id)!.interest_keyword_ids).toEqual([]);

  const stranger = tiktokAds.client({ baseUrl: tt.url, accessToken: "not-a-token" });
  e = await failure(stranger.readTargeting(ADV, [rich.adgroup_id], "interests"));
  expect([e.kind, e.detail.providerCode]).toEqual(["unauthorized", "40105"]);
  expect(() => tiktokAds.client({ baseUrl: tt.url, accessToken: TOKEN, env: { TIKTOK_ADS_API_VERSION: "1.3" } })).toThrow(/v1\.3/);
  const wrongVersion = tiktokAds.client({ baseUrl: tt.url, accessToken: TOKEN, env: { TIKTOK_ADS_API_VERSION: "v1.2" } });
  expect((await failure(wrongVersion.listEntities(ADV, { limit: 1 }))).kind).toBe("bad_request");
});

test("each TikTok code has one kind: only token codes need re-authorization; unknown 4xxxx are refusals, 5xxxx (51021 too) are retried", () => {
  const k = (code: unknown, status = 200) => kindOf(status, { code, message: "m", request_id: "r", data: {} });
  expect([40102, 40104, 40105].map((c) => k(c))).toEqual(["unauthorized", "unauthorized", "unauthorized"]);
  expect(k(40100)).toBe("rate_limited");
  expect([40001, 40002, 40101, 40110, 40999].map((c) => k(c))).toEqual(["bad_request", "bad_request", "bad_request", "bad_request", "bad_request"]);
  expect([50000, 50002, 51021].map((c) => k(c))).toEqual(["unavailable", "unavailable", "unavailable"]);
  expect(k(0, 429)).toBe("rate_limited");
  expect(kindOf(502, "<html>")).toBe("unavailable");
  expect(kindOf(401, null)).toBe("unauthorized");
});

test("a Smart+ ad group is listed without editable targeting, and the preview's dry run reports it not editable; TikTok refuses the write", async () => {
  const { client } = seed();
  const smart = tt.addCampaign({ advertiserId: ADV, name: "Smart+ spring", smartPlus: true });
  const auto = tt.addAdGroup({ advertiserId: ADV, campaignId: smart.campaign_id, name: "Automated", interestCategoryIds: [FOOD.id] });
  const all = [];
  let cursor: string | undefined;
  do { const p = await client.listEntities(ADV, { cursor, limit: 50 }); all.push(...p.data); cursor = p.next_cursor ?? undefined; } while (cursor);
  expect(all.find((e) => e.id === auto.adgroup_id)).toMatchObject({ level: "ad_group", targeting: [] });
  expect(all.filter((e) => e.level === "ad_group" && e.id !== auto.adgroup_id).every((e) => e.targeting.length === 1)).toBe(true);

  const prior = await client.readTargeting(ADV, [auto.adgroup_id], "interests");
  const calls = client.calls(ADV, [change("s1", auto.adgroup_id, "add", cat(CYCLING))], prior);
  const verdicts = await client.run(ADV, calls, { dryRun: true });
  expect(verdicts.map((v) => [v.change_id, v.ok, v.error?.kind, v.error?.detail.providerCode])).toEqual([["s1", false, "bad_request", "not_editable"]]);
  expect(verdicts[0].error!.message).toMatch(/Smart\+ campaign.*not editable/);
  expect(tt.writes).toEqual([]);
  // Sent anyway, TikTok refuses it and nothing changes.
  const applied = await client.run(ADV, calls, { dryRun: false });
  expect(applied.map((v) => [v.ok, v.error?.detail.providerCode])).toEqual([[false, "40002"]]);
  expect(applied[0].error!.message).toContain("Smart+");
  expect(tt.adGroup(auto.adgroup_id)!.interest_category_ids).toEqual([FOOD.id]);
});

test("capabilities are truthful: no dry run, a sandbox, interests only", () => {
  expect(tiktokAds.capabilities).toEqual({ dryRun: false, audienceEstimate: false, sandbox: true, targeting: ["interests"], writes: "whole_spec" });
});

describe("OAuth", () => {
  const settings = (over: Partial<OAuthClientSettings> = {}): OAuthClientSettings => ({
    clientId: tt.app.appId, clientSecret: tt.app.secret, baseUrl: tt.url,
    authorizationUrl: "https://business-api.tiktok.com/portal/auth", tokenUrl: `${tt.url}/open_api/v1.3/oauth2/access_token/`,
    revocationUrl: `${tt.url}/open_api/v1.3/oauth2/revoke_token/`, ...over,
  });
  const manifest = tiktokAds.manifest as OAuthManifest;

  test("the consent URL has no scope and no PKCE; an app_id in the configured URL is kept", async () => {
    const client = new OAuth2Client(manifest, settings({ authorizationUrl: `https://business-api.tiktok.com/portal/auth?app_id=${tt.app.appId}` }));
    expect(client.newCodeVerifier()).toBeUndefined();
    const url = new URL(await client.authorizationUrl({ redirectUri: "https://app.example/cb", state: "st" }));
    expect([url.searchParams.get("app_id"), url.searchParams.get("state"), url.searchParams.get("redirect_uri")]).toEqual([tt.app.appId, "st", "https://app.example/cb"]);
    expect(url.searchParams.has("scope")).toBe(false);
    expect(url.searchParams.has("code_challenge")).toBe(false);
  });

  test("the auth_code is exchanged with a JSON body for a long-term token; revocation ends it", async () => {
    seed();
    tt.addAuthCode("ac-1", { advertisers: [ADV] });
    const client = new OAuth2Client(manifest, settings());
    const tokens = await client.exchangeCode({ code: "ac-1", redirectUri: "https://app.example/cb" });
    expect([tokens.expiresAt, tokens.refreshToken, tokens.account]).toEqual([undefined, undefined, { advertiser_ids: ADV }]);
    const exchange = tt.requests.find((r) => r.path.endsWith("/oauth2/access_token/"))!;
    expect([exchange.method, exchange.headers["content-type"], exchange.body]).toEqual(["POST", "application/json", { app_id: tt.app.appId }]);
    const api = tiktokAds.client({ baseUrl: tt.url, accessToken: tokens.accessToken });
    expect((await api.listEntities(ADV, { limit: 5 })).data.length).toBeGreaterThan(0);

    // A used code and a wrong secret are refused for good, the message naming what to fix, never the secret.
    await expect(client.exchangeCode({ code: "ac-1", redirectUri: "https://app.example/cb" })).rejects.toMatchObject({ kind: "bad_request", detail: { providerCode: "40110" } });
    tt.addAuthCode("ac-2", { advertisers: [ADV] });
    const wrong = new OAuth2Client(manifest, settings({ clientSecret: "nope" }));
    const e = await failure(wrong.exchangeCode({ code: "ac-2", redirectUri: "https://app.example/cb" }));
    expect([e.kind, e.detail.providerCode]).toEqual(["bad_request", "40101"]);
    expect(e.message).toContain("TIKTOK_ADS_CLIENT_SECRET");
    expect(tt.counts.exchanged).toBe(1);

    expect(await client.revoke(tokens)).toBe("revoked");
    expect(tt.isRevoked(tokens.accessToken)).toBe(true);
    await expect(api.listEntities(ADV, { limit: 5 })).rejects.toMatchObject({ kind: "unauthorized" });
  });
});
