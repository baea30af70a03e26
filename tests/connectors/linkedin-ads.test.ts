import { OAuth2Client, ProviderError, type OAuthClientSettings, type OAuthManifest, ProviderHttp } from "@trendgate/connector-core";
import { linkedinAds, type TargetingChange, type TargetingItem } from "@trendgate/connector-ads";
import { callError } from "../../packages/connectors/ads/src/linkedin/errors.ts";
import { LINKEDIN_FACETS as F, PUBLISHED_VERSIONS, startLinkedInAdsServer, type Criteria, type LinkedInAdsServer } from "../peers/linkedin-ads-server.ts";

// The vendor stand-ins listen on loopback; provider calls reach private addresses only where OUTBOUND_ALLOWLIST allows.
process.env.OUTBOUND_ALLOWLIST = "127.0.0.1";

// The LinkedIn Ads connector's client against the local Marketing API: campaign groups then campaigns
// through page tokens, member interests and skills read from each campaign's whole targetingCriteria (named
// through adTargetingEntities), trends resolved through its typeahead, one PARTIAL_UPDATE per campaign carrying the
// criteria read at preview with only the plan's change merged, a dry run that is our own checks plus audienceCounts
// (nothing written), versioned headers on every call, errors and 429s without a wait hint onto the framework's
// kinds, and the standard OAuth exchange and refresh (60-day tokens, a refresh token that is kept).

const TOKEN = "AQtest-linkedin";
const ACCOUNT = "508000001";
const OTHER = "508000099";
const US = "urn:li:geo:103644278";
const GB = "urn:li:geo:101165590";
const AI = { id: "urn:li:interest:1001", name: "Artificial Intelligence" };
const CLOUD = { id: "urn:li:interest:1002", name: "Cloud Computing" };
const ML = { id: "urn:li:skill:2001", name: "Machine Learning" };
const PM = { id: "urn:li:skill:2003", name: "Project Management" };
const CLOUD_SEC = { id: "urn:li:skill:2004", name: "Cloud Security" };
const QEC = { id: "urn:li:skill:2005", name: "Quantum Error Correction" };

/** Criteria with everything a write must keep: locations, a locale clause after the plan's, exclusions. */
const RICH: Criteria = {
  include: { and: [{ or: { [F.locations]: [US] } }, { or: { [F.interests]: [AI.id], [F.skills]: [ML.id] } }, { or: { [F.interfaceLocales]: ["urn:li:locale:en_US"] } }] },
  exclude: { or: { "urn:li:adTargetingFacet:seniorities": ["urn:li:seniority:10"] } },
};
const BARE: Criteria = { include: { and: [{ or: { [F.locations]: [GB] } }] } };

let server: LinkedInAdsServer;
beforeEach(async () => { server = await startLinkedInAdsServer(); });
afterEach(() => server.close());

function seed() {
  server.addAccount({ id: ACCOUNT, name: "Shoes US" });
  server.addAccount({ id: OTHER, name: "Someone else's" });
  server.addToken(TOKEN, { accounts: { [ACCOUNT]: "CAMPAIGN_MANAGER" } });
  const g1 = server.addGroup({ account: ACCOUNT, name: "Spring" });
  const g2 = server.addGroup({ account: ACCOUNT, name: "Summer" });
  server.addGroup({ account: ACCOUNT, name: "2019", status: "ARCHIVED" });
  const rich = server.addCampaign({ account: ACCOUNT, group: g1.id, name: "Engineers US", targetingCriteria: RICH });
  const bare = server.addCampaign({ account: ACCOUNT, group: g2.id, name: "Everyone UK", targetingCriteria: BARE, status: "PAUSED" });
  server.addCampaign({ account: ACCOUNT, group: g1.id, name: "Old", targetingCriteria: BARE, status: "ARCHIVED" });
  const otherGroup = server.addGroup({ account: OTHER, name: "Theirs" });
  const theirs = server.addCampaign({ account: OTHER, group: otherGroup.id, name: "Theirs", targetingCriteria: BARE });
  return { g1, g2, rich, bare, theirs, client: linkedinAds.client({ baseUrl: server.url, accessToken: TOKEN }) };
}

const item = (i: { id: string; name: string }): TargetingItem => ({ key: i.id, id: i.id, text: i.name });
const change = (id: string, entity: string, op: "add" | "remove", i: { id: string; name: string }): TargetingChange =>
  ({ id, entity_id: entity, field: "interests", op, item: item(i), trend_id: "trd_1" });
const settle = (p: Promise<unknown>) => p.then(() => "ok", (e: ProviderError) => e);
const apiCalls = () => server.requests.filter((r) => r.path.startsWith("/rest/"));

test("lists campaign groups then campaigns through LinkedIn's page tokens, editable ones only, with versioned headers", async () => {
  const { g1, g2, rich, bare, client } = seed();
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
    ["campaign", g1.id, null], ["campaign", g2.id, null], ["ad_set", rich.id, g1.id], ["ad_set", bare.id, g2.id],
  ]);
  expect(seen.find((e) => e.id === bare.id)).toMatchObject({ name: "Everyone UK", status: "PAUSED", targeting: ["interests"] });
  // pageSize as asked, and LinkedIn's nextPageToken passed back until it answers none.
  expect(apiCalls().map((r) => [r.path.split("/").pop(), r.query.pageSize, !!r.query.pageToken])).toEqual([
    ["adCampaignGroups", "1", false], ["adCampaignGroups", "1", true], ["adCampaigns", "1", false], ["adCampaigns", "1", true],
  ]);
  expect(apiCalls().every((r) => r.query.search === "(status:(values:List(ACTIVE,PAUSED,DRAFT)))")).toBe(true);
  // Every call names the pinned version and the Rest.li protocol; the token rides in the header only.
  expect(apiCalls().every((r) => r.headers["linkedin-version"] === "202608" && r.headers["x-restli-protocol-version"] === "2.0.0")).toBe(true);
  expect(JSON.stringify(server.requests)).not.toContain(TOKEN);
  // No role on the account: refused for good, not a token problem (re-authorizing would not help).
  await expect(client.listEntities(OTHER, { limit: 10 })).rejects.toMatchObject({ kind: "bad_request", detail: { status: 403, providerCode: "ACCESS_DENIED" } });
  await expect(client.listEntities(ACCOUNT, { cursor: "garbage", limit: 10 })).rejects.toMatchObject({ kind: "bad_request" });
  await expect(client.listEntities("acme", { limit: 10 })).rejects.toMatchObject({ kind: "bad_request" });
});

test("reads the member interests and skills of the plan's clause, named, with the whole criteria as prior state", async () => {
  const { rich, bare, theirs, client } = seed();
  const [r, b] = await client.readTargeting(`urn:li:sponsoredAccount:${ACCOUNT}`, [rich.id, bare.id], "interests");
  expect(r).toEqual({ entity_id: rich.id, field: "interests", items: [item(AI), item(ML)], spec: RICH });
  expect(b).toEqual({ entity_id: bare.id, field: "interests", items: [], spec: BARE });
  // One name lookup for every URN read, Rest.li-encoded.
  expect(apiCalls().filter((x) => x.path === "/rest/adTargetingEntities").map((x) => x.query)).toEqual([
    { q: "urns", urns: `List(${AI.id},${ML.id})`, locale: "(language:en,country:US)" },
  ]);
  await expect(client.readTargeting(ACCOUNT, [theirs.id], "interests")).rejects.toMatchObject({ kind: "not_found" });
  await expect(client.readTargeting(ACCOUNT, [rich.id], "keywords")).rejects.toMatchObject({ kind: "bad_request" });
});

test("resolves trend phrases through the typeahead: an exact interest or skill alone, else LinkedIn's best few", async () => {
  const { client } = seed();
  const m = await client.resolveItems(ACCOUNT, "interests", ["machine learning", "cloud", "quantum knitting", "  "]);
  expect(m.get("machine learning")).toEqual([item(ML)]);
  expect(m.get("cloud")).toEqual([item(CLOUD), item(CLOUD_SEC)]); // member interests first, then skills
  expect(m.get("quantum knitting")).toEqual([]);
  expect(m.get("  ")).toEqual([]);
  expect(apiCalls().map((r) => [r.query.q, r.query.facet])).toEqual(Array(3).fill([["typeahead", F.interests], ["typeahead", F.skills]]).flat());
});

describe("preview, apply and rollback", () => {
  async function planned(changes?: (s: ReturnType<typeof seed>) => TargetingChange[]) {
    const s = seed();
    const prior = await s.client.readTargeting(ACCOUNT, [s.rich.id, s.bare.id], "interests");
    const list = changes?.(s) ?? [change("c1", s.rich.id, "add", CLOUD), change("c2", s.rich.id, "add", PM), change("c3", s.bare.id, "add", AI)];
    server.resetLog();
    return { ...s, prior, changes: list, calls: s.client.calls(ACCOUNT, list, prior) };
  }
  const RICH_AFTER: Criteria = {
    ...RICH, include: { and: [RICH.include!.and![0], { or: { [F.interests]: [AI.id, CLOUD.id], [F.skills]: [ML.id, PM.id] } }, RICH.include!.and![2]] },
  };
  const BARE_AFTER: Criteria = { include: { and: [...BARE.include!.and!, { or: { [F.interests]: [AI.id] } }] } };

  test("one PARTIAL_UPDATE per campaign, versioned, without credentials; the dry run sizes audiences and writes nothing", async () => {
    const { rich, bare, client, calls } = await planned();
    expect(calls.map((c) => [c.method, c.path, c.change_ids])).toEqual([
      ["POST", `adAccounts/${ACCOUNT}/adCampaigns/${rich.id}`, ["c1", "c2"]], ["POST", `adAccounts/${ACCOUNT}/adCampaigns/${bare.id}`, ["c3"]],
    ]);
    expect(calls[0].headers).toEqual({ "Linkedin-Version": "202608", "X-Restli-Protocol-Version": "2.0.0", "X-RestLi-Method": "PARTIAL_UPDATE", "content-type": "application/json" });
    expect(calls.map((c) => c.body)).toEqual([{ patch: { $set: { targetingCriteria: RICH_AFTER } } }, { patch: { $set: { targetingCriteria: BARE_AFTER } } }]);
    expect(JSON.stringify(calls)).not.toContain(TOKEN);

    const verdicts = await client.run(ACCOUNT, calls, { dryRun: true });
    const counts = apiCalls().filter((r) => r.path === "/rest/audienceCounts");
    expect(verdicts.map((v) => [v.change_id, v.ok, v.request_id])).toEqual([["c1", true, counts[0].liUuid], ["c2", true, counts[0].liUuid], ["c3", true, counts[1].liUuid]]);
    expect(counts.map((r) => r.query.q)).toEqual(["targetingCriteriaV2", "targetingCriteriaV2"]);
    expect(server.writes).toEqual([]);
    expect([server.criteriaOf(rich.id), server.criteriaOf(bare.id)]).toEqual([RICH, BARE]);
  });

  test("apply merges into the whole criteria and keeps every other clause; rollback gives back the prior criteria exactly", async () => {
    const { rich, bare, client, calls, changes } = await planned();
    const applied = await client.run(ACCOUNT, calls, { dryRun: false });
    const writes = apiCalls().filter((r) => r.method === "POST");
    expect(applied.map((v) => [v.change_id, v.ok, v.request_id])).toEqual([["c1", true, writes[0].liUuid], ["c2", true, writes[0].liUuid], ["c3", true, writes[1].liUuid]]);
    expect(writes.every((w) => w.headers["x-restli-method"] === "PARTIAL_UPDATE" && w.headers["linkedin-version"] === "202608")).toBe(true);
    expect([server.criteriaOf(rich.id), server.criteriaOf(bare.id)]).toEqual([RICH_AFTER, BARE_AFTER]);
    expect(server.campaign(rich.id)!.dailyBudget).toEqual({ amount: "50.00", currencyCode: "USD" });
    expect(server.budgetWrites).toEqual([]);

    const now = await client.readTargeting(ACCOUNT, [rich.id, bare.id], "interests");
    expect(now.map((t) => t.items.map((i) => i.text))).toEqual([["Artificial Intelligence", "Cloud Computing", "Machine Learning", "Project Management"], ["Artificial Intelligence"]]);
    const undo = changes.map((c) => ({ ...c, id: `undo-${c.id}`, op: "remove" as const }));
    const rolled = await client.run(ACCOUNT, client.calls(ACCOUNT, undo, now), { dryRun: false });
    expect(rolled.every((r) => r.ok)).toBe(true);
    expect([server.criteriaOf(rich.id), server.criteriaOf(bare.id)]).toEqual([RICH, BARE]); // the clause the apply added is gone again
  });

  test("own checks: no location is refused without a call, a tiny audience and an entity LinkedIn refuses fail their campaign only", async () => {
    const s = seed();
    const nowhere = server.addCampaign({ account: ACCOUNT, group: s.g1.id, name: "No geo", targetingCriteria: { include: { and: [{ or: { [F.interests]: [AI.id] } }] } } });
    const prior = await s.client.readTargeting(ACCOUNT, [s.rich.id, s.bare.id, nowhere.id], "interests");
    const calls = s.client.calls(ACCOUNT, [change("c1", nowhere.id, "add", CLOUD), change("c2", s.bare.id, "add", QEC), change("c3", s.rich.id, "add", { id: "urn:li:interest:404", name: "Gone" })], prior);
    server.resetLog();
    const verdicts = await s.client.run(ACCOUNT, calls, { dryRun: true });
    expect(verdicts.map((v) => [v.change_id, v.ok, v.error?.kind, v.error?.detail.providerCode])).toEqual([
      ["c1", false, "bad_request", "own_check"], ["c2", false, "bad_request", "audience_too_small"], ["c3", false, "bad_request", "INVALID_TARGETING_CRITERIA"],
    ]);
    expect(verdicts[0].error!.message).toMatch(/requires a location/);
    expect(verdicts[1].error!.message).toMatch(/300-member minimum/);
    expect(verdicts[2].error!.message).toContain("urn:li:interest:404");
    expect(apiCalls().map((r) => r.path)).toEqual(["/rest/audienceCounts", "/rest/audienceCounts"]); // none for the criteria without a location
    // A real run never sends the criteria without a location either.
    const real = await s.client.run(ACCOUNT, calls.slice(0, 1), { dryRun: false });
    expect([real[0].ok, real[0].error?.detail.providerCode]).toEqual([false, "own_check"]);
    expect(server.writes).toEqual([]);
  });

  test("a campaign LinkedIn refuses fails its changes with LinkedIn's words and request id; the other campaign is written", async () => {
    const { rich, bare, client, calls } = await planned();
    server.lockCampaign(rich.id);
    const applied = await client.run(ACCOUNT, calls, { dryRun: false });
    expect(applied.map((v) => [v.change_id, v.ok])).toEqual([["c1", false], ["c2", false], ["c3", true]]);
    expect(applied[0].error).toMatchObject({ kind: "bad_request", detail: { status: 400, providerCode: "CAMPAIGN_NOT_EDITABLE" } });
    expect(applied[0].error!.message).toMatch(/in review/);
    expect(applied[0].request_id).toBe(apiCalls()[0].liUuid);
    expect([server.criteriaOf(rich.id), server.criteriaOf(bare.id)]).toEqual([RICH, BARE_AFTER]);
  });

  test("calls need the criteria read at preview and interest or skill URNs; run refuses anything but a criteria PARTIAL_UPDATE", async () => {
    const { rich, client, changes, prior, calls } = await planned();
    expect(() => client.calls(ACCOUNT, changes, [])).toThrow(/targetingCriteria as read at preview/);
    expect(() => client.calls(ACCOUNT, [change("x", rich.id, "add", { id: US, name: "United States" })], prior)).toThrow(/member interest or skill URN/);
    const budget = [{ ...calls[0], body: { patch: { $set: { ...(calls[0].body as any).patch.$set, dailyBudget: { amount: "9999", currencyCode: "USD" } } } } }];
    const otherAccount = [{ ...calls[0], path: calls[0].path.replace(ACCOUNT, OTHER) }];
    const noMethod = [{ ...calls[0], headers: { "Linkedin-Version": "202608" } }];
    for (const bad of [budget, otherAccount, noMethod]) await expect(client.run(ACCOUNT, bad, { dryRun: false })).rejects.toMatchObject({ kind: "bad_request" });
    expect(apiCalls()).toEqual([]);
    // Adding what is there and removing what is not change nothing.
    const same = client.calls(ACCOUNT, [change("x", rich.id, "add", AI), change("y", rich.id, "remove", CLOUD)], prior);
    expect((same[0].body as any).patch.$set.targetingCriteria).toEqual(RICH);
  });
});

test("429s without a wait hint, outages, token and version errors map onto the framework's kinds", async () => {
  const { rich, bare, client } = seed();
  const prior = await client.readTargeting(ACCOUNT, [rich.id, bare.id], "interests");
  const calls = client.calls(ACCOUNT, [change("c1", rich.id, "add", CLOUD), change("c2", bare.id, "add", CLOUD)], prior);

  server.failNext("throttle", 1);
  let e = await settle(client.run(ACCOUNT, calls, { dryRun: false })) as ProviderError;
  // LinkedIn says nothing about when to come back: no retryAfterMs, so the framework's retry schedule applies.
  expect([e.kind, e.detail.status, e.detail.providerCode, e.detail.retryAfterMs]).toEqual(["rate_limited", 429, "TOO_MANY_REQUESTS", undefined]);
  expect(e.message).toContain(server.requests.at(-1)!.liUuid);
  server.failNext("throttle", 1);
  expect(await settle(client.run(ACCOUNT, calls, { dryRun: true }))).toMatchObject({ kind: "rate_limited" });
  server.failNext("unavailable", 1);
  expect(await settle(client.listEntities(ACCOUNT, { limit: 5 }))).toMatchObject({ kind: "unavailable", detail: { status: 503 } });
  expect([server.criteriaOf(rich.id), server.criteriaOf(bare.id)]).toEqual([RICH, BARE]);

  // A throttle after the first campaign was written: the run reports that write and fails the rest, retryable.
  const realFetch = ProviderHttp.prototype.fetch;
  let armed = false;
  ProviderHttp.prototype.fetch = async function (this: ProviderHttp, ...args: Parameters<ProviderHttp["fetch"]>) {
    const res = await realFetch.apply(this, args);
    if (!armed && server.writes.length === 1) { armed = true; server.failNext("throttle", 1); }
    return res;
  };
  let partial;
  try { partial = await client.run(ACCOUNT, calls, { dryRun: false }); } finally { ProviderHttp.prototype.fetch = realFetch; }
  expect(partial.map((r) => [r.change_id, r.ok, r.error?.kind, r.error?.retryable])).toEqual([["c1", true, undefined, undefined], ["c2", false, "rate_limited", true]]);
  expect(server.criteriaOf(bare.id)).toEqual(BARE);

  server.addToken("AQviewer", { accounts: { [ACCOUNT]: "VIEWER" } });
  const viewer = linkedinAds.client({ baseUrl: server.url, accessToken: "AQviewer" });
  // A VIEWER's 403 is a permission refusal of that campaign's write, not a reason to mark the connection needs_reauth.
  const denied = await viewer.run(ACCOUNT, calls.slice(1), { dryRun: false });
  expect(denied.map((r) => [r.change_id, r.ok, r.error?.kind, r.error?.detail.status, r.error?.detail.providerCode])).toEqual([["c2", false, "bad_request", 403, "ACCESS_DENIED"]]);
  expect(denied[0].error!.message).toMatch(/CAMPAIGN_MANAGER/);
  server.expireToken(TOKEN);
  await expect(client.listEntities(ACCOUNT, { limit: 10 })).rejects.toMatchObject({ kind: "unauthorized", detail: { status: 401, providerCode: "EXPIRED_ACCESS_TOKEN" } });
  expect(() => linkedinAds.client({ baseUrl: server.url, accessToken: TOKEN, env: { LINKEDIN_ADS_API_VERSION: "2026-10" } })).toThrow(/LINKEDIN_ADS_API_VERSION must look like 202608/);
  server.addToken("AQfresh", { accounts: { [ACCOUNT]: "CAMPAIGN_MANAGER" } });
  const old = linkedinAds.client({ baseUrl: server.url, accessToken: "AQfresh", env: { LINKEDIN_ADS_API_VERSION: "202501" } });
  const sunset = await settle(old.listEntities(ACCOUNT, { limit: 1 })) as ProviderError;
  expect([sunset.kind, sunset.detail.status, sunset.detail.providerCode]).toEqual(["bad_request", 426, "NONEXISTENT_VERSION"]);
  expect(sunset.message).toContain("LINKEDIN_ADS_API_VERSION");
});

describe("OAuth", () => {
  const settings = (): OAuthClientSettings => ({
    clientId: server.app.clientId, clientSecret: server.app.clientSecret, baseUrl: server.url,
    authorizationUrl: "https://www.linkedin.com/oauth/v2/authorization", tokenUrl: `${server.url}/oauth/v2/accessToken`,
  });
  const manifest = linkedinAds.manifest as OAuthManifest;

  test("the consent URL asks for r_ads, rw_ads and r_ads_reporting space-separated, without PKCE", async () => {
    const client = new OAuth2Client(manifest, settings());
    expect(client.newCodeVerifier()).toBeUndefined();
    const url = new URL(await client.authorizationUrl({ redirectUri: "https://app.example/cb", state: "st" }));
    expect([url.origin + url.pathname, url.searchParams.get("scope"), url.searchParams.has("code_challenge")]).toEqual(["https://www.linkedin.com/oauth/v2/authorization", "r_ads rw_ads r_ads_reporting", false]);
  });

  test("the standard exchange gives a 60-day token and a refresh token; refresh keeps it until its 365 days run out", async () => {
    seed();
    server.addCode("code-1", { redirectUri: "https://app.example/cb", accounts: { [ACCOUNT]: "CAMPAIGN_MANAGER" } });
    const oauth = new OAuth2Client(manifest, settings());
    const before = Date.now();
    const tokens = await oauth.exchangeCode({ code: "code-1", redirectUri: "https://app.example/cb" });
    const days = (tokens.expiresAt!.getTime() - before) / 86_400_000;
    expect(days).toBeGreaterThan(59.9);
    expect(days).toBeLessThan(60.1);
    expect([typeof tokens.refreshToken, tokens.scopes]).toEqual(["string", ["r_ads", "rw_ads"]]);
    // The client secret went in the form body (LinkedIn takes no Basic auth), never into what was recorded.
    expect(server.requests.filter((r) => r.path === "/oauth/v2/accessToken").map((r) => [r.body?.client_id, r.headers.authorization])).toEqual([[server.app.clientId, undefined]]);
    const api = linkedinAds.client({ baseUrl: server.url, accessToken: tokens.accessToken });
    expect((await api.listEntities(ACCOUNT, { limit: 5 })).data.length).toBeGreaterThan(0);

    const next = await oauth.refresh(tokens.refreshToken!);
    expect(next.accessToken).not.toBe(tokens.accessToken);
    expect(next.refreshToken).toBe(tokens.refreshToken);
    expect((await linkedinAds.client({ baseUrl: server.url, accessToken: next.accessToken }).listEntities(ACCOUNT, { limit: 5 })).data.length).toBeGreaterThan(0);
    expect(server.counts).toMatchObject({ authorization_code: 1, refresh_token: 1 });

    // After 365 days from first consent the refresh token is refused: the connection needs the user again.
    server.expireRefreshToken(tokens.refreshToken!);
    await expect(oauth.refresh(tokens.refreshToken!)).rejects.toMatchObject({ kind: "unauthorized" });
    await expect(oauth.exchangeCode({ code: "code-1", redirectUri: "https://app.example/cb" })).rejects.toMatchObject({ kind: "bad_request" }); // used
    const wrong = new OAuth2Client(manifest, { ...settings(), clientSecret: "nope" });
    server.addCode("code-2", { redirectUri: "https://app.example/cb", accounts: {} });
    await expect(wrong.exchangeCode({ code: "code-2", redirectUri: "https://app.example/cb" })).rejects.toMatchObject({ kind: "unauthorized" });
  });
});

test("a 403 is needs-reauthorization only when LinkedIn's body names a token problem; role, scope and version 403s are refusals", () => {
  const kind = (body: unknown) => callError(403, body, "read", null).kind;
  expect(kind({ status: 403, serviceErrorCode: 65600, code: "INVALID_ACCESS_TOKEN", message: "Invalid access token" })).toBe("unauthorized");
  expect(kind({ status: 403, serviceErrorCode: 65602, message: "The token used in the request has been revoked by the user" })).toBe("unauthorized");
  expect(kind({ status: 403, code: "EXPIRED_ACCESS_TOKEN", message: "The token used in the request has expired" })).toBe("unauthorized");
  expect(kind({ status: 403, serviceErrorCode: 100, code: "ACCESS_DENIED", message: "Not enough permissions to access: partialUpdate /adAccounts/1" })).toBe("bad_request");
  expect(kind({ status: 403, serviceErrorCode: 100, code: "VERSION_MISSING", message: "A version must be present" })).toBe("bad_request");
  expect(kind(null)).toBe("bad_request");
  expect(callError(401, null, "read", null).kind).toBe("unauthorized");
});

test("the default Linkedin-Version is one LinkedIn published: a pin to a month it skipped or has not released is a 426", async () => {
  expect(PUBLISHED_VERSIONS).toContain(linkedinAds.manifest.apiVersion!.default);
  const { client } = seed();
  await expect(client.listEntities(ACCOUNT, { limit: 1 })).resolves.toBeDefined();
  for (const v of ["202609", "202610"]) {
    const unpublished = linkedinAds.client({ baseUrl: server.url, accessToken: TOKEN, env: { LINKEDIN_ADS_API_VERSION: v } });
    await expect(unpublished.listEntities(ACCOUNT, { limit: 1 })).rejects.toMatchObject({ kind: "bad_request", detail: { status: 426, providerCode: "NONEXISTENT_VERSION" } });
  }
});
