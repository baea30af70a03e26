import { Queue } from "bullmq";
import { QUEUES } from "@trendgate/contracts";
import { createLogger } from "@trendgate/logger";
import { startWorkers } from "../../apps/worker/src/run-workers.ts";
import { DETECTION_SCHEDULER_ID } from "../../apps/worker/src/schedulers/index.ts";
import { waitFor } from "../helpers/config.ts";
import { signal, startGateway } from "../helpers/gateway.ts";

// Queues moved from `<prefix>:<queue>` to `<prefix>:{<queue>}` (a Redis Cluster hash tag per queue). A fleet upgraded
// with jobs still under the old keys must not strand them: signal batches accepted (202) by the previous version
// are stored, and the old job schedulers are removed rather than left to tick under the old keys forever.

test("jobs left under the previous queue keys are drained by an upgraded worker; old schedulers are removed", async () => {
  const gw = await startGateway({ SCHEDULER_CHECK_SECONDS: "1" });
  const config = gw.deps.config;
  const oldSignals = new Queue(QUEUES.signals, { connection: gw.deps.redis, prefix: config.QUEUE_PREFIX }); // the old keys
  const oldDetection = new Queue(QUEUES.trendDetection, { connection: gw.deps.redis, prefix: config.QUEUE_PREFIX });
  const a = await gw.account();
  const signals = [signal({ id: "legacy-1" }), signal({ id: "legacy-2", count: 3 })];
  await oldSignals.add(QUEUES.signals, { account_id: a.accountId, batch_id: "batch_legacy1", signals, indexes: [0, 1] }, { jobId: "batch_legacy1" });
  await oldDetection.upsertJobScheduler(DETECTION_SCHEDULER_ID, { every: 60_000 }, { name: QUEUES.trendDetection, data: {} });
  expect(await oldSignals.getWaitingCount()).toBe(1);

  const workers = startWorkers(config, createLogger({ level: "silent" }), [QUEUES.signals, QUEUES.trendDetection]);
  try {
    await waitFor(async () => (await gw.deps.db.signal.count({ where: { accountId: a.accountId } })) === 2, { timeoutMs: 15_000 });
    await waitFor(async () => (await oldDetection.getJobSchedulers()).length === 0);
    expect(await oldDetection.getJobCountByTypes("waiting", "delayed", "prioritized")).toBe(0); // its next job went too
    expect(await oldSignals.getJobCountByTypes("waiting", "active", "delayed", "prioritized")).toBe(0);
    // The current keys have their own scheduler, kept by the worker as usual.
    await waitFor(async () => (await gw.deps.queues.get(QUEUES.trendDetection).getJobScheduler(DETECTION_SCHEDULER_ID)) ?? null);
  } finally {
    await workers.close();
    await oldSignals.obliterate({ force: true });
    await oldDetection.obliterate({ force: true });
    await oldSignals.close();
    await oldDetection.close();
    await gw.close();
  }
});
