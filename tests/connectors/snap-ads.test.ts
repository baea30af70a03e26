import { OAuth2Client, ProviderError, type OAuthClientSettings, type OAuthManifest, ProviderHttp } from "@trendgate/connector-core";
import { snapAds, type TargetingChange, type TargetingItem } from "@trendgate/connector-ads";
import { startSnapAdsServer, SNAP_CODES, type SnapAdsServer } from "../peers/snap-ads-server.ts";

// The vendor stand-ins listen on loopback; provider calls reach private addresses only where OUTBOUND_ALLOWLIST allows.
process.env.OUTBOUND_ALLOWLIST = "127.0.0.1";

// The Snap Ads connector's client against the local Snap Marketing API: campaigns then ad squads through
// Snap's pages (>= 50) cut to the caller's page size, interest targeting read from each ad squad's INCLUDE entries
// with names from the Lifestyle Category lookup, trend phrases resolved through that lookup, one PATCH of the ad
// squad's targeting per ad squad (read-merge-write of the targeting: geos, demographics and excluded interests go
// back as read; no other field, read-only ones included, is sent), the
// dry run as our own checks (Snap has none: nothing is sent), a refused ad squad failing its changes only with
// Snap's request id, rollback giving back the ad squad read before, the bare 429 and other failures onto the
// framework's kinds, and the standard OAuth code exchange and refresh of Snap's short-lived tokens.

const TOKEN = "snap-test-token";
const MUSIC = { id: "SLC_23", name: "Music Fans" };
const GAMERS = { id: "SLC_37", name: "Gamers" };
const TECH = { id: "SLC_45", name: "Tech & Gadget Enthusiasts" };
const FOODIES = { id: "SLC_11", name: "Foodies" };

let server: SnapAdsServer;
beforeEach(async () => { server = await startSnapAdsServer(); });
afterEach(() => server.close());

/** Targeting with everything a write must keep: geos, demographics, devices, segments, an excluded interest. */
const RICH = {
  geos: [{ country_code: "us" }, { country_code: "ca" }], demographics: [{ min_age: 18, max_age: 34, languages: ["en"] }],
  devices: [{ os_type: "iOS" }], segments: [{ segment_id: ["5678"], operation: "INCLUDE" }],
  interests: [{ category_id: [MUSIC.id] }, { category_id: ["SLC_36"], operation: "EXCLUDE" }],
};
const BARE = { geos: [{ country_code: "gb" }] };

function seed() {
  const account = server.addAdAccount({ name: "Shoes US" });
  const other = server.addAdAccount({ name: "Someone else's" });
  server.addToken(TOKEN, { accounts: [account.id] });
  const c1 = server.addCampaign({ adAccountId: account.id, name: "Spring" });
  const c2 = server.addCampaign({ adAccountId: account.id, name: "Summer" });
  const rich = server.addAdSquad({ campaignId: c1.id, name: "Music fans", targeting: RICH, extra: { daily_budget_micro: 75_000_000, bid_micro: 1_500_000 } });
  const bare = server.addAdSquad({ campaignId: c2.id, name: "Everyone UK", targeting: BARE });
  const theirs = server.addAdSquad({ campaignId: server.addCampaign({ adAccountId: other.id, name: "Theirs" }).id, name: "Theirs", targeting: BARE });
  return { account: account.id, other: other.id, c1, c2, rich, bare, theirs, client: snapAds.client({ baseUrl: server.url, accessToken: TOKEN }) };
}

const item = (i: { id: string; name: string }): TargetingItem => ({ key: i.id, id: i.id, text: i.name });
const change = (id: string, entity: string, op: "add" | "remove", i: { id: string; name: string }): TargetingChange =>
  ({ id, entity_id: entity, field: "interests", op, item: item(i), trend_id: "trd_1" });
const failure = (p: Promise<unknown>) => p.then(() => null, (e: ProviderError) => e);
const puts = () => server.requests.filter((r) => r.method === "PUT" || r.method === "PATCH");
/** An ad squad as stored, without what Snap itself rewrites on a write. */
const stored = (id: string) => { const { updated_at: _u, ...rest } = server.adSquad(id)!; return rest; };

test("lists campaigns then ad squads, Snap's 50+ pages cut to the page size asked for, the account's only", async () => {
  const { account, other, c1, c2, rich, bare, client } = seed();
  const more = Array.from({ length: 52 }, (_, i) => server.addAdSquad({ campaignId: c2.id, name: `Squad ${i}`, targeting: BARE }).id);
  const seen = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await client.listEntities(account, { cursor, limit: 20 });
    expect(page.data.length).toBeLessThanOrEqual(20);
    seen.push(...page.data);
    cursor = page.next_cursor ?? undefined;
    pages++;
  } while (cursor && pages < 20);
  expect(seen.slice(0, 2).map((e) => [e.level, e.id, e.parent_id, e.targeting])).toEqual([["campaign", c1.id, null, []], ["campaign", c2.id, null, []]]);
  expect(seen.slice(2).map((e) => e.id)).toEqual([rich.id, bare.id, ...more]);
  expect(seen.find((e) => e.id === rich.id)).toMatchObject({ name: "Music fans", level: "ad_set", parent_id: c1.id, status: "ACTIVE", targeting: ["interests"] });
  // Snap's page size stays within 50..1000 and its cursor was passed back (to our base URL, token in the header).
  const reads = server.requests.filter((r) => r.path.endsWith("/adsquads"));
  expect(reads.every((r) => Number(r.query.limit) >= 50)).toBe(true);
  expect(reads.some((r) => r.query.cursor)).toBe(true);
  expect(server.requests.every((r) => r.status === 200)).toBe(true);
  await expect(client.listEntities(other, { limit: 10 })).rejects.toMatchObject({ kind: "not_found", detail: { status: 403 } });
  await expect(client.listEntities(account, { cursor: "garbage", limit: 10 })).rejects.toMatchObject({ kind: "bad_request" });
});

test("reads the included interests with their names and keeps the whole ad squad as prior state", async () => {
  const { account, rich, bare, theirs, client } = seed();
  const [r, b] = await client.readTargeting(account, [rich.id, bare.id], "interests");
  expect(r.items).toEqual([item(MUSIC)]); // SLC_36 is excluded: not the plan's to change
  expect(r.spec).toEqual(server.adSquad(rich.id));
  expect(b).toEqual({ entity_id: bare.id, field: "interests", items: [], spec: server.adSquad(bare.id) });
  await expect(client.readTargeting(account, [theirs.id], "interests")).rejects.toMatchObject({ kind: "not_found", message: expect.stringContaining(theirs.id) });
  await expect(client.readTargeting(account, [rich.id], "keywords")).rejects.toMatchObject({ kind: "bad_request" });
});

test("resolves trend phrases through the Lifestyle Category lookup: the exact name alone, else those containing it", async () => {
  const { account, client } = seed();
  server.addInterest({ id: "SLC_901", name: "Retro Gamers" });
  const m = await client.resolveItems(account, "interests", ["gamers", "fans", "quantum knitting", "  "]);
  expect(m.get("gamers")).toEqual([item(GAMERS)]);
  expect(m.get("fans")!.map((i) => i.text)).toEqual(["Film & TV Fans", "Music Fans", "Comedy Fans"]);
  expect(m.get("quantum knitting")).toEqual([]);
  expect(m.get("  ")).toEqual([]);
  expect(server.requests.map((r) => r.path)).toEqual(["/v1/targeting/interests/scls"]); // one lookup for all phrases
});

describe("preview, apply and rollback", () => {
  async function planned() {
    const s = seed();
    const prior = await s.client.readTargeting(s.account, [s.rich.id, s.bare.id], "interests");
    const changes = [change("c1", s.rich.id, "add", GAMERS), change("c2", s.rich.id, "add", TECH), change("c3", s.bare.id, "add", FOODIES)];
    server.resetLog();
    return { ...s, prior, changes, calls: s.client.calls(s.account, changes, prior) };
  }

  test("one PATCH per ad squad, to its campaign, carrying only its id and targeting (no read-only field), without credentials", async () => {
    const { rich, c1, c2, calls } = await planned();
    expect(calls.map((c) => [c.method, c.path, c.change_ids])).toEqual([["PATCH", `campaigns/${c1.id}/adsquads`, ["c1", "c2"]], ["PATCH", `campaigns/${c2.id}/adsquads`, ["c3"]]]);
    expect(JSON.stringify(calls)).not.toContain(TOKEN);
    const sent = (calls[0].body as { adsquads: Record<string, any>[] }).adsquads;
    expect(sent).toHaveLength(1);
    expect(Object.keys(sent[0]).sort()).toEqual(["id", "targeting"]);
    expect(sent[0].id).toBe(rich.id);
    // Everything of the targeting but the interests is as read; the additions join the first INCLUDE entry.
    expect({ ...sent[0].targeting, interests: undefined }).toEqual({ ...RICH, interests: undefined });
    expect(sent[0].targeting.interests).toEqual([{ category_id: [MUSIC.id, GAMERS.id, TECH.id] }, { category_id: ["SLC_36"], operation: "EXCLUDE" }]);
    expect((calls[1].body as { adsquads: Record<string, any>[] }).adsquads[0].targeting).toEqual({ ...BARE, interests: [{ category_id: [FOODIES.id] }] });
  });

  test("the dry run is our own checks: nothing is sent, a verdict per change, refusals with their reasons", async () => {
    const { account, rich, bare, client, calls, changes } = await planned();
    const ok = await client.run(account, calls, { dryRun: true });
    expect(ok.map((v) => [v.change_id, v.ok])).toEqual([["c1", true], ["c2", true], ["c3", true]]);
    expect(puts()).toEqual([]);
    expect(server.requests.filter((r) => r.method !== "GET")).toEqual([]); // (the lookup was read with the targeting)

    // Two countries without a single language, and an interest Snap retired since: refused before anything is sent.
    server.setTargeting(bare.id, { geos: [{ country_code: "gb" }, { country_code: "ie" }] });
    server.retireInterest(TECH.id);
    const client2 = snapAds.client({ baseUrl: server.url, accessToken: TOKEN });
    const now = await client2.readTargeting(account, [rich.id, bare.id], "interests");
    const verdicts = await client2.run(account, client2.calls(account, changes, now), { dryRun: true });
    expect(verdicts.map((v) => [v.change_id, v.ok])).toEqual([["c1", false], ["c2", false], ["c3", false]]);
    expect(verdicts[0].error).toMatchObject({ kind: "bad_request", detail: { providerCode: "own_check" } });
    expect(verdicts[0].error!.message).toMatch(/Snap has no dry run.*SLC_45 is not in Snap's Lifestyle Categories/);
    expect(verdicts[2].error!.message).toMatch(/single languages entry/);
    expect(puts()).toEqual([]);
  });

  test("apply writes the interests and keeps every other field; rollback gives back the ad squads read before", async () => {
    const { account, rich, bare, client, calls, changes } = await planned();
    const before = [stored(rich.id), stored(bare.id)];
    const applied = await client.run(account, calls, { dryRun: false });
    expect(applied.map((v) => [v.change_id, v.ok])).toEqual([["c1", true], ["c2", true], ["c3", true]]);
    // request_id is Snap's request_id of the PATCH that carried the change.
    const ids = puts().map((r) => r.requestId);
    expect(applied.map((v) => v.request_id)).toEqual([ids[0], ids[0], ids[1]]);
    expect(server.adSquad(rich.id)!.targeting).toEqual({ ...RICH, interests: [{ category_id: [MUSIC.id, GAMERS.id, TECH.id] }, { category_id: ["SLC_36"], operation: "EXCLUDE" }] });
    expect(server.adSquad(rich.id)).toMatchObject({ daily_budget_micro: 75_000_000, bid_micro: 1_500_000, pacing_type: "STANDARD", name: "Music fans" });
    expect(server.adSquad(bare.id)!.targeting).toEqual({ ...BARE, interests: [{ category_id: [FOODIES.id] }] });

    const now = await client.readTargeting(account, [rich.id, bare.id], "interests");
    expect(now[0].items.map((i) => i.text)).toEqual(["Music Fans", "Gamers", "Tech & Gadget Enthusiasts"]);
    const undo = changes.map((c) => ({ ...c, id: `undo-${c.id}`, op: "remove" as const }));
    const rolled = await client.run(account, client.calls(account, undo, now), { dryRun: false });
    expect(rolled.every((r) => r.ok)).toBe(true);
    expect([stored(rich.id), stored(bare.id)]).toEqual(before); // the interests entry the apply made is gone again
  });

  test("an ad squad Snap refuses fails its own changes with Snap's reason and request id; the other is written", async () => {
    const { account, rich, bare, client, calls } = await planned();
    server.refuseAdSquad(rich.id);
    const before = stored(rich.id);
    const applied = await client.run(account, calls, { dryRun: false });
    expect(applied.map((v) => [v.change_id, v.ok])).toEqual([["c1", false], ["c2", false], ["c3", true]]);
    expect(applied[0].error).toMatchObject({ kind: "bad_request", detail: { providerCode: SNAP_CODES.inReview } });
    expect(applied[0].error!.message).toContain(`ad squad ${rich.id} not written: ${SNAP_CODES.inReview}: Ad Squad cannot be updated while its ads are in review`);
    expect(applied[0].request_id).toBe(puts()[0].requestId);
    expect(stored(rich.id)).toEqual(before);
    expect(server.adSquad(bare.id)!.targeting.interests).toEqual([{ category_id: [FOODIES.id] }]);
  });

  test("calls need the ad squad as read; run refuses anything but a PATCH of one ad squad's targeting to its campaign", async () => {
    const { account, rich, c2, client, changes, prior, calls } = await planned();
    expect(() => client.calls(account, changes, [])).toThrow(/as read is needed/);
    const two = [{ ...calls[0], body: { adsquads: [...(calls[0].body as { adsquads: unknown[] }).adsquads, ...(calls[1].body as { adsquads: unknown[] }).adsquads] } }];
    await expect(client.run(account, two, { dryRun: false })).rejects.toMatchObject({ kind: "bad_request" });
    await expect(client.run(account, [{ ...calls[0], method: "POST" }], { dryRun: true })).rejects.toMatchObject({ kind: "bad_request" });
    const budget = [{ ...calls[0], body: { adsquads: [{ ...(calls[0].body as { adsquads: object[] }).adsquads[0], daily_budget_micro: 1 }] } }];
    await expect(client.run(account, budget, { dryRun: false })).rejects.toMatchObject({ kind: "bad_request", message: expect.stringContaining("targeting") });
    expect(puts()).toEqual([]);
    // A call moved to another campaign: Snap does not find the ad squad there, and its changes fail.
    const moved = await client.run(account, [{ ...calls[0], path: `campaigns/${c2.id}/adsquads` }], { dryRun: false });
    expect(moved.map((r) => [r.change_id, r.ok, r.error?.detail.providerCode])).toEqual([["c1", false, SNAP_CODES.notFound], ["c2", false, SNAP_CODES.notFound]]);
    expect(server.adSquad(rich.id)!.targeting).toEqual(RICH);
    // Adding what is there and removing what is not change nothing: the targeting goes back exactly as read.
    const same = client.calls(account, [change("x", rich.id, "add", MUSIC), change("y", rich.id, "remove", FOODIES)], prior);
    expect((same[0].body as { adsquads: unknown[] }).adsquads[0]).toEqual({ id: rich.id, targeting: (prior[0].spec as { targeting: unknown }).targeting });
  });

  test("Snap refuses the whole ad squad sent back as read (read-only fields); a plan stored as such a PUT is sent as a PATCH", async () => {
    const { account, rich, c1, client, prior, calls } = await planned();
    // What a whole-object write of the ad squad as read looks like: Snap refuses its read-only fields (E2023).
    const whole = { ...(prior[0].spec as Record<string, unknown>), targeting: (calls[0].body as { adsquads: { targeting: unknown }[] }).adsquads[0].targeting };
    const raw = await fetch(`${server.url}/v1/campaigns/${c1.id}/adsquads`, { method: "PUT", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body: JSON.stringify({ adsquads: [whole] }) });
    expect((await raw.json() as any).adsquads[0].sub_request_error_reason).toMatch(new RegExp(`^${SNAP_CODES.immutable}: .*read-only`));
    server.resetLog();
    const stored = [{ ...calls[0], method: "PUT" as const, body: { adsquads: [whole] } }];
    expect((await client.run(account, stored, { dryRun: false })).map((r) => r.ok)).toEqual([true, true]);
    expect(puts().map((r) => [r.method, Object.keys(r.body.adsquads[0]).sort()])).toEqual([["PATCH", ["id", "targeting"]]]);
    expect(server.adSquad(rich.id)!.targeting.interests[0].category_id).toEqual([MUSIC.id, GAMERS.id, TECH.id]);
  });
});

test("a bare 429, outages and token errors map onto the framework's kinds", async () => {
  const { account, rich, bare, client } = seed();
  const prior = await client.readTargeting(account, [rich.id, bare.id], "interests");
  const calls = client.calls(account, [change("c1", rich.id, "add", GAMERS), change("c2", bare.id, "add", GAMERS)], prior);
  const run = () => failure(client.run(account, calls, { dryRun: false }));

  server.failNext("throttle");
  let e = (await run())!;
  // Snap says nothing about how long: no retryAfterMs, the caller's back-off schedule decides.
  expect([e.kind, e.detail.retryAfterMs, e.detail.status, e.retryable]).toEqual(["rate_limited", undefined, 429, true]);
  expect(e.message).toContain(server.requests.at(-1)!.requestId);
  server.failNext("unavailable");
  e = (await run())!;
  expect([e.kind, e.detail.status]).toEqual(["unavailable", 503]);
  expect(server.writes).toEqual([]);

  // A throttle after the first ad squad was written: the run reports that write and fails the rest, retryable.
  server.resetLog();
  const realFetch = ProviderHttp.prototype.fetch;
  let armed = false;
  ProviderHttp.prototype.fetch = async function (this: ProviderHttp, ...args: Parameters<ProviderHttp["fetch"]>) {
    const res = await realFetch.apply(this, args);
    if (!armed && server.writes.length === 1) { armed = true; server.failNext("throttle"); }
    return res;
  };
  let partial;
  try { partial = await client.run(account, calls, { dryRun: false }); } finally { ProviderHttp.prototype.fetch = realFetch; }
  expect(partial.map((r) => [r.change_id, r.ok, r.error?.kind])).toEqual([["c1", true, undefined], ["c2", false, "rate_limited"]]);
  expect(server.adSquad(bare.id)!.targeting).toEqual(BARE);

  server.expireToken(TOKEN);
  await expect(client.listEntities(account, { limit: 10 })).rejects.toMatchObject({ kind: "unauthorized", detail: { status: 401, providerCode: SNAP_CODES.unauthorized } });
  const stranger = snapAds.client({ baseUrl: server.url, accessToken: "unknown" });
  await expect(stranger.readTargeting(account, [rich.id], "interests")).rejects.toMatchObject({ kind: "unauthorized" });
  const nowhere = snapAds.client({ baseUrl: "http://127.0.0.1:9", accessToken: TOKEN });
  await expect(nowhere.listEntities(account, { limit: 1 })).rejects.toMatchObject({ kind: "unavailable" });
  expect(JSON.stringify(server.requests)).not.toContain(TOKEN);
});

test("capabilities are truthful: no dry run, no sandbox, interests written as the whole targeting", () => {
  expect(snapAds.capabilities).toEqual({ dryRun: false, audienceEstimate: false, sandbox: false, targeting: ["interests"], writes: "whole_spec" });
});

describe("OAuth", () => {
  const settings = (): OAuthClientSettings => ({
    clientId: server.app.clientId, clientSecret: server.app.clientSecret, baseUrl: server.url,
    authorizationUrl: "https://accounts.snapchat.com/login/oauth2/authorize", tokenUrl: `${server.url}/login/oauth2/access_token`,
  });
  const manifest = snapAds.manifest as OAuthManifest;

  test("the consent URL asks for snapchat-marketing-api, without PKCE", async () => {
    const client = new OAuth2Client(manifest, settings());
    expect(client.newCodeVerifier()).toBeUndefined();
    const url = new URL(await client.authorizationUrl({ redirectUri: "https://app.example/cb", state: "st" }));
    expect(url.searchParams.get("scope")).toBe("snapchat-marketing-api");
    expect(url.searchParams.get("response_type")).toBe("code");
    expect(url.searchParams.has("code_challenge")).toBe(false);
  });

  test("a code gives a ~30 minute token and a refresh token; refreshing keeps the connection working", async () => {
    const { account } = seed();
    server.addCode("code-1", { redirectUri: "https://app.example/cb", accounts: [account] });
    const client = new OAuth2Client(manifest, settings());
    const t0 = Date.now();
    const tokens = await client.exchangeCode({ code: "code-1", redirectUri: "https://app.example/cb" });
    expect(tokens.refreshToken).toEqual(expect.any(String));
    const minutes = (tokens.expiresAt!.getTime() - t0) / 60_000;
    expect(minutes).toBeGreaterThan(29.9);
    expect(minutes).toBeLessThan(30.1);
    expect(tokens.scopes).toEqual(["snapchat-marketing-api"]);

    // The access token lapses: the framework's refresh gets a new one; Snap's refresh token is kept.
    server.expireToken(tokens.accessToken);
    const stale = snapAds.client({ baseUrl: server.url, accessToken: tokens.accessToken });
    await expect(stale.listEntities(account, { limit: 5 })).rejects.toMatchObject({ kind: "unauthorized" });
    const next = await client.refresh(tokens.refreshToken!);
    expect([next.refreshToken, next.accessToken === tokens.accessToken]).toEqual([tokens.refreshToken, false]);
    const fresh = snapAds.client({ baseUrl: server.url, accessToken: next.accessToken });
    expect((await fresh.listEntities(account, { limit: 5 })).data.length).toBeGreaterThan(0);
    expect(server.counts).toMatchObject({ authorization_code: 1, refresh_token: 1 });
    const form = server.requests.filter((r) => r.path === "/login/oauth2/access_token");
    expect(form.map((r) => [r.method, r.body.grant_type, r.body.client_id])).toEqual([["POST", "authorization_code", server.app.clientId], ["POST", "refresh_token", server.app.clientId]]);

    // A refresh token Snap no longer knows, or a wrong secret: the connection needs the user again.
    await expect(client.refresh("revoked")).rejects.toMatchObject({ kind: "unauthorized" });
    const wrong = new OAuth2Client(manifest, { ...settings(), clientSecret: "nope" });
    await expect(wrong.refresh(tokens.refreshToken!)).rejects.toMatchObject({ kind: "unauthorized" });
    await expect(client.exchangeCode({ code: "code-1", redirectUri: "https://app.example/cb" })).rejects.toMatchObject({ kind: "unauthorized" });
  });
});
