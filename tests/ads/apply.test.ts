import { saveAuthorizedConnection } from "@trendgate/db";
import { createLogger } from "@trendgate/logger";
import { sealTokens } from "../../packages/connections/src/credentials.ts";
import { startWorkers, type RunningWorkers } from "../../apps/worker/src/run-workers.ts";
import { waitFor } from "../helpers/config.ts";
import { startGateway, type TestGateway } from "../helpers/gateway.ts";
import { startGoogleAdsServer, type GoogleAdsServer } from "../peers/google-ads-server.ts";
import { addTrend, googleConnected } from "./kit.ts";

// Apply through the gateway and the ads-applies worker against the local Google Ads API:
// preview -> apply -> Google's state equals the plan's "after"; targets changed after the preview -> refused as
// stale, nothing written; a plan is applied once (409 afterwards, the same answer for a retried Idempotency-Key);
// a throttle mid-apply is retried and the run reconciles, so nothing is written twice.

const BASE = "/api/integrations/ads/google_ads";
let google: GoogleAdsServer;
let gw: TestGateway;
let workers: RunningWorkers;

beforeAll(async () => {
  google = await startGoogleAdsServer();
  gw = await startGateway({ OUTBOUND_ALLOWLIST: "127.0.0.1", GOOGLE_ADS_CLIENT_ID: "cid", GOOGLE_ADS_CLIENT_SECRET: "secret", GOOGLE_ADS_API_URL: google.url, OUTBOX_RETRY_SCHEDULE_SECONDS: "0.2,0.2,0.2" });
  workers = startWorkers(gw.deps.config, createLogger({ level: "silent" }), ["ads-applies"]);
});
afterAll(async () => { await workers.close(); await gw.close(); await google.close(); });

async function previewed(trendNames: string[]) {
  const a = await googleConnected(gw, google);
  const customer = a.customer;
  const campaign = google.addCampaign({ customerId: customer.id, name: "Search" });
  const g1 = google.addAdGroup({ campaignId: campaign.id, name: "AI" });
  const g2 = google.addAdGroup({ campaignId: campaign.id, name: "Gadgets" });
  google.addKeyword({ adGroupId: g1.id, text: "machine learning", matchType: "PHRASE" });
  for (const name of trendNames) await addTrend(gw, a.accountId, name);
  expect((await gw.http.put(`${BASE}/selection`).set(a.auth).send({ trend_category: "tech", account_id: customer.id })).status).toBe(200);
  expect((await gw.http.put(`${BASE}/mappings`).set(a.auth).send({ entities: [{ id: g1.id, field: "keywords" }, { id: g2.id, field: "keywords" }] })).status).toBe(200);
  const plan = await gw.http.post(`${BASE}/preview`).set(a.auth);
  expect(plan.status).toBe(201);
  return { a, g1, g2, plan: plan.body };
}

const positive = (adGroupId: string) => google.keywordsOf(adGroupId).filter((k) => !k.negative).map((k) => k.text).sort();
const finalPlan = (a: { auth: Record<string, string> }, id: string) =>
  waitFor(async () => { const p = (await gw.http.get(`${BASE}/plans/${id}`).set(a.auth)).body; return p.status !== "applying" ? p : null; });

test("an applied plan leaves Google's targeting equal to the plan's after; a plan is applied once", async () => {
  const { a, g1, g2, plan } = await previewed(["AI agents", "Foldable phones"]);
  const res = await gw.http.post(`${BASE}/apply`).set(a.auth).set("Idempotency-Key", `apply-${plan.id}`).send({ plan_id: plan.id });
  expect(res.status).toBe(202);
  expect(res.body).toMatchObject({ plan_id: plan.id, status: "applying" });
  const done = await finalPlan(a, plan.id);
  expect(done.status).toBe("applied");
  expect(done.results.every((r: { ok: boolean; request_id: string }) => r.ok && r.request_id)).toBe(true);
  for (const d of plan.diff) expect(positive(d.entity_id)).toEqual([...d.after].sort());
  expect(positive(g1.id)).toEqual(["ai agents", "foldable phones", "machine learning"]);
  expect(positive(g2.id)).toEqual(["ai agents", "foldable phones"]);

  const replay = await gw.http.post(`${BASE}/apply`).set(a.auth).set("Idempotency-Key", `apply-${plan.id}`).send({ plan_id: plan.id });
  expect([replay.status, replay.body.run_id]).toEqual([202, res.body.run_id]); // the same answer, nothing new queued
  const again = await gw.http.post(`${BASE}/apply`).set(a.auth).send({ plan_id: plan.id });
  expect(again.status).toBe(409);
  expect(again.body.detail).toMatch(/applied once/);
  const writes = google.requests.filter((r) => r.path.endsWith(":mutate") && !r.body.validateOnly && r.body.operations.some((o: { create?: unknown }) => o.create));
  expect(writes.filter((r) => r.path.includes(plan.ad_account_id))).toHaveLength(1);
});

test("targets changed after the preview: the plan is refused as stale and nothing is written", async () => {
  const { a, g1, g2, plan } = await previewed(["AI agents"]);
  google.addKeyword({ adGroupId: g2.id, text: "someone else's keyword", matchType: "EXACT" }); // changed behind the plan's back
  expect((await gw.http.post(`${BASE}/apply`).set(a.auth).send({ plan_id: plan.id })).status).toBe(202);
  const done = await finalPlan(a, plan.id);
  expect(done.status).toBe("refused");
  expect(done.status_reason).toMatch(/stale plan: the targeting of .* changed since the preview/);
  expect(positive(g1.id)).toEqual(["machine learning"]);
  expect(positive(g2.id)).toEqual(["someone else's keyword"]);
});

test("a throttled apply is retried and ends applied, each keyword written once", async () => {
  const { a, g2, plan } = await previewed(["Smart rings"]);
  google.failNext("RESOURCE_TEMPORARILY_EXHAUSTED");
  expect((await gw.http.post(`${BASE}/apply`).set(a.auth).send({ plan_id: plan.id })).status).toBe(202);
  const done = await finalPlan(a, plan.id);
  expect(done.status).toBe("applied");
  expect(positive(g2.id)).toEqual(["smart rings"]);
});

test("an unknown or foreign plan is 404; an expired one is 409", async () => {
  const { a, plan } = await previewed(["Drone delivery"]);
  const other = await gw.account();
  expect((await gw.http.post(`${BASE}/apply`).set(other.auth).send({ plan_id: plan.id })).status).toBe(404);
  await gw.deps.db.adsPlan.update({ where: { id: plan.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
  const r = await gw.http.post(`${BASE}/apply`).set(a.auth).send({ plan_id: plan.id });
  expect([r.status, r.body.code]).toEqual([409, "conflict"]);
  expect(r.body.detail).toMatch(/expired/);
});

test("a run cut short after writing (a crash before its record) resumes: what is at Google is not written again", async () => {
  const { a, g1, g2, plan } = await previewed(["Smart glasses", "Robot vacuums"]);
  // As if an earlier attempt wrote part of the plan and died before recording it.
  const first = plan.changes[0];
  google.addKeyword({ adGroupId: first.entity_id, text: first.item.text, matchType: "PHRASE" });
  expect((await gw.http.post(`${BASE}/apply`).set(a.auth).send({ plan_id: plan.id })).status).toBe(202);
  const done = await finalPlan(a, plan.id);
  expect(done.status).toBe("applied");
  expect(done.results.find((r: { change_id: string }) => r.change_id === first.id)).toMatchObject({ ok: true, note: expect.stringMatching(/found applied/) });
  for (const d of plan.diff) expect(positive(d.entity_id)).toEqual([...d.after].sort());
  const creates = google.requests.filter((r) => r.path.includes(plan.ad_account_id) && r.path.endsWith(":mutate") && !r.body.validateOnly)
    .flatMap((r) => r.body.operations.map((o: { create?: { adGroup: string; keyword: { text: string } } }) => `${o.create?.adGroup.split("/").pop()}:${o.create?.keyword.text}`));
  expect(creates).not.toContain(`${first.entity_id}:${first.item.text}`);
  expect(creates).toHaveLength(plan.changes.length - 1);
  expect([g1.id, g2.id]).toContain(first.entity_id);
});

test("rollback: a new plan that removes what the applied plan added, applied the same way, back to the prior state; once", async () => {
  const { a, g1, g2, plan } = await previewed(["Home robots"]);
  const priorOf = new Map([[g1.id, positive(g1.id)], [g2.id, positive(g2.id)]]);
  expect((await gw.http.post(`${BASE}/plans/${plan.id}/rollback`).set(a.auth)).status).toBe(409); // not applied yet
  await gw.http.post(`${BASE}/apply`).set(a.auth).send({ plan_id: plan.id });
  expect((await finalPlan(a, plan.id)).status).toBe("applied");
  expect(positive(g2.id)).toEqual(["home robots"]);

  const rb = await gw.http.post(`${BASE}/plans/${plan.id}/rollback`).set(a.auth);
  expect(rb.status).toBe(201);
  expect(rb.body).toMatchObject({ rollback_of: plan.id, status: "previewed", dry_run: { ran: true, passed: true } });
  expect(rb.body.changes.map((c: { op: string; item: { text: string } }) => [c.op, c.item.text])).toEqual(plan.changes.map(() => ["remove", "home robots"]));
  expect((await gw.http.post(`${BASE}/plans/${plan.id}/rollback`).set(a.auth)).status).toBe(409); // one rollback per plan

  expect((await gw.http.post(`${BASE}/apply`).set(a.auth).send({ plan_id: rb.body.id })).status).toBe(202);
  expect((await finalPlan(a, rb.body.id)).status).toBe("applied");
  expect(positive(g1.id)).toEqual(priorOf.get(g1.id));
  expect(positive(g2.id)).toEqual(priorOf.get(g2.id));
});

test("runs: applied plans newest first with their results, paged and filtered by status; previews are not runs", async () => {
  const { a, plan } = await previewed(["Mesh routers"]);
  await gw.http.post(`${BASE}/apply`).set(a.auth).send({ plan_id: plan.id });
  await finalPlan(a, plan.id);
  const rb = await gw.http.post(`${BASE}/plans/${plan.id}/rollback`).set(a.auth);
  await gw.http.post(`${BASE}/apply`).set(a.auth).send({ plan_id: rb.body.id });
  await finalPlan(a, rb.body.id);
  await gw.http.post(`${BASE}/preview`).set(a.auth); // a third plan, never applied

  const page1 = await gw.http.get(`${BASE}/runs`).query({ limit: 1 }).set(a.auth);
  expect(page1.status).toBe(200);
  expect(page1.body.data.map((p: { id: string }) => p.id)).toEqual([rb.body.id]);
  const page2 = await gw.http.get(`${BASE}/runs`).query({ limit: 1, cursor: page1.body.next_cursor }).set(a.auth);
  expect(page2.body.data.map((p: { id: string; status: string; results: unknown[] }) => [p.id, p.status, p.results.length])).toEqual([[plan.id, "applied", plan.changes.length]]);
  expect(page2.body.next_cursor).toBeNull();
  expect((await gw.http.get(`${BASE}/runs`).query({ status: "refused" }).set(a.auth)).body.data).toEqual([]);
  expect((await gw.http.get(`${BASE}/runs`).query({ status: "bogus" }).set(a.auth)).status).toBe(422);
  expect((await gw.http.get(`${BASE}/runs`).set((await gw.account()).auth)).body.data).toEqual([]);
});

test("a partially applied run opens an operator item for review when the account has a chat connection", async () => {
  const { a, g2, plan } = await previewed(["Smart speakers"]);
  await gw.deps.db.$transaction((tx) => saveAuthorizedConnection(tx, {
    accountId: a.accountId, provider: "slack", kind: "chat", credentialsSealed: sealTokens(gw.deps.secrets, { accessToken: "xoxb-test", tokenType: "bearer" }),
    tokenExpiresAt: null, scopes: ["chat:write"], externalAccount: { team_id: "T1" },
  }));
  google.refuseAdGroup(g2.id);
  await gw.http.post(`${BASE}/apply`).set(a.auth).send({ plan_id: plan.id });
  const done = await finalPlan(a, plan.id);
  expect(done.status).toBe("partially_applied");
  const list = (await gw.http.get("/api/operator/items").set(a.auth)).body.data;
  expect(list).toHaveLength(1);
  expect(list[0]).toMatchObject({ state: "open", severity: "high", title: "Google Ads refused 1 of 2 targeting changes" });
  expect(list[0].summary).toMatch(new RegExp(`Plan ${plan.id} ended partially_applied\\. add "smart speakers" on ${g2.id}: .*CANNOT_ADD_CRITERIA_TYPE`));
  expect(list[0].briefing_url).toMatch(new RegExp(`/api/integrations/ads/google_ads/plans/${plan.id}$`));

  // Without a chat connection the run still marks the refusals for review, and no item is opened.
  const other = await previewed(["Smart speakers"]);
  google.refuseAdGroup(other.g2.id);
  await gw.http.post(`${BASE}/apply`).set(other.a.auth).send({ plan_id: other.plan.id });
  expect((await finalPlan(other.a, other.plan.id)).results.filter((r: { review?: boolean }) => r.review)).toHaveLength(1);
  expect((await gw.http.get("/api/operator/items").set(other.a.auth)).body.data).toEqual([]);
});
