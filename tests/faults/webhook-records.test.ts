import { createLogger } from "@trendgate/logger";
import { QUEUES } from "@trendgate/contracts";
import { enqueueDeliveries, serializePayload, testPayload } from "@trendgate/webhooks";
import { newId } from "@trendgate/db";
import { startWorkers } from "../../apps/worker/src/run-workers.ts";
import { waitFor } from "../helpers/config.ts";
import { countBy, faultReceiver, onCleanup, privateRedis, runCleanups, stack, subscriptions } from "../helpers/faults-kit.ts";
import { appProcess, keysMatching, postgresBehindProxy, sleep } from "../helpers/faults-proc-kit.ts";
import { DELIVERY_ENV, type Stack } from "../helpers/stack.ts";

// Issue 44, items 2 and 3: every webhook attempt's record is durable before its job completes. Across a Postgres
// outage a record that cannot be written is kept in Redis and written once the database answers, so nothing is sent
// again for want of it; a worker killed with -9 while draining a backlog re-sends at most the deliveries that were in
// flight at the kill (a success's job no longer completes before its record is committed), and those sends are in the
// execution log as interrupted.

afterEach(runCleanups);

const ENV = { SWEEP_GRACE_SECONDS: "1", SWEEP_INTERVAL_MS: "300" };

/** `n` due first attempts of test deliveries spread over `subs`, queued. */
async function deliveries(s: Stack, accountId: string, subs: string[], n: number): Promise<string[]> {
  const body = serializePayload(testPayload({ id: subs[0], createdAt: new Date("2026-11-23T00:00:00Z"), thresholdValue: 100 }, "http://localhost:3000"));
  const ids = Array.from({ length: n }, () => newId("msg"));
  await s.gw.deps.db.webhookDelivery.createMany({ data: ids.map((id, i) => ({
    id, accountId, subscriptionId: subs[i % subs.length], trigger: "test", payload: JSON.parse(body), nextAttemptAt: new Date(Date.now() - 1000),
  })) });
  await enqueueDeliveries(s.gw.deps.queues, ids.map((id, i) => ({ job: { delivery_id: id, webhook_id: subs[i % subs.length], attempt: 1, trigger: "test" as const, body }, delayMs: 0 })));
  return ids;
}

const keptRecords = async (s: Stack) => (await keysMatching(s.gw.deps.queues.connection, `${s.gw.deps.config.QUEUE_PREFIX}:unrecorded:{${QUEUES.webhookDeliveries}}:*`)).length;

test("a Postgres outage while deliveries wait for their answers: each attempt is recorded once when Postgres is back, none sent again", async () => {
  const redis = await privateRedis();
  const rx = await faultReceiver(() => "hang"); // each request is held until the outage has begun
  const s = await stack({ ...ENV, REDIS_URL: redis.url }, 0);
  const { account, ids: subs } = await subscriptions(s, [rx.url("/a"), rx.url("/b")]);
  const ids = await deliveries(s, account.accountId, subs, 12);

  const { proxy, url: viaProxy } = await postgresBehindProxy(s.gw.deps.config.DATABASE_URL);
  const w = startWorkers({ ...s.gw.deps.config, DATABASE_URL: viaProxy } as typeof s.gw.deps.config, createLogger({ level: "silent" }), [QUEUES.webhookDeliveries]);
  onCleanup(() => w.close());

  await waitFor(async () => rx.requests.length >= ids.length, { timeoutMs: 30_000, everyMs: 20 });
  proxy.down(); // Postgres "stops" while every request waits for its answer
  rx.releaseHung(); // the receiver has them all: their records cannot be written
  let kept = 0;
  const until = Date.now() + 12_000;
  while (Date.now() < until) { kept = Math.max(kept, await keptRecords(s)); await sleep(200); }
  proxy.up();

  const db = s.gw.deps.db;
  await waitFor(async () => (await db.webhookDelivery.count({ where: { id: { in: ids }, status: "succeeded" } })) === ids.length, { timeoutMs: 90_000, everyMs: 250 });
  await sleep(1500); // more sweeps: nothing late trickles in
  const perId = countBy(rx.requests.map((r) => r.webhookId));
  const executions = await db.webhookExecution.findMany({ where: { deliveryId: { in: ids } } });
  expect(kept).toBeGreaterThan(0); // the records could not be written and were kept
  expect(ids.filter((id) => perId.get(id) !== 1)).toEqual([]); // each sent exactly once
  expect(executions).toHaveLength(ids.length); // one record per attempt
  expect(executions.every((e) => e.attempt === 1 && e.outcome === "succeeded" && e.responseStatus === 204)).toBe(true);
  expect(await keptRecords(s)).toBe(0);
}, 150_000);

test("a worker killed (-9) while draining a backlog re-sends at most the deliveries in flight at the kill, and every send is recorded", async () => {
  const redis = await privateRedis();
  const rx = await faultReceiver();
  const s = await stack({ ...ENV, REDIS_URL: redis.url }, 0);
  const { account, ids: subs } = await subscriptions(s, [rx.url("/a"), rx.url("/b"), rx.url("/c"), rx.url("/d")]);
  const ids = await deliveries(s, account.accountId, subs, 1500);

  const env = { ...DELIVERY_ENV, ...ENV, REDIS_URL: redis.url, QUEUE_PREFIX: s.gw.deps.config.QUEUE_PREFIX, WORKER_QUEUES: QUEUES.webhookDeliveries, WORKER_LOCK_DURATION_MS: "3000", WORKER_STALLED_INTERVAL_MS: "1000",
    // Records wait up to 300 ms to fill a batch: a success whose job completed before its record was committed was lost at a kill.
    WEBHOOK_RECORD_BATCH_WAIT_MS: "300", WEBHOOK_RECORD_BATCH_SIZE: "1000" };
  const first = appProcess("worker", env);
  await waitFor(async () => rx.requests.length >= 300, { timeoutMs: 60_000, everyMs: 2 });
  first.child.kill("SIGKILL");
  expect((await first.exited).signal).toBe("SIGKILL");
  const activeAtKill = await s.gw.deps.queues.get(QUEUES.webhookDeliveries).getActiveCount();
  const atKill = rx.requests.length;
  expect(atKill).toBeLessThan(ids.length); // it died mid-backlog

  appProcess("worker", env);
  const db = s.gw.deps.db;
  await waitFor(async () => (await db.webhookDelivery.count({ where: { id: { in: ids }, status: "succeeded" } })) === ids.length, { timeoutMs: 120_000, everyMs: 250 });
  await sleep(1500);
  const perId = countBy(rx.requests.map((r) => r.webhookId));
  const extra = [...perId.values()].reduce((n, c) => n + c - 1, 0);
  console.log(`webhook kill -9: ${ids.length} deliveries; ${atKill} received at the kill, ${activeAtKill} jobs active; afterwards ${extra} sent again`);
  expect(ids.filter((id) => !perId.has(id))).toEqual([]); // none lost
  expect(extra).toBeLessThanOrEqual(activeAtKill); // only what was in flight at the kill
  // Every send the receiver saw is in the execution log: one success per delivery, and each send the kill cut off
  // as `interrupted` (a mark written before the request; a kill just before the request goes out shows one too).
  const executions = await db.webhookExecution.findMany({ where: { deliveryId: { in: ids } }, select: { deliveryId: true, outcome: true, attempt: true } });
  expect(executions.filter((e) => e.outcome === "succeeded")).toHaveLength(ids.length);
  const logged = countBy(executions.map((e) => e.deliveryId));
  expect(ids.filter((id) => (logged.get(id) ?? 0) < perId.get(id)!)).toEqual([]);
  const interrupted = executions.filter((e) => e.outcome === "interrupted");
  expect(interrupted.length).toBeGreaterThanOrEqual(extra);
  expect(interrupted.length).toBeLessThanOrEqual(activeAtKill);
}, 240_000);
