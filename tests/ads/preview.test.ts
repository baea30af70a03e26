import { startGateway, type TestGateway } from "../helpers/gateway.ts";
import { startGoogleAdsServer, type GoogleAdsServer } from "../peers/google-ads-server.ts";
import { addTrend, googleConnected } from "./kit.ts";

// Preview through the gateway against the local Google Ads API: the providers list, the
// selection, the account's entities, the mapping, and a preview that reads the targets, resolves the category's
// rising trends into keywords, refuses what the guardrails refuse (with reasons), runs Google's validateOnly and
// stores the plan with its exact calls; nothing is written at Google.

const BASE = "/api/integrations/ads/google_ads";
let google: GoogleAdsServer;
let gw: TestGateway;

beforeAll(async () => {
  google = await startGoogleAdsServer();
  gw = await startGateway({ OUTBOUND_ALLOWLIST: "127.0.0.1", GOOGLE_ADS_CLIENT_ID: "cid", GOOGLE_ADS_CLIENT_SECRET: "secret", GOOGLE_ADS_API_URL: google.url });
});
afterAll(async () => { await gw.close(); await google.close(); });

const connected = () => googleConnected(gw, google);
const trend = (accountId: string, name: string, over: Record<string, unknown> = {}) => addTrend(gw, accountId, name, over);

test("the providers list shows Google Ads with its capabilities and whether this account is connected", async () => {
  const a = await gw.account();
  const before = await gw.http.get("/api/integrations/ads/providers").set(a.auth);
  expect(before.status).toBe(200);
  const g = before.body.data.find((p: { id: string }) => p.id === "google_ads");
  expect(g).toMatchObject({ display_name: "Google Ads", connected: false, capabilities: { dry_run: true, targeting: ["keywords"] }, base_path: BASE });
  const b = await connected();
  const after = await gw.http.get("/api/integrations/ads/providers").set(b.auth);
  expect(after.body.data.find((p: { id: string }) => p.id === "google_ads").connected).toBe(true);
});

test("the providers list has the seven ads provider kinds; only Google and Meta claim a dry run", async () => {
  const a = await gw.account();
  const list = (await gw.http.get("/api/integrations/ads/providers").set(a.auth)).body.data as { id: string; capabilities: { dry_run: boolean; targeting: string[] } }[];
  expect(list.map((p) => p.id).sort()).toEqual(["google_ads", "linkedin_ads", "meta_ads", "microsoft_ads", "pinterest_ads", "snap_ads", "tiktok_ads"]);
  expect(list.filter((p) => p.capabilities.dry_run).map((p) => p.id).sort()).toEqual(["google_ads", "meta_ads"]);
  for (const p of list) expect(p.capabilities.targeting.length).toBeGreaterThan(0);
});

test("selection, entities, mapping and a preview that plans, refuses with reasons, dry-runs and writes nothing", async () => {
  const a = await connected();
  const campaign = google.addCampaign({ customerId: a.customer.id, name: "Search" });
  const g1 = google.addAdGroup({ campaignId: campaign.id, name: "AI" });
  const g2 = google.addAdGroup({ campaignId: campaign.id, name: "Gadgets" });
  google.addKeyword({ adGroupId: g1.id, text: "ai agents", matchType: "PHRASE" });
  await trend(a.accountId, "AI agents", { severity: "critical" });
  await trend(a.accountId, "Robot war", {});                       // blocklisted
  await trend(a.accountId, "Smart glasses", { sentiment: -0.4 });   // negative
  await trend(a.accountId, "Casino night", {});                     // Google refuses it in the dry run
  await trend(a.accountId, "Old fad", { stage: "cooling" });        // not rising: not considered
  google.refuseText("casino night");

  expect((await gw.http.post(`${BASE}/preview`).set(a.auth)).status).toBe(409); // nothing selected yet
  const sel = await gw.http.put(`${BASE}/selection`).set(a.auth).send({ trend_category: "tech", account_id: a.customer.id });
  expect(sel.status).toBe(200);
  expect(sel.body.strict_safety).toBe(true); // on unless turned off
  expect((await gw.http.put(`${BASE}/selection`).set(a.auth).send({ trend_category: "Tech!", account_id: "1" })).status).toBe(422);

  const ents = await gw.http.get(`${BASE}/entities`).set(a.auth);
  expect(ents.status).toBe(200);
  const groups = ents.body.data.length ? ents.body.data : [];
  let cursor = ents.body.next_cursor;
  while (cursor) { const p = await gw.http.get(`${BASE}/entities`).query({ cursor }).set(a.auth); groups.push(...p.body.data); cursor = p.body.next_cursor; }
  expect(groups.filter((e: { level: string }) => e.level === "ad_group").map((e: { id: string }) => e.id).sort()).toEqual([g1.id, g2.id].sort());

  expect((await gw.http.post(`${BASE}/preview`).set(a.auth)).status).toBe(409); // nothing mapped yet
  expect((await gw.http.put(`${BASE}/mappings`).set(a.auth).send({ entities: [{ id: g1.id, field: "interests" }] })).status).toBe(422);
  expect((await gw.http.put(`${BASE}/mappings`).set(a.auth).send({ entities: [{ id: g1.id, name: "AI", field: "keywords" }, { id: g2.id, field: "keywords" }] })).status).toBe(200);

  const mutatesBefore = google.requests.filter((r) => r.path.endsWith(":mutate")).length;
  const res = await gw.http.post(`${BASE}/preview`).set(a.auth);
  expect(res.status).toBe(201);
  const plan = res.body;
  const added = (entity: string) => plan.changes.filter((c: { entity_id: string }) => c.entity_id === entity).map((c: { item: { text: string } }) => c.item.text).sort();
  // The dry run refused "casino night" for both groups: those changes left the plan, with Google's reason.
  expect(added(g1.id)).toEqual([]); // g1 already has "ai agents"
  expect(added(g2.id)).toEqual(["ai agents"]);
  expect(plan.refused.map((r: { item: string; rule: string }) => [r.item, r.rule]).sort()).toEqual([
    ["casino night", "dry_run_failed"], ["casino night", "dry_run_failed"],
    ["robot war", "blocklisted_topic"], ["robot war", "blocklisted_topic"], ["smart glasses", "negative_sentiment"], ["smart glasses", "negative_sentiment"],
  ]);
  expect(plan.refused.find((r: { rule: string }) => r.rule === "dry_run_failed").reason).toMatch(/Google Ads's dry run refused it: .*policyFindingError/);
  expect(plan.diff.find((d: { entity_id: string }) => d.entity_id === g1.id)).toMatchObject({ before: ["ai agents"], after: ["ai agents"], changes: [] });
  expect(plan.diff.find((d: { entity_id: string }) => d.entity_id === g2.id)).toMatchObject({ before: [], after: ["ai agents"] });
  expect(plan.dry_run.ran).toBe(true);
  expect(plan.dry_run.passed).toBe(false); // the verdict as Google gave it, per change
  expect(plan.dry_run.results.filter((r: { ok: boolean }) => !r.ok)).toHaveLength(2);
  expect(plan.calls).toHaveLength(1);
  expect(plan.calls[0]).toMatchObject({ method: "POST", path: `customers/${a.customer.id}/adGroupCriteria:mutate` });
  expect(JSON.stringify(plan.calls)).not.toContain(`tok-${a.accountId}`); // no credentials in a plan
  expect(plan.prior_state_hash).toMatch(/^sha256:/);
  expect(Date.parse(plan.expires_at) - Date.parse(plan.created_at)).toBe(900_000);

  // The dry run was validateOnly: Google's state is unchanged.
  const mutates = google.requests.filter((r) => r.path.endsWith(":mutate")).slice(mutatesBefore);
  expect(mutates.map((r) => r.body.validateOnly)).toEqual([true]);
  expect(google.keywordsOf(g2.id)).toEqual([]);

  const got = await gw.http.get(`${BASE}/plans/${plan.id}`).set(a.auth);
  expect(got.body).toEqual(plan);
  const other = await gw.account();
  expect((await gw.http.get(`${BASE}/plans/${plan.id}`).set(other.auth)).status).toBe(404);
});
