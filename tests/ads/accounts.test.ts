import { saveAuthorizedConnection } from "@trendgate/db";
import { sealTokens } from "../../packages/connections/src/credentials.ts";
import { startGateway, type TestGateway } from "../helpers/gateway.ts";
import { startGoogleAdsServer, type GoogleAdsServer } from "../peers/google-ads-server.ts";
import { startMetaAdsServer, type MetaAdsServer } from "../peers/meta-ads-server.ts";
import { addTrend, googleConnected } from "./kit.ts";

// The ad account of a selection, the saved settings read back, mappings checked at the provider, and whether the
// server can connect each provider, through the gateway against the local Google Ads and Meta stand-ins:
// - a selection may leave account_id out: the connection's only ad account is used; with several, the routes that
//   need one answer 422 ad_account_required naming them (saving the selection still succeeds);
// - a mapped entity the ad account does not have (or one that cannot take the field) is refused when saving;
// - the providers list says `configured` exactly when GET …/auth can start (else its 501).

const BASE = "/api/integrations/ads/google_ads";
let google: GoogleAdsServer;
let meta: MetaAdsServer;
let gw: TestGateway;

beforeAll(async () => {
  [google, meta] = await Promise.all([startGoogleAdsServer(), startMetaAdsServer()]);
  gw = await startGateway({
    OUTBOUND_ALLOWLIST: "127.0.0.1",
    GOOGLE_ADS_CLIENT_ID: "cid", GOOGLE_ADS_CLIENT_SECRET: "secret", GOOGLE_ADS_API_URL: google.url, META_ADS_API_URL: meta.url,
    META_ADS_CLIENT_ID: "", META_ADS_CLIENT_SECRET: "",
  });
});
afterAll(async () => { await gw.close(); await google.close(); await meta.close(); });

/** An account connected to Google whose token reaches `n` customers, each with one campaign and one ad group. */
async function reaching(n: number) {
  const a = await googleConnected(gw, google);
  const customers = [a.customer, ...Array.from({ length: n - 1 }, () => google.addCustomer())];
  google.addToken(a.token, { customers: customers.map((c) => c.id) });
  const groups = customers.map((c) => {
    const campaign = google.addCampaign({ customerId: c.id, name: "Search" });
    return { campaign, group: google.addAdGroup({ campaignId: campaign.id, name: "AI" }) };
  });
  await addTrend(gw, a.accountId, "AI agents");
  return { ...a, customers, groups };
}

test("with one reachable ad account, a selection without account_id uses it: entities, mapping and preview", async () => {
  const a = await reaching(1);
  const sel = await gw.http.put(`${BASE}/selection`).set(a.auth).send({ trend_category: "tech", strict_safety: true });
  expect([sel.status, sel.body]).toEqual([200, { trend_category: "tech", strict_safety: true }]);

  const accounts = await gw.http.get(`${BASE}/accounts`).set(a.auth);
  expect(accounts.body).toEqual({ data: [{ id: a.customer.id, name: a.customer.descriptiveName }] });
  const ents = await gw.http.get(`${BASE}/entities`).query({ limit: 200 }).set(a.auth);
  expect(ents.status).toBe(200);
  expect(ents.body.data.map((e: { id: string }) => e.id)).toContain(a.groups[0].campaign.id);

  const mapping = { entities: [{ id: a.groups[0].group.id, name: "AI", field: "keywords" }] };
  expect((await gw.http.put(`${BASE}/mappings`).set(a.auth).send(mapping)).status).toBe(200);
  const plan = await gw.http.post(`${BASE}/preview`).set(a.auth);
  expect([plan.status, plan.body.ad_account_id]).toEqual([201, a.customer.id]);
  expect(plan.body.changes.map((c: { item: { text: string } }) => c.item.text)).toEqual(["ai agents"]);

  expect((await gw.http.get(`${BASE}/selection`).set(a.auth)).body).toEqual({ trend_category: "tech", strict_safety: true });
  expect((await gw.http.get(`${BASE}/mappings`).set(a.auth)).body).toEqual(mapping);
});

test("with several reachable ad accounts, saving without account_id succeeds but preview and entities answer 422 ad_account_required naming them", async () => {
  const a = await reaching(2);
  expect((await gw.http.put(`${BASE}/selection`).set(a.auth).send({ trend_category: "tech", strict_safety: true })).status).toBe(200);
  const ids = a.customers.map((c) => c.id);

  for (const res of [await gw.http.post(`${BASE}/preview`).set(a.auth), await gw.http.get(`${BASE}/entities`).set(a.auth),
    await gw.http.put(`${BASE}/mappings`).set(a.auth).send({ entities: [{ id: a.groups[0].group.id, field: "keywords" }] })]) {
    expect([res.status, res.body.code]).toEqual([422, "ad_account_required"]);
    expect(res.body.errors).toEqual([{ location: "body", path: "account_id", code: "ad_account_required", message: `required: one of ${ids.join(", ")}` }]);
    for (const id of ids) expect(res.body.detail).toContain(id);
  }
  const listed = (await gw.http.get(`${BASE}/accounts`).set(a.auth)).body.data as { id: string; name: string | null }[];
  expect(listed.map((x) => `${x.id} ${x.name}`).sort()).toEqual(a.customers.map((c) => `${c.id} ${c.descriptiveName}`).sort());

  // Choosing one makes everything work on that one.
  const second = a.customers[1].id;
  expect((await gw.http.put(`${BASE}/selection`).set(a.auth).send({ trend_category: "tech", strict_safety: true, account_id: second })).status).toBe(200);
  expect((await gw.http.put(`${BASE}/mappings`).set(a.auth).send({ entities: [{ id: a.groups[1].group.id, field: "keywords" }] })).status).toBe(200);
  const plan = await gw.http.post(`${BASE}/preview`).set(a.auth);
  expect([plan.status, plan.body.ad_account_id]).toEqual([201, second]);
});


test("a listed Google customer whose name cannot be read keeps a null name, and the list still answers", async () => {
  // A developer token at Test access level lists every customer the user reaches but reads test accounts only: the
  // production customer's name read is refused (CLOUD_PROJECT_NOT_APPROVED_FOR_PRODUCTION), the test account's is not.
  const a = await reaching(1);
  const sandbox = google.addCustomer({ testAccount: true, descriptiveName: "Sandbox account" });
  google.addToken(a.token, { customers: [a.customer.id, sandbox.id], testLevel: true });
  const res = await gw.http.get(`${BASE}/accounts`).set(a.auth);
  expect(res.status).toBe(200);
  const byId = Object.fromEntries((res.body.data as { id: string; name: string | null }[]).map((x) => [x.id, x.name]));
  expect(byId).toEqual({ [a.customer.id]: null, [sandbox.id]: "Sandbox account" });
});
test("mappings naming an entity the ad account does not have, or a level that cannot take the field, are refused and nothing is saved", async () => {
  const a = await reaching(2);
  await gw.http.put(`${BASE}/selection`).set(a.auth).send({ trend_category: "tech", account_id: a.customer.id });
  const good = { id: a.groups[0].group.id, field: "keywords" };
  expect((await gw.http.put(`${BASE}/mappings`).set(a.auth).send({ entities: [good] })).status).toBe(200);

  const otherAccounts = a.groups[1].group.id; // exists at Google, but in another ad account
  const res = await gw.http.put(`${BASE}/mappings`).set(a.auth).send({ entities: [good, { id: "999999999", field: "keywords" }, { id: otherAccounts, field: "keywords" }] });
  expect([res.status, res.body.code]).toEqual([422, "validation_failed"]);
  expect(res.body.errors.map((e: { path: string; code: string }) => [e.path, e.code])).toEqual([["entities.1.id", "unknown_entity"], ["entities.2.id", "unknown_entity"]]);
  expect(res.body.errors[0].message).toContain("999999999");

  const campaign = await gw.http.put(`${BASE}/mappings`).set(a.auth).send({ entities: [{ id: a.groups[0].campaign.id, field: "keywords" }] });
  expect([campaign.status, campaign.body.errors?.[0]?.path]).toEqual([422, "entities.0.field"]);

  expect((await gw.http.get(`${BASE}/mappings`).set(a.auth)).body).toEqual({ entities: [{ ...good, name: "AI" }] }); // the saved one stands, named as Google lists it
  const plan = await gw.http.post(`${BASE}/preview`).set(a.auth);
  expect(plan.status).toBe(201);
});

test("Meta: the only ad account the token reaches (GET /me/adaccounts) is used when the selection names none", async () => {
  const acct = meta.addAdAccount({ id: "777000222", name: "Brand" });
  const campaign = meta.addCampaign({ accountId: acct.id, name: "Awareness" });
  meta.addAdSet("120000000000001", { accountId: acct.id, campaignId: campaign.id, name: "Tech fans", targeting: { geo_locations: { countries: ["US"] } } });
  meta.addToken("meta-tok", { accounts: [acct.id] });
  const a = await gw.account();
  await gw.deps.db.$transaction((tx) => saveAuthorizedConnection(tx, {
    accountId: a.accountId, provider: "meta_ads", kind: "ads", credentialsSealed: sealTokens(gw.deps.secrets, { accessToken: "meta-tok", tokenType: "bearer" }),
    tokenExpiresAt: new Date(Date.now() + 3600_000), scopes: [], externalAccount: {},
  }));
  const M = "/api/integrations/ads/meta_ads";
  expect((await gw.http.put(`${M}/selection`).set(a.auth).send({ trend_category: "tech", strict_safety: true })).status).toBe(200);
  expect((await gw.http.get(`${M}/accounts`).set(a.auth)).body).toEqual({ data: [{ id: "act_777000222", name: "Brand" }] });
  expect((await gw.http.put(`${M}/mappings`).set(a.auth).send({ entities: [{ id: "120000000000001", field: "interests" }] })).status).toBe(200);
  const unknown = await gw.http.put(`${M}/mappings`).set(a.auth).send({ entities: [{ id: "120000000000999", field: "interests" }] });
  expect([unknown.status, unknown.body.errors?.[0]?.path]).toEqual([422, "entities.0.id"]);
});

test("the providers list says `configured` exactly when this server can start the provider's authorization", async () => {
  const a = await gw.account();
  const list = (await gw.http.get("/api/integrations/ads/providers").set(a.auth)).body.data as { id: string; configured: boolean; base_path: string }[];
  expect(list.find((p) => p.id === "google_ads")!.configured).toBe(true);
  expect(list.find((p) => p.id === "meta_ads")!.configured).toBe(false);
  for (const p of list) {
    const auth = await gw.http.get(`${p.base_path}/auth`).set(a.auth);
    expect([p.id, auth.status === 501 ? "not configured" : "configured"]).toEqual([p.id, p.configured ? "configured" : "not configured"]);
  }
});

test("ads reporting also reads the only ad account of a selection that names none; with several, the provider is reported as needing one", async () => {
  const one = await reaching(1);
  await gw.http.put(`${BASE}/selection`).set(one.auth).send({ trend_category: "tech", strict_safety: true });
  const gen = google.generateStats({ customerId: one.customer.id, adGroups: 1, days: 2, from: "2026-11-01" });
  const body = { providers: ["google_ads"], from: gen.from, to: gen.to, granularity: "day", level: "ad_group" };
  const res = await gw.http.post("/api/integrations/ads/reporting/preview").set(one.auth).send(body);
  expect(res.status).toBe(200);
  expect(res.body.providers).toEqual([expect.objectContaining({ provider: "google_ads", status: "ok", account_id: one.customer.id })]);
  expect(res.body.data.length).toBeGreaterThan(0);

  const two = await reaching(2);
  await gw.http.put(`${BASE}/selection`).set(two.auth).send({ trend_category: "tech", strict_safety: true });
  const refused = await gw.http.post("/api/integrations/ads/reporting/preview").set(two.auth).send(body);
  expect(refused.body.providers).toEqual([expect.objectContaining({ provider: "google_ads", status: "failed", error: expect.objectContaining({ kind: "ad_account_required" }) })]);
});
