import { QUEUES } from "@trendgate/contracts";
import { waitFor } from "../helpers/config.ts";
import { appProcess, privateRedis, runCleanups, onCleanup, sleep } from "../helpers/faults-proc-kit.ts";
import { startGateway, type TestGateway } from "../helpers/gateway.ts";
import { DELIVERY_ENV } from "../helpers/stack.ts";
import { startGoogleAdsServer, type GoogleAdsServer } from "../peers/google-ads-server.ts";
import { addTrend, googleConnected } from "../ads/kit.ts";

// Issue 11, "Done when": an ads worker process killed with -9 mid-apply leaves the run resumable, never applied
// twice. The kill lands after Google applied the write and before the worker heard the answer (the worst moment: the
// provider changed, our record did not). A second worker process takes the run over (stalled job or sweeper), reads
// the targets, finds the plan's changes already there, and ends the run applied without writing them again.

const ENV = { ...DELIVERY_ENV, OUTBOX_RETRY_SCHEDULE_SECONDS: "1,1,1" };
const BASE = "/api/integrations/ads/google_ads";
let google: GoogleAdsServer;

beforeEach(async () => { google = await startGoogleAdsServer(); });
afterEach(async () => { await runCleanups(); await google.close(); });

const creates = (customerId: string) => google.requests.filter((r) => r.path.endsWith(`/customers/${customerId}/adGroupCriteria:mutate`) && !r.body?.validateOnly)
  .flatMap((r) => (r.body.operations as { create?: { adGroup: string; keyword: { text: string } } }[]).filter((o) => o.create).map((o) => `${o.create!.adGroup.split("/").pop()}:${o.create!.keyword.text}`));

test("a worker killed (-9) after Google applied the write but before it was recorded: the run resumes and ends applied, written once", async () => {
  const redis = await privateRedis();
  const env = { ...ENV, REDIS_URL: redis.url, GOOGLE_ADS_CLIENT_ID: "cid", GOOGLE_ADS_CLIENT_SECRET: "secret", GOOGLE_ADS_API_URL: google.url };
  const gw: TestGateway = await startGateway(env);
  onCleanup(() => gw.close());
  const a = await googleConnected(gw, google);
  const campaign = google.addCampaign({ customerId: a.customer.id, name: "Search" });
  const g1 = google.addAdGroup({ campaignId: campaign.id, name: "AI" });
  const g2 = google.addAdGroup({ campaignId: campaign.id, name: "Gadgets" });
  for (const t of ["AI agents", "Smart rings"]) await addTrend(gw, a.accountId, t);
  await gw.http.put(`${BASE}/selection`).set(a.auth).send({ trend_category: "tech", account_id: a.customer.id });
  await gw.http.put(`${BASE}/mappings`).set(a.auth).send({ entities: [{ id: g1.id, field: "keywords" }, { id: g2.id, field: "keywords" }] });
  const plan = (await gw.http.post(`${BASE}/preview`).set(a.auth)).body;
  expect(plan.changes).toHaveLength(4);

  google.holdWrites(20_000);
  const workerEnv = { ...env, QUEUE_PREFIX: gw.deps.config.QUEUE_PREFIX, WORKER_QUEUES: QUEUES.adsApplies, WORKER_LOCK_DURATION_MS: "3000", WORKER_STALLED_INTERVAL_MS: "1000" };
  const first = appProcess("worker", workerEnv);
  expect((await gw.http.post(`${BASE}/apply`).set(a.auth).send({ plan_id: plan.id })).status).toBe(202);
  await waitFor(async () => creates(a.customer.id).length > 0, { timeoutMs: 30_000 });
  first.child.kill("SIGKILL");
  expect((await first.exited).signal).toBe("SIGKILL");
  // Google has the keywords; our record does not know it yet.
  expect(google.keywordsOf(g2.id).map((k) => k.text).sort()).toEqual(["ai agents", "smart rings"]);
  expect((await gw.http.get(`${BASE}/plans/${plan.id}`).set(a.auth)).body.status).toBe("applying");

  google.holdWrites(0);
  await sleep(200);
  appProcess("worker", workerEnv);
  const done = await waitFor(async () => {
    const p = (await gw.http.get(`${BASE}/plans/${plan.id}`).set(a.auth)).body;
    return p.status !== "applying" ? p : null;
  }, { timeoutMs: 60_000, everyMs: 200 });
  expect(done.status).toBe("applied");
  expect(done.results).toHaveLength(4);
  expect(done.results.every((r: { ok: boolean; note?: string }) => r.ok && /found applied/.test(r.note ?? ""))).toBe(true);
  expect(creates(a.customer.id).sort()).toEqual(plan.changes.map((c: { entity_id: string; item: { text: string } }) => `${c.entity_id}:${c.item.text}`).sort()); // each once
  for (const d of plan.diff) expect(google.keywordsOf(d.entity_id).map((k) => k.text).sort()).toEqual([...d.after].sort());
}, 120_000);
