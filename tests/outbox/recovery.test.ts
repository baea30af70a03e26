import { spawn } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { addOutboxMessages, cancelOutboxMessages, createDb, recordOutboxAttempt, type Db } from "@trendgate/db";
import { createLogger } from "@trendgate/logger";
import { dispatchOutbox, outboxJobId } from "@trendgate/queues";
import { createWorkerDeps } from "../../apps/worker/src/run-workers.ts";
import { testConfig, waitFor } from "../helpers/config.ts";
import { onCleanup, privateRedis, runCleanups, sleep } from "../helpers/faults-proc-kit.ts";
import { nodeArgs } from "../helpers/process.ts";
import { startReceiver } from "../helpers/receiver.ts";
import { addAndDispatch, message, newAccount, posted, QUEUE, startOutboxWorker } from "./kit.ts";

// The shared outbox loses nothing: Postgres holds every message before its job exists, so a job
// lost with Redis (deleted, FLUSHALL) or a worker killed mid-send (kill -9) is made good by the outbox sweeper and
// BullMQ's stalled-job check, and a message is sent once (at least once only for sends cut off by the kill).

let db: Db;
beforeAll(() => { db = createDb(process.env.DATABASE_URL!); });
afterAll(() => db.$disconnect());
afterEach(async () => {
  await runCleanups();
  await db.outboxMessage.updateMany({ where: { status: "pending" }, data: { status: "cancelled" } });
});

const RECOVERY_ENV = { OUTBOX_RETRY_SCHEDULE_SECONDS: "0.2,0.2", SWEEP_INTERVAL_MS: "300", SWEEP_GRACE_SECONDS: "1" };

/** The producer's side (a gateway or another worker): database and queues, no consumer. */
function producer(config: ReturnType<typeof testConfig>) {
  const deps = createWorkerDeps(config, createLogger({ level: "silent" }));
  onCleanup(async () => { await deps.queues.close(); deps.queues.connection.disconnect(); await deps.db.$disconnect(); });
  return deps;
}

async function receiver(respond?: Parameters<typeof startReceiver>[0]) {
  const rx = await startReceiver(respond ?? (() => ({ status: 200, body: "ok" })));
  onCleanup(() => rx.close());
  return rx;
}

const countWhere = (ids: string[], status: string) => db.outboxMessage.count({ where: { id: { in: ids }, status } });
const perMessage = (received: { body: string }[]) => {
  const m = new Map<string, number[]>();
  for (const p of posted(received as never)) (m.get(p.message_id) ?? m.set(p.message_id, []).get(p.message_id)!).push(p.attempt);
  return m;
};

test("a committed message that was never dispatched (crash between commit and dispatch) is sent once by the sweeper; a job without its row sends nothing", async () => {
  const rx = await receiver();
  const config = testConfig(RECOVERY_ENV);
  const p = producer(config);
  const accountId = await newAccount(db);
  // Committed, never dispatched.
  const [kept] = await db.$transaction((tx) => addOutboxMessages(tx, [message(accountId, { path: "/committed" })]));
  // Dispatched, but its transaction rolled back: the job has no row behind it.
  let ghost: { id: string; queue: string; next_attempt_at: Date } | undefined;
  await db.$transaction(async (tx) => {
    [ghost] = await addOutboxMessages(tx, [message(accountId, { path: "/rolled-back" })]);
    throw new Error("rollback");
  }).catch(() => {});
  await dispatchOutbox(p.queues, [ghost!]);

  const w = startOutboxWorker(config, rx.url(""));
  onCleanup(() => w.close());
  await waitFor(async () => (await countWhere([kept.id], "succeeded")) === 1, { timeoutMs: 15_000 });
  await waitFor(async () => (await p.queues.get(QUEUE).getJob(outboxJobId(ghost!.id, 1)))?.returnvalue);
  expect((await p.queues.get(QUEUE).getJob(outboxJobId(ghost!.id, 1)))!.returnvalue).toEqual({ skipped: "message deleted" });
  await sleep(1000); // more sweeps
  expect(posted(rx.received)).toEqual([{ message_id: kept.id, attempt: 1 }]);
});

test("jobs deleted from Redis (a first attempt and a due retry) are re-queued by the sweeper and each sent exactly once more", async () => {
  const rx = await receiver();
  const config = testConfig(RECOVERY_ENV);
  const p = producer(config);
  const accountId = await newAccount(db);
  const [first] = await addAndDispatch(db, p.queues, [message(accountId, { path: "/first" })]);
  const [retry] = await db.$transaction((tx) => addOutboxMessages(tx, [message(accountId, { path: "/retry" })]));
  await recordOutboxAttempt(db, { messageId: retry.id, attempt: 1, outcome: "retrying", errorClass: "unavailable", durationMs: 1, nextRetryAt: new Date() });
  await dispatchOutbox(p.queues, [{ ...retry, attempts: 1 }]); // its attempt-2 job
  const queue = p.queues.get(QUEUE);
  expect(await queue.getWaitingCount()).toBe(2);
  await queue.remove(outboxJobId(first, 1));
  await queue.remove(outboxJobId(retry.id, 2));
  expect(await queue.getWaitingCount()).toBe(0);

  const w = startOutboxWorker(config, rx.url(""));
  onCleanup(() => w.close());
  await waitFor(async () => (await countWhere([first, retry.id], "succeeded")) === 2, { timeoutMs: 15_000 });
  await sleep(1000);
  expect(perMessage(rx.received)).toEqual(new Map([[first, [1]], [retry.id, [2]]]));
});

test("after a FLUSHALL the sweeper re-queues every orphaned message and each is sent once; messages not due or cancelled stay as they are", async () => {
  const redis = await privateRedis();
  const rx = await receiver();
  const config = testConfig({ ...RECOVERY_ENV, REDIS_URL: redis.url });
  const p = producer(config);
  const accountId = await newAccount(db);

  // 1,200 due first attempts (more than one sweep chunk), 100 due retries (attempt 1 recorded), 20 not due for an
  // hour, 20 cancelled.
  const first = await addAndDispatch(db, p.queues, Array.from({ length: 1200 }, (_, i) => message(accountId, { path: `/f/${i % 4}` })));
  const retryRows = await db.$transaction((tx) => addOutboxMessages(tx, Array.from({ length: 100 }, () => message(accountId, { path: "/r" }))));
  for (const r of retryRows)
    await recordOutboxAttempt(db, { messageId: r.id, attempt: 1, outcome: "retrying", errorClass: "rate_limited", durationMs: 1, nextRetryAt: new Date(Date.now() - 5000) });
  await dispatchOutbox(p.queues, retryRows.map((r) => ({ ...r, attempts: 1 })));
  const notDue = await addAndDispatch(db, p.queues, Array.from({ length: 20 }, () => message(accountId, { path: "/later" }, { notBefore: new Date(Date.now() + 3_600_000) })));
  const cancelled = await addAndDispatch(db, p.queues, Array.from({ length: 20 }, () => message(accountId, { path: "/cancelled" }, { subjectId: "item_gone" })));
  await db.$transaction((tx) => cancelOutboxMessages(tx, "item_gone"));
  const queue = p.queues.get(QUEUE);
  expect(await queue.getJobCounts("waiting", "delayed")).toEqual({ waiting: 1320, delayed: 20 });

  expect(await redis.flushall()).toBe("OK");
  expect(await queue.getJobCounts("waiting", "delayed")).toEqual({ waiting: 0, delayed: 0 });

  const w = startOutboxWorker(config, rx.url(""));
  onCleanup(() => w.close());
  const due = [...first, ...retryRows.map((r) => r.id)];
  await waitFor(async () => (await countWhere(due, "succeeded")) === due.length, { timeoutMs: 40_000, everyMs: 250 });
  await sleep(1000);

  const sent = perMessage(rx.received);
  expect(due.filter((id) => sent.get(id)?.length !== 1)).toEqual([]); // each once
  expect(rx.received).toHaveLength(due.length);
  expect(retryRows.every((r) => sent.get(r.id)![0] === 2)).toBe(true); // the retries went out as attempt 2
  expect(await db.outboxAttempt.count({ where: { messageId: { in: due } } })).toBe(1200 + 2 * 100);
  expect(await countWhere(notDue, "pending")).toBe(20);
  expect(await countWhere(cancelled, "cancelled")).toBe(20);
  for (const id of notDue) expect(await queue.getJob(outboxJobId(id, 1))).toBeUndefined();
}, 60_000);

test("a worker killed mid-load (kill -9) loses no message; only sends cut off by the kill may go out twice, and every attempt is recorded once", async () => {
  const rx = await receiver(() => ({ status: 200, body: "ok", delayMs: 30 }));
  const config = testConfig({ ...RECOVERY_ENV, WORKER_LOCK_DURATION_MS: "2000", WORKER_STALLED_INTERVAL_MS: "1000" });
  const p = producer(config);
  const accountId = await newAccount(db);
  const ids = await addAndDispatch(db, p.queues, Array.from({ length: 300 }, (_, i) => message(accountId, { path: `/k/${i % 5}` })));

  const workerProcess = () => {
    const child = spawn(process.execPath, nodeArgs(path.resolve("tests/outbox/fixtures/outbox-worker.ts")), {
      env: { ...process.env, QUEUE_PREFIX: config.QUEUE_PREFIX, ...RECOVERY_ENV, WORKER_LOCK_DURATION_MS: "2000", WORKER_STALLED_INTERVAL_MS: "1000", RECEIVER_URL: rx.url("") },
      stdio: ["ignore", "ignore", "inherit", "ipc"], cwd: os.tmpdir(),
    });
    const exited = new Promise((r) => child.once("exit", r));
    onCleanup(async () => { if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL"); await exited; });
    return { child, exited };
  };
  const first = workerProcess();
  await waitFor(async () => rx.received.length >= 60, { timeoutMs: 30_000, everyMs: 10 });
  first.child.kill("SIGKILL");
  await first.exited;
  const sentBeforeKill = rx.received.length;
  expect(sentBeforeKill).toBeLessThan(ids.length); // it died mid-load

  workerProcess();
  await waitFor(async () => (await countWhere(ids, "succeeded")) === ids.length, { timeoutMs: 40_000, everyMs: 250 });
  await sleep(1000);

  const sent = perMessage(rx.received);
  expect(ids.filter((id) => !sent.has(id))).toEqual([]); // none lost
  const twice = ids.filter((id) => sent.get(id)!.length > 1);
  expect(twice.length).toBeLessThanOrEqual(20); // at most the sends in flight at the kill (concurrency 20)
  expect(ids.filter((id) => sent.get(id)!.length > 2)).toEqual([]);
  // One attempt, recorded once, per message (a send cut off by the kill was never recorded; its re-run is attempt 1).
  const attempts = await db.outboxAttempt.groupBy({ by: ["messageId"], where: { messageId: { in: ids } }, _count: true, _max: { attempt: true } });
  expect(attempts).toHaveLength(ids.length);
  expect(attempts.every((a) => a._count === 1 && a._max.attempt === 1)).toBe(true);
}, 90_000);
