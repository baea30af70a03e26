import { startGateway, type TestGateway } from "../helpers/gateway.ts";
import { startGoogleAdsServer, type GoogleAdsServer } from "../peers/google-ads-server.ts";
import { googleConnected } from "./kit.ts";

// A mapping holds each entity once (its key: account, provider, entity id). A PUT listing an id twice is the
// client's mistake: 422 naming the repeat, checked with the body (before the provider or the database), nothing
// saved, never a 409 telling the client to retry what can never succeed.

const BASE = "/api/integrations/ads/google_ads";
let google: GoogleAdsServer;
let gw: TestGateway;

beforeAll(async () => {
  google = await startGoogleAdsServer();
  gw = await startGateway({ OUTBOUND_ALLOWLIST: "127.0.0.1", GOOGLE_ADS_CLIENT_ID: "cid", GOOGLE_ADS_CLIENT_SECRET: "secret", GOOGLE_ADS_API_URL: google.url });
});
afterAll(async () => { await gw.close(); await google.close(); });

async function mapped() {
  const a = await googleConnected(gw, google);
  const campaign = google.addCampaign({ customerId: a.customer.id, name: "Search" });
  const groups = [google.addAdGroup({ campaignId: campaign.id, name: "AI" }), google.addAdGroup({ campaignId: campaign.id, name: "Chips" })];
  expect((await gw.http.put(`${BASE}/selection`).set(a.auth).send({ trend_category: "tech", strict_safety: true })).status).toBe(200);
  const saved = { entities: [{ id: groups[0].id, field: "keywords" }] };
  expect((await gw.http.put(`${BASE}/mappings`).set(a.auth).send(saved)).status).toBe(200);
  return { ...a, groups, saved };
}

test.each([
  ["the same entry twice", (g: string[]) => [{ id: g[0], field: "keywords" }, { id: g[1], field: "keywords" }, { id: g[0], field: "keywords" }], "entities.2.id"],
  ["the same id with another name", (g: string[]) => [{ id: g[1], name: "a", field: "keywords" }, { id: g[1], name: "b", field: "keywords" }], "entities.1.id"],
  ["the same id once padded (ids are trimmed)", (g: string[]) => [{ id: g[0], field: "keywords" }, { id: ` ${g[0]} `, field: "keywords" }], "entities.1.id"],
])("a PUT listing %s answers 422 duplicate_entity naming the repeat, and saves nothing", async (_, entities, path) => {
  const a = await mapped();
  const calls = google.requests.length;
  const res = await gw.http.put(`${BASE}/mappings`).set(a.auth).send({ entities: entities(a.groups.map((g) => g.id)) });
  expect([res.status, res.body.code]).toEqual([422, "validation_failed"]);
  expect(res.body.errors.map((e: { path: string; code: string }) => [e.path, e.code])).toEqual([[path, "duplicate_entity"]]);
  expect(google.requests.length).toBe(calls); // refused with the body, before asking the provider
  expect((await gw.http.get(`${BASE}/mappings`).set(a.auth)).body).toEqual({ entities: [{ ...a.saved.entities[0], name: "AI" }] }); // named as Google lists it
});

test("every repeat is named, and distinct ids are still saved", async () => {
  const a = await mapped();
  const [g0, g1] = a.groups.map((g) => g.id);
  const res = await gw.http.put(`${BASE}/mappings`).set(a.auth).send({ entities: [g0, g1, g0, g1, g0].map((id) => ({ id, field: "keywords" })) });
  expect(res.status).toBe(422);
  expect(res.body.errors.map((e: { path: string }) => e.path)).toEqual(["entities.2.id", "entities.3.id", "entities.4.id"]);
  const both = { entities: [{ id: g0, field: "keywords" }, { id: g1, field: "keywords" }] };
  expect((await gw.http.put(`${BASE}/mappings`).set(a.auth).send(both)).status).toBe(200);
  expect((await gw.http.get(`${BASE}/mappings`).set(a.auth)).body.entities).toEqual(expect.arrayContaining([{ ...both.entities[0], name: "AI" }, { ...both.entities[1], name: "Chips" }]));
});
