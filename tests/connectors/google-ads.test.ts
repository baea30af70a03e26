import { ProviderError } from "@trendgate/connector-core";
import { googleAds, type TargetingChange } from "@trendgate/connector-ads";
import { startGoogleAdsServer, type GoogleAdsServer } from "../peers/google-ads-server.ts";

// The vendor stand-ins listen on loopback; provider calls reach private addresses only where OUTBOUND_ALLOWLIST allows.
process.env.OUTBOUND_ALLOWLIST = "127.0.0.1";

// The Google Ads connector's client against the local Google Ads API: entities through GAQL paging,
// keyword targeting read as ad-group criteria, the plan's calls as one adGroupCriteria:mutate with partialFailure,
// the dry run with validateOnly changing nothing, per-operation failures mapped to their changes, rollback by
// resource name, and quota, throttling and auth errors onto the framework's kinds.

let server: GoogleAdsServer;
beforeEach(async () => { server = await startGoogleAdsServer(); });
afterEach(() => server.close());

function seed() {
  const customer = server.addCustomer();
  server.addToken("tok", { customers: [customer.id] });
  const campaign = server.addCampaign({ customerId: customer.id, name: "Search: gadgets" });
  const g1 = server.addAdGroup({ campaignId: campaign.id, name: "AI" });
  const g2 = server.addAdGroup({ campaignId: campaign.id, name: "Phones" });
  server.addKeyword({ adGroupId: g1.id, text: "machine learning", matchType: "PHRASE" });
  server.addKeyword({ adGroupId: g1.id, text: "cheap", negative: true });
  // What Google lists besides: a removed ad group, a removed Search campaign, campaigns of other channels.
  server.addAdGroup({ campaignId: campaign.id, name: "Old", status: "REMOVED" });
  const removed = server.addCampaign({ customerId: customer.id, name: "Search: 2025", status: "REMOVED" });
  server.addAdGroup({ campaignId: removed.id, name: "Last year" });
  const pmax = server.addCampaign({ customerId: customer.id, name: "PMax", advertisingChannelType: "PERFORMANCE_MAX" });
  server.addAdGroup({ campaignId: pmax.id, name: "Asset group stand-in" });
  server.addCampaign({ customerId: customer.id, name: "Display", advertisingChannelType: "DISPLAY", status: "PAUSED" });
  return { customer, campaign, g1, g2, client: googleAds.client({ baseUrl: server.url, accessToken: "tok" }) };
}

/** The positive keywords of an ad group on the server (what targeting is; negatives are left alone). */
const positive = (adGroupId: string) => server.keywordsOf(adGroupId).filter((k) => !k.negative).map((k) => k.text).sort();

const add = (id: string, entity: string, text: string): TargetingChange =>
  ({ id, entity_id: entity, field: "keywords", op: "add", item: { key: `${text}|PHRASE`, text, match_type: "PHRASE" }, trend_id: "trd_1" });

test("lists live Search campaigns then their live ad groups through Google's pages (REMOVED and other channels filtered in GAQL); reads keywords without negatives", async () => {
  const { customer, campaign, g1, g2, client } = seed();
  server.pageSize = 1;
  const seen = [];
  let cursor: string | undefined;
  do {
    const page = await client.listEntities(customer.id, { cursor, limit: 50 });
    seen.push(...page.data);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  expect(seen.map((e) => [e.level, e.id, e.parent_id])).toEqual([["campaign", campaign.id, null], ["ad_group", g1.id, campaign.id], ["ad_group", g2.id, campaign.id]]);
  expect(seen[1].targeting).toEqual(["keywords"]);
  const queries = server.requests.filter((r) => r.path.endsWith("googleAds:search")).map((r) => String(r.body.query));
  expect(queries.every((q) => q.includes("campaign.status != 'REMOVED' AND campaign.advertising_channel_type = 'SEARCH'"))).toBe(true);
  const [t1, t2] = await client.readTargeting(customer.id, [g1.id, g2.id], "keywords");
  expect(t1.items.map((i) => [i.text, i.match_type])).toEqual([["machine learning", "PHRASE"]]);
  expect(t1.items[0].resource).toMatch(/^customers\/\d+\/adGroupCriteria\/\d+~\d+$/);
  expect(t2.items).toEqual([]);
});

test("trend phrases become phrase-match keywords Google accepts", async () => {
  const { customer, client } = seed();
  const m = await client.resolveItems(customer.id, "keywords", ["AI Agents!!", "  Über   cool  gadgets  "]);
  expect(m.get("AI Agents!!")!.map((i) => i.text)).toEqual(["ai agents"]);
  expect(m.get("  Über   cool  gadgets  ")![0]).toMatchObject({ text: "über cool gadgets", match_type: "PHRASE" });
});

test("dry run changes nothing and names the refused change; apply adds the others; rollback removes what was added", async () => {
  const { customer, g1, g2, client } = seed();
  server.refuseText("casino night");
  const changes = [add("c1", g1.id, "ai agents"), add("c2", g2.id, "casino night"), add("c3", g2.id, "foldable phones")];
  const calls = client.calls(customer.id, changes, []);
  expect(calls).toHaveLength(1);
  expect(calls[0].headers).not.toHaveProperty("authorization"); // executor plans carry no credentials

  const verdicts = await client.run(customer.id, calls, { dryRun: true });
  expect(verdicts.map((v) => [v.change_id, v.ok])).toEqual([["c1", true], ["c2", false], ["c3", true]]);
  expect(verdicts[1].error!.message).toMatch(/policyFindingError/);
  expect(server.keywordsOf(g2.id)).toEqual([]);
  expect(server.requests.at(-1)!.body.validateOnly).toBe(true);

  const applied = await client.run(customer.id, calls, { dryRun: false });
  expect(applied.map((v) => [v.change_id, v.ok])).toEqual([["c1", true], ["c2", false], ["c3", true]]);
  expect(applied[0].request_id).toBeTruthy();
  expect(positive(g1.id)).toEqual(["ai agents", "machine learning"]);
  expect(server.keywordsOf(g2.id).map((k) => k.text)).toEqual(["foldable phones"]);

  const undo: TargetingChange[] = [applied[0], applied[2]].map((r) => {
    const c = changes.find((x) => x.id === r.change_id)!;
    return { ...c, id: `undo-${c.id}`, op: "remove", item: { ...c.item, resource: r.resource } };
  });
  const rolled = await client.run(customer.id, client.calls(customer.id, undo, []), { dryRun: false });
  expect(rolled.every((r) => r.ok)).toBe(true);
  expect(positive(g1.id)).toEqual(["machine learning"]);
  expect(positive(g2.id)).toEqual([]);
});

test("quota, throttling, server and credential failures map onto the framework's kinds", async () => {
  const { customer, g1, client } = seed();
  const calls = client.calls(customer.id, [add("c1", g1.id, "ai agents")], []);
  const kindOf = async () => { try { await client.run(customer.id, calls, { dryRun: false }); return "ok"; } catch (e) { return e as ProviderError; } };

  server.failNext("RESOURCE_TEMPORARILY_EXHAUSTED");
  let e = await kindOf() as ProviderError;
  expect([e.kind, e.detail.retryAfterMs]).toEqual(["rate_limited", 5000]);
  server.failNext("RESOURCE_EXHAUSTED");
  e = await kindOf() as ProviderError;
  expect(e.kind).toBe("quota_exhausted");
  server.failNext("INTERNAL");
  expect(((await kindOf()) as ProviderError).kind).toBe("unavailable");
  expect(positive(g1.id)).toEqual(["machine learning"]); // nothing applied by failed calls

  const stranger = googleAds.client({ baseUrl: server.url, accessToken: "revoked" });
  await expect(stranger.listEntities(customer.id, { limit: 10 })).rejects.toMatchObject({ kind: "unauthorized" });
  expect(() => googleAds.client({ baseUrl: server.url, accessToken: "tok", env: { GOOGLE_ADS_API_VERSION: "25" } })).toThrow(/v25/);
});
