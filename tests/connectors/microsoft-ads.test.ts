import { OAuth2Client, ProviderError, type OAuthClientSettings, type OAuthManifest, ProviderHttp } from "@trendgate/connector-core";
import { microsoftAds, type TargetingChange, type TargetingItem } from "@trendgate/connector-ads";
import { startMicrosoftAdsServer, type MicrosoftAdsServer } from "../peers/microsoft-ads-server.ts";

// The vendor stand-ins listen on loopback; provider calls reach private addresses only where OUTBOUND_ALLOWLIST allows.
process.env.OUTBOUND_ALLOWLIST = "127.0.0.1";

// The Microsoft Advertising connector's client against the local Campaign Management REST API: Search
// campaigns and their ad groups paged by the connector (Microsoft's reads do not page), keywords read per ad group,
// AddKeywords / DeleteKeywords with per-item results from PartialErrors (aligned by Index) and TrackingId as the
// request id, the connector's own checks standing in for the dry run Microsoft does not have, faults (117
// CallRateExceeded, expired tokens, internal errors) onto the framework's kinds, and the identity platform's OAuth:
// offline_access, PKCE, and the refresh hook that names the scopes again.

const TOKEN = "EwB-connector-test";
const CUSTOMER = "251000001";

let ms: MicrosoftAdsServer;
beforeEach(async () => { ms = await startMicrosoftAdsServer(); });
afterEach(() => ms.close());

function seed(opts: { throttleWait?: string } = {}) {
  const account = ms.addAccount({ customerId: CUSTOMER, name: "Software US" });
  const foreign = ms.addAccount({ customerId: "251000999", name: "Not ours" });
  ms.addToken(TOKEN, { accounts: [account.id] });
  const c1 = ms.addCampaign({ accountId: account.id, name: "Brand" });
  const c2 = ms.addCampaign({ accountId: account.id, name: "Generic" });
  ms.addCampaign({ accountId: account.id, name: "Retargeting", campaignType: "Audience" }); // no keywords there
  const g1 = ms.addAdGroup({ campaignId: c1.id, name: "Editors" });
  const g2 = ms.addAdGroup({ campaignId: c1.id, name: "IDEs" });
  const g3 = ms.addAdGroup({ campaignId: c2.id, name: "Linters" });
  const kw = ms.addKeyword({ adGroupId: g1.id, text: "code editor", matchType: "Phrase" });
  const env = { MICROSOFT_ADS_DEVELOPER_TOKEN: ms.developerToken, ...(opts.throttleWait ? { MICROSOFT_ADS_THROTTLE_WAIT_SECONDS: opts.throttleWait } : {}) };
  const client = microsoftAds.client({ baseUrl: ms.url, accessToken: TOKEN, env });
  return { acc: `${CUSTOMER}:${account.id}`, account, foreign, c1, c2, g1, g2, g3, kw, client, env };
}

const item = (text: string, matchType = "Phrase", keywordId?: string): TargetingItem => ({ key: `${text.toLowerCase()}|${matchType}`, text, match_type: matchType, ...(keywordId ? { resource: keywordId } : {}) });
const add = (id: string, entity: string, text: string, matchType = "Phrase"): TargetingChange => ({ id, entity_id: entity, field: "keywords", op: "add", item: item(text, matchType), trend_id: "trd_1" });
const writes = () => ms.requests.filter((r) => r.op === "Keywords");

test("lists Search campaigns, then their ad groups, paging itself; every call carries the account headers", async () => {
  const { acc, account, foreign, c1, c2, g1, g2, g3, client } = seed();
  const seen = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await client.listEntities(acc, { cursor, limit: 1 });
    expect(page.data.length).toBeLessThanOrEqual(1);
    seen.push(...page.data);
    cursor = page.next_cursor ?? undefined;
  } while (cursor && ++pages < 20);
  expect(seen.map((e) => [e.level, e.id, e.parent_id, e.targeting])).toEqual([
    ["campaign", c1.id, null, []], ["campaign", c2.id, null, []],
    ["ad_group", g1.id, c1.id, ["keywords"]], ["ad_group", g2.id, c1.id, ["keywords"]], ["ad_group", g3.id, c2.id, ["keywords"]],
  ]);
  expect(seen[2]).toMatchObject({ name: "Editors", status: "Active" });
  const big = await client.listEntities(acc, { limit: 200 });
  const rest = await client.listEntities(acc, { cursor: big.next_cursor!, limit: 200 });
  expect([big.data.length, rest.data.length, rest.next_cursor]).toEqual([2, 3, null]);
  expect(ms.requests.every((r) => r.headers.customerid === CUSTOMER && r.headers.customeraccountid === account.id)).toBe(true);

  await expect(client.listEntities(account.id, { limit: 5 })).rejects.toMatchObject({ kind: "bad_request", message: expect.stringContaining("<customerId>:<accountId>") });
  await expect(client.listEntities(`251000999:${foreign.id}`, { limit: 5 })).rejects.toMatchObject({ kind: "not_found", detail: { providerCode: "UserIsNotAuthorized" } });
  await expect(client.listEntities(acc, { cursor: "garbage", limit: 5 })).rejects.toMatchObject({ kind: "bad_request" });
});

test("reads each ad group's keywords with their ids and match types; resolves phrases to phrase-match keywords", async () => {
  const { acc, g1, g2, kw, client } = seed();
  ms.addKeyword({ adGroupId: g1.id, text: "Code Editor", matchType: "Exact" });
  const [a, b] = await client.readTargeting(acc, [g1.id, g2.id], "keywords");
  expect(a.items).toEqual([item("Code Editor", "Exact", expect.any(String)), item("code editor", "Phrase", kw.id)]);
  expect(b).toEqual({ entity_id: g2.id, field: "keywords", items: [] });
  await expect(client.readTargeting(acc, ["4242"], "keywords")).rejects.toMatchObject({ kind: "not_found", detail: { providerCode: "CampaignServiceInvalidAdGroupId" } });
  await expect(client.readTargeting(acc, [g1.id], "interests")).rejects.toMatchObject({ kind: "bad_request" });

  const m = await client.resolveItems(acc, "keywords", ["AI Agents!", "one two three four five six seven eight nine ten eleven twelve", "  "]);
  expect(m.get("AI Agents!")).toEqual([item("ai agents")]);
  expect(m.get("one two three four five six seven eight nine ten eleven twelve")![0].text.split(" ")).toHaveLength(10);
  expect(m.get("  ")).toEqual([]);
});

describe("preview, apply and rollback", () => {
  async function planned() {
    const s = seed();
    const prior = await s.client.readTargeting(s.acc, [s.g1.id, s.g2.id], "keywords");
    const changes = [add("c1", s.g1.id, "rust ide"), add("c2", s.g1.id, "zig ide"), add("c3", s.g2.id, "go ide")];
    return { ...s, prior, changes, calls: s.client.calls(s.acc, changes, prior) };
  }

  test("one AddKeywords per ad group: Text and MatchType only, the account headers, no credentials, no bid", async () => {
    const { acc, account, g1, g2, calls, client } = await planned();
    expect(calls.map((c) => [c.method, c.path, c.change_ids, c.body])).toEqual([
      ["POST", "Keywords", ["c1", "c2"], { AdGroupId: g1.id, Keywords: [{ Text: "rust ide", MatchType: "Phrase" }, { Text: "zig ide", MatchType: "Phrase" }] }],
      ["POST", "Keywords", ["c3"], { AdGroupId: g2.id, Keywords: [{ Text: "go ide", MatchType: "Phrase" }] }],
    ]);
    expect(calls[0].headers).toEqual({ "content-type": "application/json", CustomerId: CUSTOMER, CustomerAccountId: account.id });
    expect(JSON.stringify(calls)).not.toContain(TOKEN);
    expect(JSON.stringify(calls)).not.toContain(ms.developerToken);
    // An executor gets the write as is; a dry-run request it cannot get (the same request would write).
    expect(client.executorRequest!(calls[0], { dryRun: false })).toMatchObject({ method: "POST", url: `${ms.url}/CampaignManagement/v13/Keywords`, credentials: expect.stringContaining("DeveloperToken") });
    expect(() => client.executorRequest!(calls[0], { dryRun: true })).toThrow(/no validate-only/);
    // An executor plan's rollback names the keyword its step will create by a placeholder; our own run never sends one.
    const undo = client.calls(acc, [{ ...add("u1", g1.id, "rust ide"), op: "remove", item: { ...item("rust ide"), resource: "{{resource:c1}}" } }], []);
    expect(undo.map((c) => [c.method, c.body])).toEqual([["DELETE", { AdGroupId: g1.id, KeywordIds: ["{{resource:c1}}"] }]]);
    await expect(client.run(acc, undo, { dryRun: false })).rejects.toMatchObject({ kind: "bad_request" });
    expect(() => client.calls(acc, [{ ...add("u2", g1.id, "x"), op: "remove" }], [])).toThrow(/keyword id/);
  });

  test("the dry run is our own checks: reads only, one verdict per keyword with Microsoft's reason", async () => {
    const { acc, g1, kw, client } = await planned();
    const changes = [
      add("ok", g1.id, "rust ide"), add("long", g1.id, "x".repeat(101)), add("words", g1.id, "a b c d e f g h i j k"),
      add("dupe", g1.id, "Code Editor"), add("twice", g1.id, "rust ide"), add("match", g1.id, "go ide", "Fuzzy"),
    ];
    const remove = { id: "gone", entity_id: g1.id, field: "keywords" as const, op: "remove" as const, item: item("nope", "Phrase", "999"), trend_id: null };
    const keep = { ...remove, id: "del", item: item("code editor", "Phrase", kw.id) };
    ms.resetLog();
    const verdicts = await client.run(acc, client.calls(acc, [...changes, remove, keep], []), { dryRun: true });
    expect(verdicts.map((v) => [v.change_id, v.ok])).toEqual([
      ["ok", true], ["long", false], ["words", false], ["dupe", false], ["twice", false], ["match", false], ["gone", false], ["del", true],
    ]);
    const why = Object.fromEntries(verdicts.map((v) => [v.change_id, v.error?.message ?? ""]));
    expect(why.long).toMatch(/101 characters; at most 100/);
    expect(why.words).toMatch(/11 words; at most 10/);
    expect(why.dupe).toMatch(/already a keyword/);
    expect(why.twice).toMatch(/twice/);
    expect(why.match).toMatch(/match type "Fuzzy"/);
    expect(why.gone).toMatch(/keyword 999 is not a keyword/);
    expect(verdicts.find((v) => !v.ok)!.error).toMatchObject({ kind: "bad_request", detail: { providerCode: "connector_check" } });
    // Nothing was written: the checks read the ad group's keywords (their TrackingId is the verdict's request id).
    expect(ms.requests.map((r) => r.op)).toEqual(["Keywords/QueryByAdGroupId", "Keywords/QueryByAdGroupId"]); // one read per call
    expect(verdicts[0].request_id).toBe(ms.requests[0].trackingId);
    expect(ms.keywordsOf(g1.id).map((k) => k.text)).toEqual(["code editor"]);
  });

  test("apply: per-keyword results from PartialErrors, TrackingId as request id; rollback deletes what was added", async () => {
    const { acc, g1, g2, client, calls, changes } = await planned();
    ms.refuseText("zig ide");
    const applied = await client.run(acc, calls, { dryRun: false });
    expect(applied.map((v) => [v.change_id, v.ok])).toEqual([["c1", true], ["c2", false], ["c3", true]]);
    const [w1, w2] = writes();
    expect(applied.map((v) => v.request_id)).toEqual([w1.trackingId, w1.trackingId, w2.trackingId]);
    expect(applied[0].resource).toBe(ms.keywordsOf(g1.id).find((k) => k.text === "rust ide")!.id);
    expect(applied[1].error).toMatchObject({ kind: "bad_request", detail: { providerCode: "CampaignServiceEditorialValidationError" } });
    expect(applied[1].error!.message).toContain("editorial review");
    expect(ms.keywordsOf(g1.id).map((k) => k.text)).toEqual(["code editor", "rust ide"]);
    expect(ms.keywordsOf(g2.id).map((k) => k.text)).toEqual(["go ide"]);
    expect(ms.bidWrites).toEqual([]);

    const now = await client.readTargeting(acc, [g1.id, g2.id], "keywords");
    const undo = changes.filter((c) => c.id !== "c2").map((c) => ({ ...c, id: `undo-${c.id}`, op: "remove" as const, item: now.flatMap((t) => t.items).find((i) => i.key === c.item.key)! }));
    const rbCalls = client.calls(acc, undo, now);
    expect(rbCalls.map((c) => [c.method, (c.body as { KeywordIds: number[] }).KeywordIds.length])).toEqual([["DELETE", 1], ["DELETE", 1]]);
    expect((await client.run(acc, rbCalls, { dryRun: false })).every((r) => r.ok)).toBe(true);
    expect(ms.keywordsOf(g1.id).map((k) => k.text)).toEqual(["code editor"]);
    expect(ms.keywordsOf(g2.id)).toEqual([]);
  });

  test("64-bit ids go out as strings, as Microsoft's REST templates quote them: ids past 2^53 keep every digit", async () => {
    const s = seed();
    // 2^53 + 1: as a JSON number it would arrive as 9007199254740992, another ad group (or none).
    const big = ms.addAdGroup({ campaignId: s.c1.id, name: "Huge", id: "9007199254740993" });
    const kw = ms.addKeyword({ adGroupId: big.id, text: "huge ide", matchType: "Phrase" });
    const prior = await s.client.readTargeting(s.acc, [big.id], "keywords");
    expect(prior[0].items.map((i) => i.text)).toEqual(["huge ide"]);
    const calls = s.client.calls(s.acc, [add("b1", big.id, "vast ide"), { ...add("b2", big.id, "huge ide"), op: "remove", item: item("huge ide", "Phrase", kw.id) }], prior);
    expect(calls.map((c) => c.body)).toEqual([
      { AdGroupId: "9007199254740993", Keywords: [{ Text: "vast ide", MatchType: "Phrase" }] },
      { AdGroupId: "9007199254740993", KeywordIds: [kw.id] },
    ]);
    expect((await s.client.run(s.acc, calls, { dryRun: false })).map((r) => [r.change_id, r.ok])).toEqual([["b1", true], ["b2", true]]);
    expect(ms.keywordsOf(big.id).map((k) => k.text)).toEqual(["vast ide"]);
    expect(writes().map((r) => typeof r.body.AdGroupId)).toEqual(["string", "string"]);
    // A plan stored before this change carries safe-integer numbers: sent as strings all the same.
    ms.resetLog();
    const legacy = s.client.calls(s.acc, [add("l1", s.g1.id, "old ide")], []).map((c) => ({ ...c, body: { ...(c.body as object), AdGroupId: Number(s.g1.id) } }));
    expect((await s.client.run(s.acc, legacy, { dryRun: false }))[0].ok).toBe(true);
    expect(writes()[0].body.AdGroupId).toBe(s.g1.id);
  });

  test("an ad group gone since the preview fails its changes only; run refuses calls that carry a bid", async () => {
    const { acc, client, calls } = await planned();
    const moved = [{ ...calls[0] }, { ...calls[1], body: { ...(calls[1].body as object), AdGroupId: 4242 } }];
    const r = await client.run(acc, moved, { dryRun: false });
    expect(r.map((x) => [x.change_id, x.ok, x.error?.kind])).toEqual([["c1", true, undefined], ["c2", true, undefined], ["c3", false, "not_found"]]);
    expect(r[2].request_id).toBe(writes()[1].trackingId);

    ms.resetLog();
    const bid = [{ ...calls[0], body: { AdGroupId: (calls[0].body as { AdGroupId: string }).AdGroupId, Keywords: [{ Text: "a", MatchType: "Phrase", Bid: { Amount: 5 } }, { Text: "b", MatchType: "Phrase" }] } }];
    await expect(client.run(acc, bid, { dryRun: false })).rejects.toMatchObject({ kind: "bad_request", message: expect.stringContaining("never a bid") });
    await expect(client.run(`${CUSTOMER}:1`, calls, { dryRun: false })).rejects.toMatchObject({ kind: "bad_request" });
    expect(ms.requests).toEqual([]);
  });
});

test("faults onto the framework's kinds: 117 waits 60 s (configurable), 109 re-auth, internal retry, no developer token", async () => {
  const { acc, g1, g2, client, env } = seed();
  const calls = client.calls(acc, [add("c1", g1.id, "rust ide"), add("c2", g2.id, "go ide")], []);
  const run = (c = client) => c.run(acc, calls, { dryRun: false }).then(() => null, (e: ProviderError) => e);

  ms.failNext("call_rate");
  let e = (await run())!;
  expect([e.kind, e.detail.retryAfterMs, e.detail.providerCode]).toEqual(["rate_limited", 60_000, "CallRateExceeded"]);
  expect(e.message).toContain(`TrackingId ${ms.requests.at(-1)!.trackingId}`);
  ms.failNext("call_rate");
  const quick = microsoftAds.client({ baseUrl: ms.url, accessToken: TOKEN, env: { ...env, MICROSOFT_ADS_THROTTLE_WAIT_SECONDS: "5" } });
  expect((await run(quick))!.detail.retryAfterMs).toBe(5000);
  ms.failNext("call_rate");
  await expect(client.listEntities(acc, { limit: 5 })).rejects.toMatchObject({ kind: "rate_limited", detail: { retryAfterMs: 60_000 } });
  ms.failNext("internal");
  expect((await run())!.kind).toBe("unavailable");
  expect(writes().every((w) => w.status !== 200)).toBe(true); // nothing applied by failed calls

  // A throttle after the first ad group was written: that write is reported, the rest fails retryable.
  ms.resetLog();
  const realFetch = ProviderHttp.prototype.fetch;
  let armed = false;
  ProviderHttp.prototype.fetch = async function (this: ProviderHttp, ...args: Parameters<ProviderHttp["fetch"]>) {
    const res = await realFetch.apply(this, args);
    if (!armed && writes().length === 1) { armed = true; ms.failNext("call_rate"); }
    return res;
  };
  let partial;
  try { partial = await client.run(acc, calls, { dryRun: false }); } finally { ProviderHttp.prototype.fetch = realFetch; }
  expect(partial.map((r) => [r.change_id, r.ok, r.error?.kind])).toEqual([["c1", true, undefined], ["c2", false, "rate_limited"]]);
  expect(ms.keywordsOf(g2.id)).toEqual([]);

  ms.expireToken(TOKEN);
  await expect(client.readTargeting(acc, [g1.id], "keywords")).rejects.toMatchObject({ kind: "unauthorized", detail: { providerCode: "AuthenticationTokenExpired" } });
  const wrongDev = microsoftAds.client({ baseUrl: ms.url, accessToken: "EwB-unknown", env });
  await expect(wrongDev.readTargeting(acc, [g1.id], "keywords")).rejects.toMatchObject({ kind: "unauthorized", message: expect.stringContaining("MICROSOFT_ADS_DEVELOPER_TOKEN") });
  ms.resetLog();
  const noDev = microsoftAds.client({ baseUrl: ms.url, accessToken: TOKEN });
  await expect(noDev.listEntities(acc, { limit: 5 })).rejects.toMatchObject({ kind: "bad_request", message: expect.stringContaining("MICROSOFT_ADS_DEVELOPER_TOKEN is not set") });
  expect(ms.requests).toEqual([]);
  expect(() => microsoftAds.client({ baseUrl: ms.url, accessToken: TOKEN, env: { MICROSOFT_ADS_THROTTLE_WAIT_SECONDS: "soon" } })).toThrow(/MICROSOFT_ADS_THROTTLE_WAIT_SECONDS/);
});

describe("OAuth on the Microsoft identity platform", () => {
  const settings = (): OAuthClientSettings => ({
    clientId: ms.app.clientId, clientSecret: ms.app.clientSecret, baseUrl: ms.url,
    authorizationUrl: "https://login.microsoftonline.com/common/oauth2/v2.0/authorize", tokenUrl: `${ms.url}/common/oauth2/v2.0/token`,
  });
  const manifest = microsoftAds.manifest as OAuthManifest;
  const SCOPE = "https://ads.microsoft.com/msads.manage offline_access";

  test("consent asks for msads.manage with offline_access, with PKCE; the code gives a refresh token; refresh names the scopes", async () => {
    const { acc, g1 } = seed();
    const client = new OAuth2Client(manifest, settings());
    const verifier = client.newCodeVerifier()!;
    const url = new URL(await client.authorizationUrl({ redirectUri: "https://app.example/cb", state: "st", codeVerifier: verifier }));
    expect(url.searchParams.get("scope")).toBe(SCOPE);
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    ms.addCode("code-1", { redirectUri: "https://app.example/cb", scope: url.searchParams.get("scope")!, codeChallenge: url.searchParams.get("code_challenge")! });
    const before = Date.now();
    const tokens = await client.exchangeCode({ code: "code-1", redirectUri: "https://app.example/cb", codeVerifier: verifier });
    expect(tokens.refreshToken).toEqual(expect.any(String));
    const minutes = (tokens.expiresAt!.getTime() - before) / 60_000;
    expect(minutes).toBeGreaterThan(59);
    expect(minutes).toBeLessThan(91);

    // The standard refresh grant would leave `scope` out, which the v2.0 endpoint refuses (AADSTS90014): the hook sends it.
    const next = await client.refresh(tokens.refreshToken!);
    expect(ms.tokenRequests.map((r) => [r.grant_type, r.scope, r.status])).toEqual([["authorization_code", null, 200], ["refresh_token", SCOPE, 200]]);
    expect(next.refreshToken).not.toBe(tokens.refreshToken); // rotated: the new one is kept
    const api = microsoftAds.client({ baseUrl: ms.url, accessToken: next.accessToken, env: { MICROSOFT_ADS_DEVELOPER_TOKEN: ms.developerToken } });
    expect((await api.readTargeting(acc, [g1.id], "keywords"))[0].items).toHaveLength(1);

    ms.revokeRefreshToken(next.refreshToken!);
    await expect(client.refresh(next.refreshToken!)).rejects.toMatchObject({ kind: "unauthorized", detail: { providerCode: "invalid_grant" } });
    const wrong = new OAuth2Client(manifest, { ...settings(), clientSecret: "nope" });
    const err = await wrong.refresh(tokens.refreshToken!).catch((e: ProviderError) => e);
    expect(err).toMatchObject({ kind: "unauthorized", detail: { providerCode: "invalid_client" } });
    expect((err as Error).message).not.toContain(tokens.refreshToken!);
    expect((err as Error).message).toMatch(/AADSTS7000215/);
  });
});
