import { QUEUES, type QueueName } from "@trendgate/contracts";
import { createRedis, masters, queuePrefix, whenReady } from "@trendgate/queues";
import { waitFor } from "../helpers/config.ts";
import { countBy, faultReceiver, stack, subscriptions } from "../helpers/faults-kit.ts";
import { onCleanup, privateCluster, runCleanups, sleep } from "../helpers/faults-proc-kit.ts";
import { trendEvent } from "../helpers/stack.ts";

// Issue 15, part 5: the fleet on a Redis Cluster (run by the cluster suite: `npm test -- --cluster`, which points
// REDIS_URL at a local 3-master cluster). Every other test of that suite (no-loss, end to end, streams, rate limits,
// idempotency, pacing) runs on the cluster too; these check what only a cluster has: how the queues are spread over
// the masters, and a master that dies and comes back empty.

// Cleanup stops a gateway, workers and a private cluster whose master was just restarted: once, on a loaded box
// (the whole cluster suite running), that took over jest's default 30 s hook limit.
afterEach(runCleanups, 90_000);

/** The master (host:port) serving each key's slot, as the cluster itself reports it. */
async function mastersOf(url: string, keys: string[]): Promise<string[]> {
  const admin = createRedis(url, "client");
  onCleanup(async () => admin.disconnect());
  await whenReady(admin, 10_000);
  const ranges = (await admin.call("CLUSTER", "SLOTS")) as Array<[number, number, [string, number]]>;
  return Promise.all(keys.map(async (k) => {
    const slot = Number(await admin.call("CLUSTER", "KEYSLOT", k));
    const [, , [host, port]] = ranges.find(([lo, hi]) => slot >= lo && slot <= hi)!;
    return `${host}:${port}`;
  }));
}

test("each queue's keys share one slot, and the queues are spread over all three masters", async () => {
  const url = process.env.REDIS_URL!;
  expect(url).toMatch(/^redis\+cluster:\/\//); // the suite runs on a cluster, not a single server
  const rx = await faultReceiver();
  const s = await stack({}, 1);
  const prefix = s.gw.deps.config.QUEUE_PREFIX;
  const names = Object.values(QUEUES) as QueueName[];

  // One slot per queue: BullMQ's scripts touch several of a queue's keys at once (a cluster refuses otherwise).
  for (const q of names) {
    const keys = ["wait", "active", "meta", "id", "events", "123"].map((k) => `${queuePrefix(prefix, q)}:${q}:${k}`);
    expect(new Set(await mastersOf(url, keys)).size).toBe(1);
  }
  const byQueue = await mastersOf(url, names.map((q) => `${queuePrefix(prefix, q)}:${q}:wait`));
  const spread = countBy(byQueue);
  expect(spread.size).toBe(3);
  console.log(`cluster: ${names.length} queues over ${spread.size} masters: ${[...spread.values()].join(" / ")}`);

  // Real traffic lands where the slots say: a trend event and its delivery go through, and the delivery queue's
  // keys are on its master only.
  const { account } = await subscriptions(s, [rx.url("/spread")]);
  await s.publish(trendEvent(account.accountId));
  await waitFor(async () => rx.requests.length === 1, { timeoutMs: 20_000 });
  const admin = createRedis(url, "client");
  onCleanup(async () => admin.disconnect());
  await whenReady(admin, 10_000);
  const [expected] = await mastersOf(url, [`${queuePrefix(prefix, QUEUES.webhookDeliveries)}:x`]);
  const holders: string[] = [];
  for (const node of masters(admin)) {
    const keys = await node.keys(`${queuePrefix(prefix, QUEUES.webhookDeliveries)}:*`);
    if (keys.length) holders.push(`${node.options.host}:${node.options.port}`);
  }
  expect(holders).toEqual([expected]);
}, 60_000);

test("a master killed (-9) mid-load and started again empty loses no delivery; only those in flight may repeat", async () => {
  const cluster = await privateCluster();
  const rx = await faultReceiver();
  const s = await stack({ REDIS_URL: cluster.url, SWEEP_GRACE_SECONDS: "1", SWEEP_INTERVAL_MS: "300" }, 1);
  const prefix = s.gw.deps.config.QUEUE_PREFIX;
  const { account, ids: [sub] } = await subscriptions(s, [rx.url("/restart")]);
  const n = 600;
  for (let i = 0; i < n; i += 50) await Promise.all(Array.from({ length: 50 }, () => s.publish(trendEvent(account.accountId))));

  // The master that holds the delivery queue dies once a part of the deliveries went out.
  const [holder] = await mastersOf(cluster.url, [`${queuePrefix(prefix, QUEUES.webhookDeliveries)}:x`]);
  const victim = cluster.ports.indexOf(Number(holder.split(":")[1]));
  await waitFor(async () => rx.requests.length >= 60, { timeoutMs: 60_000, everyMs: 5 });
  const sentinel = `${queuePrefix(prefix, QUEUES.webhookDeliveries)}:sentinel`; // same slot as the queue
  await s.gw.deps.redis.set(sentinel, "before");
  cluster.kill(victim);
  const atKill = rx.requests.length;
  const concurrency = s.gw.deps.config.WEBHOOK_CONCURRENCY;
  await sleep(1000);
  await cluster.restart(victim); // same slots, no data: its queues' jobs are gone
  expect(atKill).toBeLessThan(n); // it died mid-load
  expect(await s.gw.deps.redis.get(sentinel)).toBeNull(); // and came back empty

  const db = s.gw.deps.db;
  await waitFor(async () => (await db.webhookDelivery.count({ where: { subscriptionId: sub, status: "succeeded" } })) === n, { timeoutMs: 120_000, everyMs: 250 });
  await sleep(1500); // more sweeps: nothing late trickles in
  const perDelivery = countBy(rx.requests.map((r) => r.webhookId));
  const extra = [...perDelivery.values()].reduce((a, c) => a + c - 1, 0);
  console.log(`cluster master restarted empty: ${n} deliveries, ${atKill} received at the kill; afterwards ${extra} sent twice`);
  expect(perDelivery.size).toBe(n); // none lost
  expect(extra).toBeLessThanOrEqual(concurrency); // at most what the worker had in flight
  const closing = Date.now();
  await Promise.all(s.workers.map((w) => w.close())); // idempotent: the cleanup's close finds them closed
  console.log(`workers closed in ${Date.now() - closing} ms after the restart`);
}, 180_000);
