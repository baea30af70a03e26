import { OAuth2Client, ProviderError, type OAuthClientSettings, type OAuthManifest, ProviderHttp } from "@trendgate/connector-core";
import { metaAds, type EntityTargeting, type TargetingChange, type TargetingItem } from "@trendgate/connector-ads";
import { startMetaAdsServer, type MetaAdsServer } from "../peers/meta-ads-server.ts";

// The vendor stand-ins listen on loopback; provider calls reach private addresses only where OUTBOUND_ALLOWLIST allows.
process.env.OUTBOUND_ALLOWLIST = "127.0.0.1";

// The Meta Ads connector's client against the local Graph / Marketing API: campaigns and ad sets through
// Graph cursors, interest targeting read from each ad set's whole spec, interests resolved through the targeting
// search, one read-merge-write POST per ad set (validate_only for the dry run, changing nothing), a refused interest
// failing its ad set's changes only, rollback giving back the spec read before, throttles, transient failures and
// token errors onto the framework's kinds, and the OAuth hook's GET exchange plus long-lived token swap.

const TOKEN = "EAAtest-meta-token";
const ACCOUNT = "1234567890";
const RUNNING = { id: "6003107902433", name: "Running" };
const COFFEE = { id: "6003626773307", name: "Coffee" };
const YOGA = { id: "6003306084421", name: "Yoga" };
const TRAIL = { id: "6003384248805", name: "Trail running" };

let server: MetaAdsServer;
beforeEach(async () => { server = await startMetaAdsServer(); });
afterEach(() => server.close());

/** A spec with every kind of field a write must keep: geo, ages, custom audiences and exclusions, a second group. */
const RICH_SPEC = {
  geo_locations: { countries: ["US", "CA"] }, age_min: 25, age_max: 45,
  custom_audiences: [{ id: "23851000000000001" }], excluded_custom_audiences: [{ id: "23851000000000002" }],
  flexible_spec: [{ interests: [RUNNING] }, { interests: [YOGA] }],
};
const BARE_SPEC = { geo_locations: { countries: ["GB"] }, age_min: 18, age_max: 65 };

function seed() {
  server.addAdAccount({ id: `act_${ACCOUNT}`, name: "Shoes US" });
  server.addAdAccount({ id: "555", name: "Someone else's" });
  server.addToken(TOKEN, { accounts: [ACCOUNT] });
  const c1 = server.addCampaign({ accountId: ACCOUNT, name: "Spring" });
  const c2 = server.addCampaign({ accountId: ACCOUNT, name: "Summer" });
  const rich = server.addAdSet("120200000000000001", { accountId: ACCOUNT, campaignId: c1.id, name: "Runners", targeting: RICH_SPEC });
  const bare = server.addAdSet("120200000000000002", { accountId: ACCOUNT, campaignId: c2.id, name: "Everyone UK", targeting: BARE_SPEC });
  const other = server.addCampaign({ accountId: "555", name: "Theirs" });
  server.addAdSet("120200000000000099", { accountId: "555", campaignId: other.id, name: "Theirs", targeting: BARE_SPEC });
  return { c1, c2, rich, bare, client: metaAds.client({ baseUrl: server.url, accessToken: TOKEN }) };
}

const item = (i: { id: string; name: string }): TargetingItem => ({ key: i.id, id: i.id, text: i.name });
const change = (id: string, entity: string, op: "add" | "remove", i: { id: string; name: string }): TargetingChange =>
  ({ id, entity_id: entity, field: "interests", op, item: item(i), trend_id: "trd_1" });
const kindOf = (p: Promise<unknown>) => p.then(() => "ok", (e: ProviderError) => e);

test("lists campaigns then ad sets through Graph's cursors, only the connected account's", async () => {
  const { c1, c2, rich, bare, client } = seed();
  const seen = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await client.listEntities(`act_${ACCOUNT}`, { cursor, limit: 1 });
    seen.push(...page.data);
    cursor = page.next_cursor ?? undefined;
    pages++;
  } while (cursor && pages < 10);
  expect(seen.map((e) => [e.level, e.id, e.parent_id])).toEqual([
    ["campaign", c1.id, null], ["campaign", c2.id, null], ["ad_set", rich.id, c1.id], ["ad_set", bare.id, c2.id],
  ]);
  expect(seen.find((e) => e.id === rich.id)).toMatchObject({ name: "Runners", status: "ACTIVE", targeting: ["interests"] });
  // Graph's `after` cursors were passed back; the token never rode in a URL.
  expect(server.requests.filter((r) => r.query.after).length).toBeGreaterThanOrEqual(2);
  expect(server.requests.every((r) => r.auth === "header")).toBe(true);
  await expect(client.listEntities("act_555", { limit: 10 })).rejects.toMatchObject({ kind: "not_found" });
  await expect(client.listEntities(ACCOUNT, { cursor: "garbage", limit: 10 })).rejects.toMatchObject({ kind: "bad_request" });
});

test("reads the first flexible_spec group's interests and keeps the whole spec as prior state", async () => {
  const { rich, bare, client } = seed();
  const [r, b] = await client.readTargeting(ACCOUNT, [rich.id, bare.id], "interests");
  expect(r.items).toEqual([item(RUNNING)]); // Yoga sits in a second (AND-ed) group: not the plan's to change
  expect(r.spec).toEqual(RICH_SPEC);
  expect(b).toEqual({ entity_id: bare.id, field: "interests", items: [], spec: BARE_SPEC });
  await expect(client.readTargeting(ACCOUNT, ["120200000000000099"], "interests")).rejects.toMatchObject({ kind: "not_found" });
  await expect(client.readTargeting(ACCOUNT, [rich.id], "keywords")).rejects.toMatchObject({ kind: "bad_request" });
});

test("resolves trend phrases to Meta interests: the exact name alone, else Meta's best few", async () => {
  const { client } = seed();
  const m = await client.resolveItems(ACCOUNT, "interests", ["coffee", "run", "quantum knitting", "  "]);
  expect(m.get("coffee")).toEqual([item(COFFEE)]);
  expect(m.get("run")!.map((i) => i.text)).toEqual(["Running", "Trail running"]);
  expect(m.get("quantum knitting")).toEqual([]);
  expect(m.get("  ")).toEqual([]);
  expect(server.requests.every((r) => r.path === "/v27.0/search" && r.query.type === "adinterest")).toBe(true);
});

describe("preview, apply and rollback", () => {
  async function planned() {
    const s = seed();
    const prior = await s.client.readTargeting(ACCOUNT, [s.rich.id, s.bare.id], "interests");
    const changes = [change("c1", s.rich.id, "add", COFFEE), change("c2", s.rich.id, "add", TRAIL), change("c3", s.bare.id, "add", YOGA)];
    return { ...s, prior, changes, calls: s.client.calls(ACCOUNT, changes, prior) };
  }

  test("one whole-spec POST per ad set, without credentials or budget fields; validate_only changes nothing", async () => {
    const { rich, bare, client, calls } = await planned();
    expect(calls.map((c) => [c.method, c.path, c.change_ids])).toEqual([["POST", rich.id, ["c1", "c2"]], ["POST", bare.id, ["c3"]]]);
    expect(JSON.stringify(calls)).not.toContain(TOKEN);
    expect(calls.every((c) => Object.keys(c.body as object).join() === "targeting")).toBe(true);

    const verdicts = await client.run(ACCOUNT, calls, { dryRun: true });
    expect(verdicts.map((v) => [v.change_id, v.ok])).toEqual([["c1", true], ["c2", true], ["c3", true]]);
    expect(server.targetingOf(rich.id)).toEqual(RICH_SPEC);
    expect(server.targetingOf(bare.id)).toEqual(BARE_SPEC);
    expect(server.writes.map((w) => [w.adsetId, w.validateOnly, w.ok])).toEqual([[rich.id, true, true], [bare.id, true, true]]);
    expect(server.budgetWrites).toEqual([]);
  });

  test("apply adds the interests and keeps every other field; rollback gives back the prior spec exactly", async () => {
    const { rich, bare, client, calls, changes } = await planned();
    const applied = await client.run(ACCOUNT, calls, { dryRun: false });
    expect(applied.map((v) => [v.change_id, v.ok])).toEqual([["c1", true], ["c2", true], ["c3", true]]);
    // request_id is Meta's fbtrace_id of the write that carried the change.
    const traces = server.requests.filter((r) => r.method === "POST").map((r) => r.fbtraceId);
    expect(applied.map((v) => v.request_id)).toEqual([traces[0], traces[0], traces[1]]);
    expect(server.targetingOf(rich.id)).toEqual({ ...RICH_SPEC, flexible_spec: [{ interests: [RUNNING, COFFEE, TRAIL] }, { interests: [YOGA] }] });
    expect(server.targetingOf(bare.id)).toEqual({ ...BARE_SPEC, flexible_spec: [{ interests: [YOGA] }] });
    expect(server.adSet(rich.id)!.daily_budget).toBe("2000");
    expect(server.budgetWrites).toEqual([]);

    const now = await client.readTargeting(ACCOUNT, [rich.id, bare.id], "interests");
    expect(now[0].items.map((i) => i.text)).toEqual(["Running", "Coffee", "Trail running"]);
    const undo = changes.map((c) => ({ ...c, id: `undo-${c.id}`, op: "remove" as const }));
    const rolled = await client.run(ACCOUNT, client.calls(ACCOUNT, undo, now), { dryRun: false });
    expect(rolled.every((r) => r.ok)).toBe(true);
    expect(server.targetingOf(rich.id)).toEqual(RICH_SPEC);
    expect(server.targetingOf(bare.id)).toEqual(BARE_SPEC); // flexible_spec the apply created is gone again
  });

  test("a refused interest fails its ad set's changes, naming it; the other ad set is written", async () => {
    const { rich, bare, client, calls } = await planned();
    server.refuseInterest(TRAIL.id);
    const preview = await client.run(ACCOUNT, calls, { dryRun: true });
    expect(preview.map((v) => [v.change_id, v.ok])).toEqual([["c1", false], ["c2", false], ["c3", true]]);
    const applied = await client.run(ACCOUNT, calls, { dryRun: false });
    expect(applied.map((v) => [v.change_id, v.ok])).toEqual([["c1", false], ["c2", false], ["c3", true]]);
    expect(applied[1].error).toMatchObject({ kind: "bad_request", detail: { providerCode: expect.stringMatching(/^100\//) } });
    expect(applied[1].error!.message).toContain(`interest ${TRAIL.id} (Trail running) refused`);
    expect(applied[0].request_id).toBe(server.requests.filter((r) => r.method === "POST").at(-2)!.fbtraceId);
    expect(server.targetingOf(rich.id)).toEqual(RICH_SPEC);
    expect(server.targetingOf(bare.id)).toEqual({ ...BARE_SPEC, flexible_spec: [{ interests: [YOGA] }] });
  });

  test("calls need the spec read at preview, and run refuses anything but a targeting write", async () => {
    const { rich, client, changes, prior, calls } = await planned();
    expect(() => client.calls(ACCOUNT, changes, [])).toThrow(/targeting spec/);
    const tampered = [{ ...calls[0], body: { ...(calls[0].body as object), daily_budget: "999999" } }];
    await expect(client.run(ACCOUNT, tampered, { dryRun: false })).rejects.toMatchObject({ kind: "bad_request" });
    expect(server.writes).toEqual([]);
    // Removing what is not there and adding what is already there change nothing.
    const same = client.calls(ACCOUNT, [change("x", rich.id, "add", RUNNING), change("y", rich.id, "remove", COFFEE)], prior as EntityTargeting[]);
    expect((same[0].body as { targeting: unknown }).targeting).toEqual(RICH_SPEC);
  });
});

test("throttles, transient failures and token errors map onto the framework's kinds", async () => {
  const { rich, bare, client } = seed();
  const prior = await client.readTargeting(ACCOUNT, [rich.id, bare.id], "interests");
  const calls = client.calls(ACCOUNT, [change("c1", rich.id, "add", COFFEE), change("c2", bare.id, "add", COFFEE)], prior);
  const run = () => kindOf(client.run(ACCOUNT, calls, { dryRun: false }));

  server.failNext("ad_account_limit", 1, { regainMinutes: 7 });
  let e = await run() as ProviderError;
  expect([e.kind, e.detail.retryAfterMs, e.detail.providerCode]).toEqual(["rate_limited", 7 * 60_000, "613/1487742"]);
  expect(e.message).toContain(server.requests.at(-1)!.fbtraceId);
  for (const kind of ["user_limit", "app_limit", "buc_limit"] as const) {
    server.failNext(kind, 1, { regainMinutes: 2 });
    e = await run() as ProviderError;
    expect([kind, e.kind, e.detail.retryAfterMs]).toEqual([kind, "rate_limited", 120_000]);
  }
  server.failNext("transient", 1);
  expect(((await run()) as ProviderError).kind).toBe("unavailable");
  expect(server.targetingOf(rich.id)).toEqual(RICH_SPEC); // nothing applied by failed calls

  // A throttle after the first ad set was written: the run reports that write and fails the rest, retryable. The
  // stand-in throttles "the next n calls", so the throttle is armed once the first write has been answered.
  server.resetLog();
  const realFetch = ProviderHttp.prototype.fetch;
  let armed = false;
  ProviderHttp.prototype.fetch = async function (this: ProviderHttp, ...args: Parameters<ProviderHttp["fetch"]>) {
    const res = await realFetch.apply(this, args);
    if (!armed && server.writes.length === 1) { armed = true; server.failNext("buc_limit", 1, { regainMinutes: 3 }); }
    return res;
  };
  let partial;
  try { partial = await client.run(ACCOUNT, calls, { dryRun: false }); } finally { ProviderHttp.prototype.fetch = realFetch; }
  expect(partial.map((r) => [r.change_id, r.ok, r.error?.kind])).toEqual([["c1", true, undefined], ["c2", false, "rate_limited"]]);
  expect(partial[1].error!.detail.retryAfterMs).toBe(180_000);
  expect(server.targetingOf(rich.id)!.flexible_spec[0].interests).toContainEqual(COFFEE);
  expect(server.targetingOf(bare.id)).toEqual(BARE_SPEC);

  server.expireToken(TOKEN);
  await expect(client.listEntities(ACCOUNT, { limit: 10 })).rejects.toMatchObject({ kind: "unauthorized", detail: { providerCode: "190/463" } });
  const stranger = metaAds.client({ baseUrl: server.url, accessToken: "EAAunknown" });
  await expect(stranger.readTargeting(ACCOUNT, [rich.id], "interests")).rejects.toMatchObject({ kind: "unauthorized" });
  expect(() => metaAds.client({ baseUrl: server.url, accessToken: TOKEN, env: { META_ADS_API_VERSION: "27" } })).toThrow(/v27\.0/);
  const old = metaAds.client({ baseUrl: server.url, accessToken: TOKEN, env: { META_ADS_API_VERSION: "v24.0" } });
  await expect(old.listEntities(ACCOUNT, { limit: 1 })).rejects.toMatchObject({ kind: "bad_request", detail: { providerCode: "2635" } });
});

describe("OAuth", () => {
  const settings = (): OAuthClientSettings => ({
    clientId: server.app.clientId, clientSecret: server.app.clientSecret, baseUrl: server.url,
    authorizationUrl: "https://www.facebook.com/v27.0/dialog/oauth", tokenUrl: `${server.url}/v27.0/oauth/access_token`,
  });
  const manifest = metaAds.manifest as OAuthManifest;

  test("the consent URL asks for the ads scopes comma-separated, without PKCE", async () => {
    const client = new OAuth2Client(manifest, settings());
    expect(client.newCodeVerifier()).toBeUndefined();
    const url = new URL(await client.authorizationUrl({ redirectUri: "https://app.example/cb", state: "st" }));
    expect(url.searchParams.get("scope")).toBe("ads_management,ads_read,business_management");
    expect(url.searchParams.has("code_challenge")).toBe(false);
  });

  test("the code is exchanged with a GET and swapped for a ~60 day token; there is no refresh token", async () => {
    seed();
    server.addCode("code-1", { redirectUri: "https://app.example/cb", accounts: [ACCOUNT] });
    const client = new OAuth2Client(manifest, settings());
    const before = Date.now();
    const tokens = await client.exchangeCode({ code: "code-1", redirectUri: "https://app.example/cb" });
    expect(server.counts).toMatchObject({ code: 1, fb_exchange_token: 1 });
    expect(tokens.refreshToken).toBeUndefined();
    const days = (tokens.expiresAt!.getTime() - before) / 86_400_000;
    expect(days).toBeGreaterThan(59.9);
    expect(days).toBeLessThan(60.1);
    // The long-lived token is the one kept, and it works.
    const api = metaAds.client({ baseUrl: server.url, accessToken: tokens.accessToken });
    expect((await api.listEntities(ACCOUNT, { limit: 5 })).data.length).toBeGreaterThan(0);
    expect(server.requests.filter((r) => r.path.endsWith("/oauth/access_token")).map((r) => r.method)).toEqual(["GET", "GET"]);

    // A used code and a wrong secret are refused without a retry; no token is swapped.
    await expect(client.exchangeCode({ code: "code-1", redirectUri: "https://app.example/cb" })).rejects.toMatchObject({ kind: "bad_request" });
    server.addCode("code-2", { redirectUri: "https://app.example/cb" });
    const wrong = new OAuth2Client(manifest, { ...settings(), clientSecret: "nope" });
    await expect(wrong.exchangeCode({ code: "code-2", redirectUri: "https://app.example/cb" })).rejects.toMatchObject({ kind: "bad_request", message: expect.stringContaining("META_ADS_CLIENT_SECRET") });
    expect(server.counts.fb_exchange_token).toBe(1);
  });
});
