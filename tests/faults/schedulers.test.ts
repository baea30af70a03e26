import { QUEUES } from "@trendgate/contracts";
import { createAccount, createDb, insertSignals, type Db } from "@trendgate/db";
import { createLogger, REDACT_PATHS } from "@trendgate/logger";
import { pino } from "pino";
import { createRedis, Queues } from "@trendgate/queues";
import { startWorkers } from "../../apps/worker/src/run-workers.ts";
import { DETECTION_SCHEDULER_ID, SchedulerKeeper, SOCIAL_POLL_SCHEDULER_ID, schedules } from "../../apps/worker/src/schedulers/index.ts";
import { testConfig, waitFor } from "../helpers/config.ts";
import { onCleanup, privateRedis, runCleanups } from "../helpers/faults-proc-kit.ts";

// Job schedulers live in Redis only. A FLUSHALL (or a Redis restart without persistence) deletes them while the
// workers keep running, and BullMQ never re-creates one by itself: detection and polling would silently stop. Every
// worker process checks them every SCHEDULER_CHECK_SECONDS and re-creates what is missing (apps/worker/src/schedulers).
// Each test has its own redis-server, so FLUSHALL touches nobody else.

const silent = createLogger({ level: "silent" });
const HOUR = 3600_000;
afterEach(runCleanups);

let db: Db;
beforeAll(() => { db = createDb(process.env.DATABASE_URL!); });
afterAll(async () => { await db.$disconnect(); });

/** 24 flat hours of 100 mentions, then a burst of 500 in the last complete hour: detection must call it a trend. */
async function seedBurst(accountId: string, topic: string) {
  const last = Math.floor(Date.now() / HOUR) * HOUR - HOUR;
  const signals = Array.from({ length: 25 }, (_, i) => ({
    id: `${topic}-${i}`, source: "x", topic, category: "tech/ai", count: i === 24 ? 500 : 100,
    observed_at: new Date(last - (24 - i) * HOUR + 60_000).toISOString(),
  }));
  expect(await insertSignals(db, accountId, signals)).toBe(25);
}

async function nextJobState(queues: Queues, queue: (typeof QUEUES)[keyof typeof QUEUES], id: string) {
  const s = await queues.get(queue).getJobScheduler(id);
  if (!s || s.next == null) return null;
  const job = await queues.get(queue).getJob(`repeat:${id}:${s.next}`);
  return job ? { every: s.every, state: await job.getState() } : null;
}

test("after a FLUSHALL with workers running, the detection scheduler and its next job come back and a detection pass runs", async () => {
  const redis = await privateRedis();
  const INTERVAL_S = 4;
  const config = testConfig({ REDIS_URL: redis.url, DETECTION_INTERVAL_SECONDS: String(INTERVAL_S), SCHEDULER_CHECK_SECONDS: "1" });
  const workers = startWorkers(config, silent, [QUEUES.trendDetection]);
  onCleanup(() => workers.close());
  const queues = workers.deps.queues;
  const queue = queues.get(QUEUES.trendDetection);

  // Running normally: the scheduler exists and its ticks run.
  await waitFor(async () => (await queue.getCompletedCount()) >= 1, { timeoutMs: 20_000 });
  expect(await nextJobState(queues, QUEUES.trendDetection, DETECTION_SCHEDULER_ID)).toMatchObject({ every: INTERVAL_S * 1000 });

  expect(await redis.flushall()).toBe("OK");
  const flushedAt = Date.now();
  expect(await queue.getJobScheduler(DETECTION_SCHEDULER_ID)).toBeUndefined(); // gone, as in the incident

  // A burst that only a pass after the flush can find.
  const account = await createAccount(db, "scheduler flush");
  await seedBurst(account.id, `Flush burst ${flushedAt}`);

  // The scheduler is back with a queued next job...
  const back = await waitFor(() => nextJobState(queues, QUEUES.trendDetection, DETECTION_SCHEDULER_ID), { timeoutMs: 15_000 });
  expect(back.every).toBe(INTERVAL_S * 1000);
  expect(["delayed", "waiting", "active", "completed"]).toContain(back.state);
  // ...and detection resumed: the burst becomes a trend and its event is published.
  const event = await waitFor(() => db.trendEventRecord.findFirst({ where: { accountId: account.id } }), { timeoutMs: 20_000 });
  expect(event.type).toBe("trend.detected");
  expect((event.payload as { trend_name: string }).trend_name).toBe(`Flush burst ${flushedAt}`);
  // Within one detection interval of the flush (plus one check and the pass itself; generous for a loaded box).
  expect(event.createdAt.getTime() - flushedAt).toBeLessThan((INTERVAL_S + 1) * 1000 + 10_000);
}, 60_000);

test("every scheduler of the fleet is re-created by the check, once however many workers check at once", async () => {
  const redis = await privateRedis();
  const config = testConfig({ REDIS_URL: redis.url, SOCIAL_POLL_INTERVAL_SECONDS: "600", DETECTION_INTERVAL_SECONDS: "600" });
  // Three worker processes' checks (no consumers: the next jobs stay queued where we can see them).
  const keepers = [1, 2, 3].map(() => {
    const queues = new Queues(createRedis(config.REDIS_URL, "client"), config.QUEUE_PREFIX);
    onCleanup(async () => { await queues.close(); queues.connection.disconnect(); });
    return { queues, keeper: new SchedulerKeeper(queues, schedules(config), { checkMs: 60_000, logger: silent }) };
  });
  const { queues } = keepers[0];

  expect((await Promise.all(keepers.map((k) => k.keeper.ensure()))).flat().sort().length).toBeGreaterThanOrEqual(2);
  const before = {
    detection: await nextJobState(queues, QUEUES.trendDetection, DETECTION_SCHEDULER_ID),
    social: await nextJobState(queues, QUEUES.socialPoll, SOCIAL_POLL_SCHEDULER_ID),
  };
  expect(before.detection).toMatchObject({ every: 600_000 });
  // Due connections are looked for every SOCIAL_POLL_TICK_SECONDS (30), not once per 600 s interval: a connection due
  // just after a tick is polled at most 30 s late instead of waiting up to a whole second interval.
  expect(before.social).toMatchObject({ every: 30_000 });
  // One next job per scheduler, whoever created it.
  expect(await queues.get(QUEUES.trendDetection).getJobCountByTypes("waiting", "delayed")).toBe(1);
  expect(await queues.get(QUEUES.socialPoll).getJobCountByTypes("waiting", "delayed")).toBe(1);

  // Healthy: further checks change nothing (no extra ticks, same next job).
  expect((await Promise.all(keepers.map((k) => k.keeper.ensure()))).flat()).toEqual([]);
  expect(await queues.get(QUEUES.trendDetection).getJobCountByTypes("waiting", "delayed")).toBe(1);

  await redis.flushall();
  expect(await queues.get(QUEUES.socialPoll).getJobScheduler(SOCIAL_POLL_SCHEDULER_ID)).toBeUndefined();
  await Promise.all(keepers.map((k) => k.keeper.ensure()));
  expect(await nextJobState(queues, QUEUES.trendDetection, DETECTION_SCHEDULER_ID)).toMatchObject({ every: 600_000 });
  expect(await nextJobState(queues, QUEUES.socialPoll, SOCIAL_POLL_SCHEDULER_ID)).toMatchObject({ every: 30_000 });
  expect(await queues.get(QUEUES.trendDetection).getJobCountByTypes("waiting", "delayed")).toBe(1);
  expect(await queues.get(QUEUES.socialPoll).getJobCountByTypes("waiting", "delayed")).toBe(1);

  // A scheduler whose next job vanished (a partial loss: the job's keys are gone, the scheduler's are not) is
  // repaired too. BullMQ refuses to remove a scheduler's job, so the loss is made by hand, as Redis would.
  const s = await queues.get(QUEUES.socialPoll).getJobScheduler(SOCIAL_POLL_SCHEDULER_ID);
  const jobId = `repeat:${SOCIAL_POLL_SCHEDULER_ID}:${s!.next}`;
  const keyPrefix = queues.get(QUEUES.socialPoll).keys.wait.replace(/:wait$/, ""); // BullMQ's own key names
  await queues.connection.multi().del(`${keyPrefix}:${jobId}`).lrem(`${keyPrefix}:wait`, 0, jobId).zrem(`${keyPrefix}:delayed`, jobId).exec();
  expect(await queues.get(QUEUES.socialPoll).getJobCountByTypes("waiting", "delayed")).toBe(0);
  expect(await keepers[1].keeper.ensure()).toEqual([SOCIAL_POLL_SCHEDULER_ID]);
  expect(await queues.get(QUEUES.socialPoll).getJobCountByTypes("waiting", "delayed")).toBe(1);
}, 60_000);

test("a worker that runs only some queues keeps only their schedulers", async () => {
  const redis = await privateRedis();
  const config = testConfig({ REDIS_URL: redis.url, SCHEDULER_CHECK_SECONDS: "1" });
  const workers = startWorkers(config, silent, [QUEUES.webhookDeliveries]);
  onCleanup(() => workers.close());
  await new Promise((r) => setTimeout(r, 1500));
  expect(await workers.deps.queues.get(QUEUES.trendDetection).getJobScheduler(DETECTION_SCHEDULER_ID)).toBeUndefined();
  expect(await workers.deps.queues.get(QUEUES.socialPoll).getJobScheduler(SOCIAL_POLL_SCHEDULER_ID)).toBeUndefined();
}, 30_000);

test("a first start on an empty Redis creates the schedulers quietly (info); a scheduler lost later is a warning", async () => {
  const redis = await privateRedis();
  const config = testConfig({ REDIS_URL: redis.url });
  const lines: { level: number; msg: string; lost?: string[]; schedulers?: string[] }[] = [];
  const logger = pino({ level: "info", redact: { paths: REDACT_PATHS } }, { write: (l: string) => lines.push(JSON.parse(l)) });
  const queues = new Queues(createRedis(config.REDIS_URL, "client"), config.QUEUE_PREFIX);
  onCleanup(async () => { await queues.close(); queues.connection.disconnect(); });
  const keeper = new SchedulerKeeper(queues, schedules(config), { checkMs: 60_000, logger });
  const WARN = 40;

  expect(await keeper.ensure()).toHaveLength(schedules(config).length);
  expect(lines.filter((l) => l.level >= WARN)).toEqual([]);
  expect(lines).toContainEqual(expect.objectContaining({ level: 30, msg: "job scheduler(s) created", schedulers: expect.arrayContaining([DETECTION_SCHEDULER_ID]) }));

  // Healthy: nothing to say.
  lines.length = 0;
  expect(await keeper.ensure()).toEqual([]);
  expect(lines).toEqual([]);

  // Gone while this process was running: Redis lost data, which an operator must hear about.
  await redis.flushall();
  expect(await keeper.ensure()).toHaveLength(schedules(config).length);
  expect(lines).toContainEqual(expect.objectContaining({ level: WARN, msg: "job scheduler(s) were missing or stalled in Redis; re-created", lost: expect.arrayContaining([DETECTION_SCHEDULER_ID, SOCIAL_POLL_SCHEDULER_ID]) }));
}, 30_000);
