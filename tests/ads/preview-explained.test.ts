import { replaceAdsMappings, saveAuthorizedConnection } from "@trendgate/db";
import { sealTokens } from "../../packages/connections/src/credentials.ts";
import { startGateway, type TestGateway } from "../helpers/gateway.ts";
import { startGoogleAdsServer, type GoogleAdsServer } from "../peers/google-ads-server.ts";
import { addTrend, googleConnected } from "./kit.ts";
import { metaAdsPeer } from "./scenarios/meta-ads-peer.ts";

// A preview says what is missing or why it plans nothing (issue 47): nothing mapped is its own 409 (not
// `not_connected`), a plan without changes carries empty_reason and empty_detail (for interests: the trend terms
// searched and where), and the diff names each entity as the provider lists it, even when the mapping left the
// name out.

const GOOGLE = "/api/integrations/ads/google_ads";
const META = "/api/integrations/ads/meta_ads";
let google: GoogleAdsServer;
let meta: { env: Record<string, string>; close(): Promise<void> };
let gw: TestGateway;

beforeAll(async () => {
  google = await startGoogleAdsServer();
  meta = await metaAdsPeer.start();
  gw = await startGateway({ ...meta.env, OUTBOUND_ALLOWLIST: "127.0.0.1", GOOGLE_ADS_CLIENT_ID: "cid", GOOGLE_ADS_CLIENT_SECRET: "secret", GOOGLE_ADS_API_URL: google.url });
});
afterAll(async () => { await gw.close(); await google.close(); await meta.close(); });

/** A Google account with the selection saved and one Search campaign. */
async function googleSelected() {
  const a = await googleConnected(gw, google);
  expect((await gw.http.put(`${GOOGLE}/selection`).set(a.auth).send({ trend_category: "tech", account_id: a.customer.id })).status).toBe(200);
  return { ...a, campaign: google.addCampaign({ customerId: a.customer.id, name: "Search" }) };
}

test("connected and selected with nothing mapped: 409 nothing_mapped saying how to map, not not_connected", async () => {
  const a = await googleSelected();
  await addTrend(gw, a.accountId, "AI agents");
  const res = await gw.http.post(`${GOOGLE}/preview`).set(a.auth);
  expect([res.status, res.body.code]).toEqual([409, "nothing_mapped"]);
  expect(res.body.title).toBe("Nothing is mapped for this provider");
  expect(res.body.detail).toMatch(/PUT …\/mappings naming the entities.*GET …\/entities lists them/);
});

test("the diff names each entity as the provider lists it, mapped with or without a name", async () => {
  const a = await googleSelected();
  const trail = google.addAdGroup({ campaignId: a.campaign.id, name: "Trail running" });
  const road = google.addAdGroup({ campaignId: a.campaign.id, name: "Road running" });
  await addTrend(gw, a.accountId, "Carbon plates");

  const put = await gw.http.put(`${GOOGLE}/mappings`).set(a.auth).send({ entities: [{ id: trail.id, field: "keywords" }] });
  expect([put.status, put.body]).toEqual([200, { entities: [{ id: trail.id, name: "Trail running", field: "keywords" }] }]);
  expect((await gw.http.get(`${GOOGLE}/mappings`).set(a.auth)).body.entities).toEqual([{ id: trail.id, name: "Trail running", field: "keywords" }]);
  const plan = (await gw.http.post(`${GOOGLE}/preview`).set(a.auth)).body;
  expect(plan.diff.map((d: { entity_id: string; entity_name: string }) => [d.entity_id, d.entity_name])).toEqual([[trail.id, "Trail running"]]);

  // A mapping stored without a name (as mappings were saved before names were kept): the preview asks the listing.
  await replaceAdsMappings(gw.deps.db, a.accountId, "google_ads", [{ id: trail.id, field: "keywords" }, { id: road.id, name: "Roads", field: "keywords" }]);
  const again = (await gw.http.post(`${GOOGLE}/preview`).set(a.auth)).body;
  expect(again.diff.map((d: { entity_id: string; entity_name: string }) => [d.entity_id, d.entity_name]).sort())
    .toEqual([[road.id, "Roads"], [trail.id, "Trail running"]].sort());
});

test("Google: no rising trend, then everything already targeted: each plan says why it is empty", async () => {
  const a = await googleSelected();
  const g = google.addAdGroup({ campaignId: a.campaign.id, name: "AI" });
  google.addKeyword({ adGroupId: g.id, text: "ai agents", matchType: "PHRASE" });
  expect((await gw.http.put(`${GOOGLE}/mappings`).set(a.auth).send({ entities: [{ id: g.id, field: "keywords" }] })).status).toBe(200);

  const none = (await gw.http.post(`${GOOGLE}/preview`).set(a.auth)).body;
  expect([none.changes, none.empty_reason, none.empty_detail]).toEqual([[], "no_rising_trends", 'no trend of category "tech" is emerging, rising or peaking']);

  await addTrend(gw, a.accountId, "AI agents");
  const have = (await gw.http.post(`${GOOGLE}/preview`).set(a.auth)).body;
  expect([have.changes, have.empty_reason]).toEqual([[], "already_targeted"]);
  expect(have.empty_detail).toBe(`"AI" (${g.id}) already targets every keyword the trends resolve to: "ai agents"`);
  expect(have.diff[0]).toMatchObject({ entity_name: "AI", empty_reason: "already_targeted" });

  await addTrend(gw, a.accountId, "Robot vacuums");
  const some = (await gw.http.post(`${GOOGLE}/preview`).set(a.auth)).body;
  expect(some.changes.length).toBe(1);
  expect([some.empty_reason, some.empty_detail, some.diff[0].empty_reason]).toEqual([null, null, null]);
});

test("Meta: a trend whose term matches no interest previews no_interest_matched, naming the term and Meta's interest search", async () => {
  const seeded = await metaAdsPeer.seedAccount([]); // no interest of the trend's name in the catalogue
  const a = await gw.account();
  await gw.deps.db.$transaction((tx) => saveAuthorizedConnection(tx, {
    accountId: a.accountId, provider: "meta_ads", kind: "ads", credentialsSealed: sealTokens(gw.deps.secrets, { accessToken: seeded.token, tokenType: "bearer" }),
    tokenExpiresAt: new Date(Date.now() + 3600_000), scopes: seeded.scopes ?? [], externalAccount: {},
  }));
  await addTrend(gw, a.accountId, "Quantum knitting");
  expect((await gw.http.put(`${META}/selection`).set(a.auth).send({ trend_category: "tech", account_id: seeded.adAccountId })).status).toBe(200);
  expect((await gw.http.put(`${META}/mappings`).set(a.auth).send({ entities: seeded.entities })).status).toBe(200);

  const res = await gw.http.post(`${META}/preview`).set(a.auth);
  expect(res.status).toBe(201);
  const plan = res.body;
  expect([plan.changes, plan.refused, plan.empty_reason]).toEqual([[], [], "no_interest_matched"]);
  expect(plan.empty_detail).toBe('no interest matched the trend terms searched in Meta\'s interest search (/search?type=adinterest): "Quantum knitting"');
  // Per entity too, each named as Meta lists the ad set.
  expect(plan.diff.map((d: { entity_name: string; empty_reason: string }) => [d.entity_name, d.empty_reason]))
    .toEqual([["Runners", "no_interest_matched"], ["Everyone", "no_interest_matched"]]);
  expect((await gw.http.get(`${META}/plans/${plan.id}`).set(a.auth)).body).toEqual(plan);
});
