import { OAuth2Client, ProviderError, type OAuthClientSettings, type OAuthManifest, ProviderHttp } from "@trendgate/connector-core";
import { pinterestAds, type TargetingChange, type TargetingItem } from "@trendgate/connector-ads";
import { startPinterestAdsServer, type PinterestAdsServer } from "../peers/pinterest-ads-server.ts";

// The vendor stand-ins listen on loopback; provider calls reach private addresses only where OUTBOUND_ALLOWLIST allows.
process.env.OUTBOUND_ALLOWLIST = "127.0.0.1";

// The Pinterest Ads connector's client against the local Pinterest API v5, every request and answer checked
// against Pinterest's published description (the stand-in's specViolations): campaigns and ad groups through
// bookmarks; interests read from each ad group's whole targeting_spec and named through the interest catalogue;
// keywords read per ad group; trend phrases resolved; the exact calls (one whole-spec ad group PATCH per ad group,
// keyword create and archive); the own checks standing in for the missing dry run (writing nothing); apply with
// per-item results and Pinterest's request ids; rollback to the prior spec; throttles, the Trial daily cap and token
// errors onto the framework's kinds; and the OAuth hooks (Basic client auth, continuous refresh).

const TOKEN = "pina_connector-test";
const ACCOUNT = "549755885175";
const DECOR = { id: "935249274030", name: "Home decor" };
const GARDEN = { id: "906810023155", name: "Gardening" };
const SMART = { id: "939314234592", name: "Smart home" };
const TRAVEL = { id: "913432961838", name: "Travel" };

let server: PinterestAdsServer;
beforeEach(async () => { server = await startPinterestAdsServer(); });
afterEach(async () => {
  expect(server.specViolations).toEqual([]); // every request the connector made, and every answer, as Pinterest describes them
  await server.close();
});

/** A spec with every kind of field a write must keep. */
const RICH = { LOCATION: ["US", "CA"], MINIMUM_AGE: "25", MAXIMUM_AGE: "54", GENDER: ["female", "unknown"], AUDIENCE_EXCLUDE: ["2542620905475"], LOCALE: ["en"], INTEREST: [DECOR.id] };
const BARE = { GEO: ["US-94107"], APPTYPE: ["iphone", "web"] };

function seed() {
  server.addAdAccount({ id: ACCOUNT, name: "Pins US" });
  server.addAdAccount({ id: "549755800000", name: "Someone else's" });
  server.addToken(TOKEN, { accounts: [ACCOUNT] });
  const c1 = server.addCampaign({ adAccountId: ACCOUNT, name: "Spring", id: "626736533501" });
  const c2 = server.addCampaign({ adAccountId: ACCOUNT, name: "Summer", id: "626736533502" });
  const rich = server.addAdGroup({ adAccountId: ACCOUNT, campaignId: c1.id, name: "Decor lovers", targetingSpec: RICH, id: "2680060704701" });
  const bare = server.addAdGroup({ adAccountId: ACCOUNT, campaignId: c2.id, name: "Bay Area", targetingSpec: BARE, id: "2680060704702" });
  server.addKeyword(rich.id, { value: "boho living room", matchType: "PHRASE" });
  server.addKeyword(rich.id, { value: "cheap furniture", matchType: "PHRASE_NEGATIVE" });
  const theirs = server.addCampaign({ adAccountId: "549755800000", name: "Theirs" });
  server.addAdGroup({ adAccountId: "549755800000", campaignId: theirs.id, name: "Theirs", targetingSpec: BARE, id: "2680060704799" });
  server.resetLog();
  return { c1, c2, rich, bare, client: pinterestAds.client({ baseUrl: server.url, accessToken: TOKEN }) };
}

const interest = (i: { id: string; name: string }): TargetingItem => ({ key: i.id, id: i.id, text: i.name });
const change = (id: string, entity: string, op: "add" | "remove", item: TargetingItem, field: "interests" | "keywords" = "interests"): TargetingChange =>
  ({ id, entity_id: entity, field, op, item, trend_id: "trd_1" });
/** Requests that may change something (audience sizing is a POST that only reads). */
const writes = () => server.requests.filter((r) => r.method !== "GET" && !r.path.endsWith("/audience_sizing"));
const sizings = () => server.requests.filter((r) => r.path.endsWith("/audience_sizing"));
const errorOf = (p: Promise<unknown>) => p.then(() => null, (e: ProviderError) => e);

test("lists campaigns then ad groups through Pinterest's bookmarks, only the connected account's", async () => {
  const { c1, c2, rich, bare, client } = seed();
  const seen = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await client.listEntities(ACCOUNT, { cursor, limit: 1 });
    seen.push(...page.data);
    cursor = page.next_cursor ?? undefined;
    pages++;
  } while (cursor && pages < 10);
  expect(seen.map((e) => [e.level, e.id, e.parent_id])).toEqual([
    ["campaign", c1.id, null], ["campaign", c2.id, null], ["ad_group", rich.id, c1.id], ["ad_group", bare.id, c2.id],
  ]);
  expect(seen.find((e) => e.id === rich.id)).toMatchObject({ name: "Decor lovers", status: "ACTIVE", targeting: ["interests", "keywords"] });
  expect(server.requests.filter((r) => r.query.bookmark).length).toBeGreaterThanOrEqual(2); // Pinterest's bookmarks passed back
  await expect(client.listEntities("549755800000", { limit: 10 })).rejects.toMatchObject({ kind: "not_found", detail: { status: 403, providerCode: "29" } });
  await expect(client.listEntities(ACCOUNT, { cursor: "garbage", limit: 10 })).rejects.toMatchObject({ kind: "bad_request" });
  await expect(client.listEntities("act_1", { limit: 10 })).rejects.toMatchObject({ kind: "bad_request" });
});

test("reads interests (named through the catalogue) with the whole spec, and an ad group's own positive keywords", async () => {
  const { rich, bare, client } = seed();
  const [r, b] = await client.readTargeting(ACCOUNT, [rich.id, bare.id], "interests");
  expect(r).toEqual({ entity_id: rich.id, field: "interests", items: [interest(DECOR)], spec: RICH });
  expect(b).toEqual({ entity_id: bare.id, field: "interests", items: [], spec: BARE });
  const [k, none] = await client.readTargeting(ACCOUNT, [rich.id, bare.id], "keywords");
  expect(k.items).toEqual([{ key: "boho living room|PHRASE", text: "boho living room", match_type: "PHRASE", resource: expect.stringMatching(/^\d+$/) }]); // the negative is not targeting
  expect(none.items).toEqual([]);
  expect(server.requests.filter((x) => x.path.endsWith("/keywords")).map((x) => x.query.ad_group_id)).toEqual([[rich.id], [bare.id]]);
  await expect(client.readTargeting(ACCOUNT, ["2680060704799"], "interests")).rejects.toMatchObject({ kind: "not_found" });
});

test("resolves trend phrases: interests by exact name, else the closest few; keywords as the phrase itself", async () => {
  const { client } = seed();
  server.addInterest({ id: "970000000001", name: "Smart home security" });
  const m = await client.resolveItems(ACCOUNT, "interests", ["home decor", "Smart home", "home", "quantum knitting", "  "]);
  expect(m.get("home decor")).toEqual([interest(DECOR)]);
  expect(m.get("Smart home")).toEqual([interest(SMART)]);
  expect(m.get("home")!.map((i) => i.text)).toEqual(["Home decor", "Smart home", "Smart home security"]);
  expect(m.get("quantum knitting")).toEqual([]);
  expect(m.get("  ")).toEqual([]);
  expect(server.requests.map((r) => [r.path, r.query.ad_account_id])).toEqual([["/v5/resources/targeting/INTEREST", [ACCOUNT]]]); // one catalogue read
  const kw = await client.resolveItems(ACCOUNT, "keywords", ["Japandi Bedroom!", "x".repeat(200)]);
  expect(kw.get("Japandi Bedroom!")).toEqual([{ key: "japandi bedroom|PHRASE", text: "japandi bedroom", match_type: "PHRASE" }]);
  expect(kw.get("x".repeat(200))![0].text).toHaveLength(120);
});

describe("preview, apply and rollback", () => {
  async function planned() {
    const s = seed();
    const prior = [...await s.client.readTargeting(ACCOUNT, [s.rich.id, s.bare.id], "interests"), ...await s.client.readTargeting(ACCOUNT, [s.rich.id], "keywords")];
    const changes = [
      change("c1", s.rich.id, "add", interest(GARDEN)), change("c2", s.rich.id, "add", interest(SMART)), change("c3", s.bare.id, "add", interest(TRAVEL)),
      change("k1", s.rich.id, "add", { key: "japandi bedroom|PHRASE", text: "japandi bedroom", match_type: "PHRASE" }, "keywords"),
    ];
    server.resetLog();
    return { ...s, prior, changes, calls: s.client.calls(ACCOUNT, changes, prior) };
  }

  test("the exact calls: one whole-spec PATCH per ad group and a keyword create, without credentials or budget fields", async () => {
    const { rich, bare, calls } = await planned();
    expect(calls).toEqual([
      { method: "PATCH", path: `ad_accounts/${ACCOUNT}/ad_groups`, headers: { "content-type": "application/json" }, body: [{ id: rich.id, targeting_spec: { ...RICH, INTEREST: [DECOR.id, GARDEN.id, SMART.id] } }], change_ids: ["c1", "c2"] },
      { method: "PATCH", path: `ad_accounts/${ACCOUNT}/ad_groups`, headers: { "content-type": "application/json" }, body: [{ id: bare.id, targeting_spec: { ...BARE, INTEREST: [TRAVEL.id] } }], change_ids: ["c3"] },
      { method: "POST", path: `ad_accounts/${ACCOUNT}/keywords`, headers: { "content-type": "application/json" }, body: { parent_id: rich.id, keywords: [{ value: "japandi bedroom", match_type: "PHRASE" }] }, change_ids: ["k1"] },
    ]);
    expect(JSON.stringify(calls)).not.toContain(TOKEN);
    expect(() => pinterestAds.client({ baseUrl: server.url, accessToken: TOKEN }).calls(ACCOUNT, [change("c1", rich.id, "add", interest(GARDEN))], [])).toThrow(/targeting_spec/);
  });

  test("the dry run is the connector's own checks and Pinterest's audience sizing: reads only, one verdict per change, refusals say why", async () => {
    const { rich, bare, client, calls, prior } = await planned();
    const ok = await client.run(ACCOUNT, calls, { dryRun: true });
    expect(ok.map((v) => [v.change_id, v.ok])).toEqual([["c1", true], ["c2", true], ["c3", true], ["k1", true]]);
    expect(writes()).toEqual([]);
    // Each ad group's new spec was sized (its request id on its changes); keywords are not part of a spec.
    expect(sizings().map((r) => r.body)).toEqual([
      { targeting_spec: { ...RICH, INTEREST: [DECOR.id, GARDEN.id, SMART.id] }, auto_targeting_enabled: false, placement_group: "ALL" },
      { targeting_spec: { ...BARE, INTEREST: [TRAVEL.id] }, auto_targeting_enabled: false, placement_group: "ALL" },
    ]);
    expect(ok.map((v) => v.request_id)).toEqual([sizings()[0].requestId, sizings()[0].requestId, sizings()[1].requestId, undefined]);
    expect(server.targetingOf(rich.id)).toEqual(RICH);
    expect(pinterestAds.capabilities).toMatchObject({ dryRun: false, sandbox: true, targeting: ["interests", "keywords"] });

    // What Pinterest documents and the reads show: a spec without LOCATION or GEO, a retired interest, an archived
    // ad group, a keyword over 120 characters.
    server.setTargeting(bare.id, { APPTYPE: ["web"] });
    server.refuseInterest(SMART.id);
    const noGeo = await client.readTargeting(ACCOUNT, [bare.id], "interests");
    const checks = client.calls(ACCOUNT, [
      change("c1", rich.id, "add", interest(GARDEN)), change("c2", rich.id, "add", interest(SMART)), change("c3", bare.id, "add", interest(TRAVEL)),
      change("k1", rich.id, "add", { key: "long|PHRASE", text: "y".repeat(121), match_type: "PHRASE" }, "keywords"),
      change("k2", rich.id, "add", { key: "ok|PHRASE", text: "ok", match_type: "PHRASE" }, "keywords"),
    ], [...prior.filter((p) => p.entity_id !== bare.id), ...noGeo]);
    const verdicts = await client.run(ACCOUNT, checks, { dryRun: true });
    const why = Object.fromEntries(verdicts.map((v) => [v.change_id, v.ok ? "ok" : v.error!.message]));
    expect(why).toEqual({
      c1: expect.stringMatching(/interest 939314234592 is not in Pinterest's interest catalogue/), c2: expect.stringMatching(/939314234592/),
      c3: expect.stringMatching(/at least one of LOCATION or GEO/), k1: expect.stringMatching(/1 to 120 characters/), k2: "ok",
    });
    expect(verdicts.find((v) => !v.ok)!.error).toMatchObject({ kind: "bad_request", detail: { providerCode: "own_check" } });
    const archived = server.addAdGroup({ adAccountId: ACCOUNT, campaignId: "626736533501", name: "Old", targetingSpec: { LOCATION: ["US"] }, status: "ARCHIVED" });
    const old = await client.readTargeting(ACCOUNT, [archived.id], "interests");
    const [a] = await client.run(ACCOUNT, client.calls(ACCOUNT, [change("a1", archived.id, "add", interest(GARDEN))], old), { dryRun: true });
    expect(a.error!.message).toMatch(/is archived/);

    // Pinterest's sizing refuses what the own checks do not know (a GEO value that is no region or postal code), and
    // finds nobody for an interest no one follows.
    server.addInterest({ id: "970000000009", name: "Obscure hobby", share: 0 });
    const odd = [{ entity_id: bare.id, field: "interests" as const, items: [], spec: { GEO: ["Bay Area"] } }];
    const [g] = await client.run(ACCOUNT, client.calls(ACCOUNT, [change("g1", bare.id, "add", interest(TRAVEL))], odd), { dryRun: true });
    expect(g.error).toMatchObject({ kind: "bad_request", detail: { providerCode: "400" }, message: expect.stringMatching(/audience sizing: .*refused: .*Invalid ad group audience sizing parameters/) });
    const [z] = await client.run(ACCOUNT, client.calls(ACCOUNT, [change("z1", bare.id, "add", { key: "970000000009", id: "970000000009", text: "Obscure hobby" })], prior), { dryRun: true });
    expect(z.error).toMatchObject({ detail: { providerCode: "audience_empty" }, message: expect.stringMatching(/would reach no one/) });
    expect(writes()).toEqual([]);
  });

  test("apply keeps every other field and reports per change with Pinterest's request id; rollback gives back the prior state", async () => {
    const { rich, bare, client, calls, changes } = await planned();
    const applied = await client.run(ACCOUNT, calls, { dryRun: false });
    expect(applied.map((v) => [v.change_id, v.ok])).toEqual([["c1", true], ["c2", true], ["c3", true], ["k1", true]]);
    const rids = writes().map((r) => r.requestId);
    expect(applied.map((v) => v.request_id)).toEqual([rids[0], rids[0], rids[1], rids[2]]);
    expect(applied[3].resource).toBe(server.keywordsOf(rich.id).find((k) => k.value === "japandi bedroom")!.id);
    expect(server.targetingOf(rich.id)).toEqual({ ...RICH, INTEREST: [DECOR.id, GARDEN.id, SMART.id] });
    expect(server.targetingOf(bare.id)).toEqual({ ...BARE, INTEREST: [TRAVEL.id] });
    expect(server.adGroup(rich.id)!.budget_in_micro_currency).toBe(20_000_000);
    expect(server.budgetWrites).toEqual([]);

    const now = [...await client.readTargeting(ACCOUNT, [rich.id, bare.id], "interests"), ...await client.readTargeting(ACCOUNT, [rich.id], "keywords")];
    expect(now[0].items.map((i) => i.text)).toEqual(["Home decor", "Gardening", "Smart home"]);
    const undo = changes.map((c) => ({ ...c, id: `undo-${c.id}`, op: "remove" as const, item: now.find((t) => t.entity_id === c.entity_id && t.field === c.field)!.items.find((i) => i.key === c.item.key)! }));
    const rollback = client.calls(ACCOUNT, undo, now);
    expect(rollback.at(-1)).toMatchObject({ method: "PATCH", path: `ad_accounts/${ACCOUNT}/keywords`, body: { keywords: [{ id: applied[3].resource, archived: true }] } });
    expect((await client.run(ACCOUNT, rollback, { dryRun: false })).every((r) => r.ok)).toBe(true);
    expect(server.targetingOf(rich.id)).toEqual(RICH);
    expect(server.targetingOf(bare.id)).toEqual(BARE); // the INTEREST list the apply created is gone again
    expect(server.keywordsOf(rich.id).map((k) => k.value)).toEqual(["boho living room", "cheap furniture"]); // the negative untouched
  });

  test("a refused ad group fails its own changes with Pinterest's exception; the rest is written", async () => {
    const { rich, bare, client, calls } = await planned();
    server.refuseAdGroup(rich.id);
    const applied = await client.run(ACCOUNT, calls, { dryRun: false });
    expect(applied.map((v) => [v.change_id, v.ok])).toEqual([["c1", false], ["c2", false], ["c3", true], ["k1", false]]);
    expect(applied[0].error).toMatchObject({ kind: "bad_request", detail: { providerCode: "2664" } });
    expect(applied[0].error!.message).toMatch(new RegExp(`ad group ${rich.id} not written: 2664: .*review`));
    expect(applied[3].error!.message).toMatch(/keyword "japandi bedroom" refused: .*review/);
    expect(applied[0].request_id).toBe(writes()[0].requestId);
    expect(server.targetingOf(rich.id)).toEqual(RICH);
    expect(server.targetingOf(bare.id)).toEqual({ ...BARE, INTEREST: [TRAVEL.id] });
    // An interest Pinterest retired after the preview: the exception names it, and the change says so.
    server.refuseInterest(GARDEN.id);
    const [late] = await client.run(ACCOUNT, client.calls(ACCOUNT, [change("g1", bare.id, "add", interest(GARDEN))], await client.readTargeting(ACCOUNT, [bare.id], "interests")), { dryRun: false });
    expect(late.error!.message).toMatch(new RegExp(`interest ${GARDEN.id} refused; ad group ${bare.id} not written: 2663: .*${GARDEN.id}`));
    expect(server.targetingOf(bare.id)).toEqual({ ...BARE, INTEREST: [TRAVEL.id] });
  });

  test("run refuses anything but the targeting writes it builds", async () => {
    const { client, calls } = await planned();
    const budget = [{ ...calls[0], body: [{ ...(calls[0].body as object[])[0], budget_in_micro_currency: 99_000_000 }] }];
    await expect(client.run(ACCOUNT, budget, { dryRun: false })).rejects.toMatchObject({ kind: "bad_request" });
    const bid = [{ ...calls[2], body: { parent_id: "2680060704701", keywords: [{ value: "x", match_type: "PHRASE", bid: 5 }] } }];
    await expect(client.run(ACCOUNT, bid, { dryRun: true })).rejects.toMatchObject({ kind: "bad_request" });
    await expect(client.run("549755800000", calls, { dryRun: false })).rejects.toMatchObject({ kind: "bad_request" });
    expect(server.requests).toEqual([]);
  });
});

test("throttles, the Trial daily cap, 500s and token errors map onto the framework's kinds", async () => {
  const { rich, bare, client } = seed();
  const prior = await client.readTargeting(ACCOUNT, [rich.id, bare.id], "interests");
  const calls = client.calls(ACCOUNT, [change("c1", rich.id, "add", interest(GARDEN)), change("c2", bare.id, "add", interest(GARDEN))], prior);
  const run = () => errorOf(client.run(ACCOUNT, calls, { dryRun: false }));

  server.failNext("rate_limit", 1, { resetS: 7, category: "ads_write" });
  let e = (await run())!;
  expect([e.kind, e.detail.retryAfterMs, e.detail.providerCode, e.detail.status]).toEqual(["rate_limited", 7000, "8", 429]);
  expect(e.message).toContain(`x-pinterest-rid ${server.requests.at(-1)!.requestId}`);
  server.failNext("trial_cap", 1);
  e = (await errorOf(client.listEntities(ACCOUNT, { limit: 5 })))!;
  expect(e.kind).toBe("quota_exhausted");
  expect(Math.abs(e.detail.resetAt!.getTime() - new Date().setUTCHours(24, 0, 0, 0))).toBeLessThan(5000);
  expect(e.retryable).toBe(true);
  expect(e.message).toMatch(/Trial access allows 1,000 requests a day/);
  server.failNext("transient", 1);
  expect((await run())!.kind).toBe("unavailable");
  expect(server.targetingOf(rich.id)).toEqual(RICH); // nothing applied by failed calls

  // A throttle after the first ad group was written: the run reports that write and fails the rest, retryable.
  server.resetLog();
  const realFetch = ProviderHttp.prototype.fetch;
  let armed = false;
  ProviderHttp.prototype.fetch = async function (this: ProviderHttp, ...args: Parameters<ProviderHttp["fetch"]>) {
    const res = await realFetch.apply(this, args);
    if (!armed && server.requests.filter((r) => r.method === "PATCH").length === 1) { armed = true; server.failNext("rate_limit", 1, { resetS: 3 }); }
    return res;
  };
  let partial;
  try { partial = await client.run(ACCOUNT, calls, { dryRun: false }); } finally { ProviderHttp.prototype.fetch = realFetch; }
  expect(partial.map((r) => [r.change_id, r.ok, r.error?.kind])).toEqual([["c1", true, undefined], ["c2", false, "rate_limited"]]);
  expect(partial[1].error!.detail.retryAfterMs).toBe(3000);
  expect(server.targetingOf(bare.id)).toEqual(BARE);

  server.expireToken(TOKEN);
  await expect(client.listEntities(ACCOUNT, { limit: 5 })).rejects.toMatchObject({ kind: "unauthorized", detail: { status: 401, providerCode: "2" } });
  server.addToken("pina_readonly", { scopes: ["ads:read"] });
  const readonly = pinterestAds.client({ baseUrl: `${server.url}/v5/`, accessToken: "pina_readonly" }); // a base with /v5 works too
  const ro = await readonly.run(ACCOUNT, calls, { dryRun: true });
  expect(ro.every((r) => r.ok)).toBe(true); // the own checks only read
  await expect(readonly.run(ACCOUNT, calls, { dryRun: false })).rejects.toMatchObject({ kind: "unauthorized", message: expect.stringMatching(/ads:write/) });
});

describe("OAuth", () => {
  const settings = (over: Partial<OAuthClientSettings> = {}): OAuthClientSettings => ({
    clientId: server.app.clientId, clientSecret: server.app.clientSecret, baseUrl: server.url,
    authorizationUrl: "https://www.pinterest.com/oauth/", tokenUrl: `${server.url}/v5/oauth/token`, ...over,
  });
  const manifest = pinterestAds.manifest as OAuthManifest;

  test("the consent URL asks for ads:read,ads:write comma-separated, without PKCE", async () => {
    const client = new OAuth2Client(manifest, settings());
    expect(client.newCodeVerifier()).toBeUndefined();
    const url = new URL(await client.authorizationUrl({ redirectUri: "https://app.example/cb", state: "st" }));
    expect(`${url.origin}${url.pathname}`).toBe("https://www.pinterest.com/oauth/");
    expect(Object.fromEntries(url.searchParams)).toEqual({ response_type: "code", client_id: server.app.clientId, redirect_uri: "https://app.example/cb", scope: "ads:read,ads:write", state: "st" });
  });

  test("the code is exchanged with Basic client auth asking for continuous refresh; refresh rotates the refresh token", async () => {
    seed();
    server.addCode("code-1", { redirectUri: "https://app.example/cb", accounts: [ACCOUNT] });
    const client = new OAuth2Client(manifest, settings());
    const before = Date.now();
    const tokens = await client.exchangeCode({ code: "code-1", redirectUri: "https://app.example/cb" });
    expect(server.tokenRequests).toEqual([{ grant_type: "authorization_code", continuous_refresh: "true", basic: true }]);
    expect(tokens).toMatchObject({ accessToken: expect.stringMatching(/^pina_/), refreshToken: expect.stringMatching(/^pinr_/), scopes: ["ads:read", "ads:write"], tokenType: "bearer" });
    const days = (tokens.expiresAt!.getTime() - before) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThan(30.1);
    const api = pinterestAds.client({ baseUrl: server.url, accessToken: tokens.accessToken });
    expect((await api.listEntities(ACCOUNT, { limit: 5 })).data.length).toBeGreaterThan(0);

    const next = await client.refresh(tokens.refreshToken!);
    expect(next.refreshToken).toMatch(/^pinr_/);
    expect(next.refreshToken).not.toBe(tokens.refreshToken);
    expect(server.tokenRequests.at(-1)).toEqual({ grant_type: "refresh_token", continuous_refresh: null, basic: true });
    // The used refresh token is gone: refreshing with it needs the user again; the new one works.
    await expect(client.refresh(tokens.refreshToken!)).rejects.toMatchObject({ kind: "unauthorized", detail: { status: 400 } });
    expect((await client.refresh(next.refreshToken!)).accessToken).toMatch(/^pina_/);

    // A used code is refused; a wrong secret names the variables to check; neither leaks a secret into the message.
    await expect(client.exchangeCode({ code: "code-1", redirectUri: "https://app.example/cb" })).rejects.toMatchObject({ kind: "bad_request" });
    server.addCode("code-2", { redirectUri: "https://app.example/cb" });
    const wrong = new OAuth2Client(manifest, settings({ clientSecret: "nope" }));
    const err = (await errorOf(wrong.exchangeCode({ code: "code-2", redirectUri: "https://app.example/cb" })))!;
    expect(err).toMatchObject({ kind: "bad_request", message: expect.stringContaining("PINTEREST_ADS_CLIENT_SECRET") });
    expect(err.message).not.toContain("code-2");
    expect(err.message).not.toContain(server.app.clientSecret);
  });
});
