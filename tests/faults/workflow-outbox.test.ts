import { QUEUES } from "@trendgate/contracts";
import { createLogger } from "@trendgate/logger";
import { startWorkers } from "../../apps/worker/src/run-workers.ts";
import { waitFor } from "../helpers/config.ts";
import { appProcess, onCleanup, privateRedis, runCleanups, sleep } from "../helpers/faults-proc-kit.ts";
import { DELIVERY_ENV, startStack, type Stack } from "../helpers/stack.ts";
import { startN8nServer, type N8nServer } from "../peers/n8n-server.ts";

// Issue 10, "Done when": workflow pushes ride the shared outbox, so a worker killed with -9 mid-load and a Redis
// FLUSHALL lose none. Real pieces: the gateway's push route, the workflow-pushes handler, the outbox processor and
// sweeper, against the n8n stand-in. A push may arrive twice only when it was in flight at the kill (the workflow
// de-duplicates on X-Trendgate-Event-Id); every other push arrives exactly once.

const BASE = "/api/integrations/workflow";
const ENV = { OUTBOX_RETRY_SCHEDULE_SECONDS: "1,1,1", SWEEP_INTERVAL_MS: "300", SWEEP_GRACE_SECONDS: "1" };

let n8n: N8nServer;
beforeEach(async () => { n8n = await startN8nServer(); });
afterEach(async () => { await runCleanups(); await n8n.close(); });

/** A gateway (no workers) on a private Redis; stopped after the test. */
async function workflowStack(redisUrl: string): Promise<Stack> {
  const s = await startStack({ ...ENV, REDIS_URL: redisUrl }, 0);
  onCleanup(async () => {
    await s.gw.deps.db.outboxMessage.updateMany({ where: { queue: QUEUES.workflowPushes, status: "pending" }, data: { status: "cancelled" } });
    await s.close();
  });
  return s;
}

/** An account connected to the n8n peer with an active webhook workflow selected (no automatic trend pushes). */
async function selectedAccount(s: Stack) {
  const a = await s.gw.account();
  const c = await s.gw.http.post(`${BASE}/connect`).set(a.auth).send({ api_key: n8n.apiKey, api_base_url: n8n.url, include_metadata: true });
  if (c.status !== 200) throw new Error(`connect: ${c.status}`);
  const wf = n8n.addWorkflow({ name: "Faults", webhook: { path: "faults" } });
  const sel = await s.gw.http.put(`${BASE}/selection`).set(a.auth).send({ workflow_id: wf.id, workflow_name: wf.name, default_event: "trend_lifecycle", api_base_url: n8n.url, auto_push: false });
  if (sel.status !== 200) throw new Error(`selection: ${sel.status}`);
  return a;
}

/** `n` pushes through the API; returns their event ids. */
async function push(s: Stack, a: { auth: Record<string, string> }, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await s.gw.http.post(`${BASE}/push`).set(a.auth).send({ event: "trend_lifecycle", data: { n: i } });
    if (res.status !== 202) throw new Error(`push: ${res.status}`);
    ids.push(res.body.id);
  }
  return ids;
}

const received = (): Map<string, number> => {
  const m = new Map<string, number>();
  for (const p of n8n.pushes) { const id = String(p.headers["x-trendgate-event-id"]); m.set(id, (m.get(id) ?? 0) + 1); }
  return m;
};
const succeeded = (s: Stack, accountId: string) => s.gw.deps.db.outboxMessage.count({ where: { queue: QUEUES.workflowPushes, accountId, status: "succeeded" } });

test("a worker process killed (-9) mid-load loses no push; only pushes in flight at the kill may arrive twice", async () => {
  const redis = await privateRedis();
  const s = await workflowStack(redis.url);
  const a = await selectedAccount(s);
  const ids = await push(s, a, 200);
  n8n.slowWebhooks(100);

  const workerEnv = { ...DELIVERY_ENV, ...ENV, REDIS_URL: redis.url, QUEUE_PREFIX: s.gw.deps.config.QUEUE_PREFIX, WORKER_QUEUES: QUEUES.workflowPushes, WORKER_LOCK_DURATION_MS: "3000", WORKER_STALLED_INTERVAL_MS: "1000" };
  const first = appProcess("worker", workerEnv);
  await waitFor(async () => n8n.pushes.length >= 40, { timeoutMs: 60_000, everyMs: 5 });
  first.child.kill("SIGKILL");
  expect((await first.exited).signal).toBe("SIGKILL");
  const activeAtKill = await s.gw.deps.queues.get(QUEUES.workflowPushes).getActiveCount();
  await sleep(200);
  const atKill = n8n.pushes.length;
  expect(atKill).toBeLessThan(ids.length); // it died mid-load

  appProcess("worker", workerEnv);
  await waitFor(async () => (await succeeded(s, a.accountId)) === ids.length, { timeoutMs: 120_000, everyMs: 250 });
  await sleep(1500); // more sweeps: nothing late trickles in

  const got = received();
  const lost = ids.filter((id) => !got.has(id));
  const extra = [...got.values()].reduce((n, c) => n + c - 1, 0);
  console.log(`workflow kill -9: ${ids.length} pushes; ${atKill} received at the kill, ${activeAtKill} jobs active; afterwards ${extra} extra deliveries`);
  expect(lost).toEqual([]);
  expect([...got.keys()].filter((id) => !ids.includes(id))).toEqual([]);
  expect(extra).toBeLessThanOrEqual(activeAtKill);
  expect([...got.values()].filter((c) => c > 2)).toEqual([]);
}, 240_000);

test("after a FLUSHALL the sweeper re-queues every lost push from Postgres and each arrives once", async () => {
  const redis = await privateRedis();
  const s = await workflowStack(redis.url);
  const a = await selectedAccount(s);
  const ids = await push(s, a, 100);
  const queue = s.gw.deps.queues.get(QUEUES.workflowPushes);
  expect(await queue.getWaitingCount()).toBe(100);
  expect(await redis.flushall()).toBe("OK");
  expect(await queue.getWaitingCount()).toBe(0);

  const w = startWorkers(s.gw.deps.config, createLogger({ level: "silent" }), [QUEUES.workflowPushes]);
  onCleanup(() => w.close());
  await waitFor(async () => (await succeeded(s, a.accountId)) === ids.length, { timeoutMs: 90_000, everyMs: 250 });
  await sleep(1500);
  const got = received();
  expect(ids.filter((id) => got.get(id) !== 1)).toEqual([]);
  expect(got.size).toBe(ids.length);
}, 180_000);
