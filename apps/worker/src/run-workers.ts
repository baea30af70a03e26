import { Worker } from "bullmq";
import type { Config } from "@trendgate/config";
import { OUTBOX_QUEUES, QUEUES } from "@trendgate/contracts";
import { Connections } from "@trendgate/connections";
import { registry as defaultRegistry, type ConnectorRegistry } from "@trendgate/connectors";
import { SecretBox } from "@trendgate/crypto";
import { createDb } from "@trendgate/db";
import { AttemptFailedError, OutboundClient, OutboundGuard } from "@trendgate/delivery";
import type { Logger } from "@trendgate/logger";
import { createRedis, isCluster, queuePrefix, Queues } from "@trendgate/queues";
import { FetchWatchdog } from "./fetch-watchdog.ts";
import { LegacyDrain } from "./legacy-drain.ts";
import { ALL_PROCESSORS, type Processor, type ProcessorFactory, type WorkerDeps } from "./processors/index.ts";
import { SchedulerKeeper, schedules } from "./schedulers/index.ts";
import { OutboxSweeper } from "./sweepers/outbox-sweeper.ts";

export interface RunningWorkers {
  workers: Worker[];
  deps: WorkerDeps;
  sweeper: OutboxSweeper;
  /** Keeps the job schedulers of the selected queues in Redis (re-creates them after a FLUSHALL). */
  schedulers: SchedulerKeeper;
  /**
   * Stops taking jobs at once, waits for the running ones to finish, flushes buffers, closes connections. A running
   * outbox sweep is given SWEEPER_STOP_WAIT_MS, then cut (see close()). Safe to call more than once.
   */
  close(): Promise<void>;
}

/** How long close() waits for a running outbox sweep before cutting it (the jobs are draining meanwhile). */
export const SWEEPER_STOP_WAIT_MS = 1000;
/** How long close() waits for the database pool to end (a cut sweep may still hold one of its clients). */
const DB_CLOSE_WAIT_MS = 2000;
/** How long a queue's BullMQ close may take once none of its jobs runs any more (see closeWorker). */
const IDLE_CLOSE_WAIT_MS = 3000;

/** Waits for `p` at most `ms`; true when it settled in time. Never rejects (a late rejection is swallowed). */
function settleWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const settled = p.then(() => true, () => true);
  return Promise.race([settled, new Promise<boolean>((r) => { timer = setTimeout(() => r(false), ms); })]).finally(() => clearTimeout(timer));
}

export function createWorkerDeps(config: Config, logger: Logger, registry: ConnectorRegistry = defaultRegistry): WorkerDeps {
  const db = createDb(config.DATABASE_URL, { poolSize: 20, connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS });
  const secrets = new SecretBox(config.ENCRYPTION_KEY);
  const guard = new OutboundGuard(config.OUTBOUND_ALLOWLIST);
  return {
    config,
    logger,
    db,
    queues: new Queues(createRedis(config.REDIS_URL, "client"), config.QUEUE_PREFIX),
    // Webhook deliveries; provider calls go through connector-core's ProviderHttp / providerRequest.
    outbound: new OutboundClient({
      guard, connectTimeoutMs: config.OUTBOUND_CONNECT_TIMEOUT_MS, timeoutMs: config.OUTBOUND_TIMEOUT_MS,
      maxResponseBytes: config.OUTBOUND_RESPONSE_MAX_BYTES, userAgent: "Trendgate-Webhooks/0.1 (+https://trendgate.dev/docs/webhooks)",
    }),
    secrets,
    registry,
    connections: new Connections({ db, secrets, config, providers: registry, logger }),
  };
}

/** Starts a BullMQ Worker for each selected queue (all when `queues` is empty). Used by main.ts and by tests. */
export function startWorkers(config: Config, logger: Logger, queues?: string[]): RunningWorkers {
  const selected = selectProcessors(queues);
  const deps = createWorkerDeps(config, logger);
  const connection = createRedis(config.REDIS_URL, "worker");
  const processors: Processor[] = [];

  const running = selected.map(() => 0); // jobs in progress per queue (closeWorker, the fetch watchdog)
  const started = selected.map(() => 0); // jobs ever started per queue (the fetch watchdog)
  for (const factory of selected) processors.push(factory.create(deps));
  const newWorker = (i: number) => {
    const { queue } = selected[i];
    const p = processors[i];
    const w = new Worker(queue, async (job, token) => {
      running[i]++;
      started[i]++;
      try { return await p.process(job, token); } finally { running[i]--; }
    }, {
      connection,
      prefix: queuePrefix(config.QUEUE_PREFIX, queue),
      concurrency: p.concurrency ?? config.WORKER_CONCURRENCY,
      lockDuration: config.WORKER_LOCK_DURATION_MS,
      stalledInterval: config.WORKER_STALLED_INTERVAL_MS,
    });
    // A delivery attempt the peer failed is the receiver's problem, recorded in Postgres: info, not a worker warning.
    w.on("failed", (job, err) => logger[err instanceof AttemptFailedError ? "info" : "warn"]({ queue, job_id: job?.id, attempt: job?.attemptsMade, err: err.message }, "job failed"));
    w.on("error", (err) => logger.error({ queue, err: err.message }, "worker error"));
    return w;
  };
  const workers = selected.map((_, i) => newWorker(i));
  const watchdog = new FetchWatchdog(deps.queues, selected.map((f, i) => ({
    queue: f.queue,
    worker: () => workers[i],
    running: () => running[i],
    started: () => started[i],
    replace() {
      const parked = workers[i];
      workers[i] = newWorker(i);
      void parked.close(true).catch(() => {}); // force: it runs no job; stops its timers and connections
    },
  })), { everyMs: config.WORKER_WATCHDOG_SECONDS * 1000, logger });
  watchdog.start();
  for (const p of processors) p.start?.().catch((err) => logger.error({ err: String(err) }, "processor start failed"));
  const legacy = isCluster(config.REDIS_URL) ? null : new LegacyDrain(connection, config.QUEUE_PREFIX, logger);
  legacy?.start(selected.map((f, i) => ({ queue: f.queue, process: (job, token) => processors[i].process(job, token), concurrency: processors[i].concurrency ?? config.WORKER_CONCURRENCY })))
    .catch((err) => logger.warn({ err: String(err) }, "legacy queue drain check failed"));
  const names = selected.map((p) => p.queue);
  const keeper = new SchedulerKeeper(deps.queues, schedules(config).filter((s) => names.includes(s.queue)),
    { checkMs: config.SCHEDULER_CHECK_SECONDS * 1000, logger });
  keeper.start();
  const outbox = OUTBOX_QUEUES.filter((q) => names.includes(q)); // each process sweeps the outbox queues it runs
  const sweeper = new OutboxSweeper(deps, { deliveries: names.includes(QUEUES.webhookDeliveries), events: names.includes(QUEUES.trendEvents), outbox });
  if (names.includes(QUEUES.webhookDeliveries) || names.includes(QUEUES.trendEvents) || outbox.length) sweeper.start();
  logger.info({ queues: names }, "workers started");

  let closing: Promise<void> | undefined;
  async function close() {
    // 1. No new periodic work: both stop() calls clear their timers synchronously, before they wait for anything.
    const watchdogStopped = watchdog.stop(); // no worker swapped in while they close
    const keeperStopped = keeper.stop();
    const sweeperStopped = sweeper.stop();
    for (const p of processors) p.stopping?.(); // long jobs (a retention pass) wind up between their steps
    // 2. Every queue stops taking jobs at once, and the active jobs finish (a delivery is bounded by its HTTP
    //    timeouts). Meanwhile a running sweep gets SWEEPER_STOP_WAIT_MS; after that it is cut off, not awaited: a
    //    sweep only re-queues lost jobs under deterministic job ids, so cutting it loses nothing and the next sweep
    //    (on any worker) does the rest. Waiting for it is what once held shutdown for the whole timeout while jobs
    //    kept being taken, and the forced exit then cut deliveries in flight (duplicates).
    const [, sweepDone] = await Promise.all([
      Promise.all([...workers.map((w, i) => closeWorker(w, () => running[i] === 0, logger)), legacy?.close()]),
      settleWithin(sweeperStopped, SWEEPER_STOP_WAIT_MS),
    ]);
    if (!sweepDone) logger.warn({ waited_ms: SWEEPER_STOP_WAIT_MS }, "outbox sweep still running at shutdown; cut off (the next sweep re-queues what it did not)");
    await Promise.all(processors.map((p) => p.close?.()));
    await settleWithin(keeperStopped, SWEEPER_STOP_WAIT_MS);
    await settleWithin(watchdogStopped, SWEEPER_STOP_WAIT_MS);
    await deps.queues.close();
    deps.queues.connection.disconnect();
    connection.disconnect();
    // A cut sweep may still hold a pool client in its transaction, and pool.end() waits for it: bounded. When the
    // process exits its connection closes and Postgres rolls the transaction back.
    if (!(await settleWithin(deps.db.$disconnect(), DB_CLOSE_WAIT_MS))) logger.warn("database pool still busy at shutdown (a cut sweep); not waiting for it");
  }

  return {
    workers,
    deps,
    sweeper,
    schedulers: keeper,
    close: () => (closing ??= close()),
  };
}

/**
 * Closes one queue's BullMQ worker: waits for its running jobs as long as they take (w.close() does), but not for
 * ever for the rest. On a Redis Cluster, BullMQ's fetch loop can stay parked on a blocking connection that does not
 * come back (seen after a master restart, under load), and w.close() then waits for that loop for good. Once none of
 * the queue's jobs runs any more, the close gets IDLE_CLOSE_WAIT_MS (a finished job's completion is a Redis round
 * trip); after that nothing of this worker is left to lose, and the shutdown goes on.
 */
async function closeWorker(w: Worker, idle: () => boolean, logger: Logger): Promise<void> {
  const closed = w.close();
  while (!idle() && !(await settleWithin(closed, 100))) { /* its jobs are still running */ }
  if (!(await settleWithin(closed, IDLE_CLOSE_WAIT_MS)))
    logger.warn({ queue: w.name, waited_ms: IDLE_CLOSE_WAIT_MS }, "queue worker's job fetch did not stop after its last job; not waiting for it");
}

export function selectProcessors(queues?: string[]): ProcessorFactory[] {
  if (!queues?.length) return ALL_PROCESSORS;
  const unknown = queues.filter((q) => !ALL_PROCESSORS.some((p) => p.queue === q));
  if (unknown.length) throw new Error(`Unknown queue(s): ${unknown.join(", ")}. Known: ${ALL_PROCESSORS.map((p) => p.queue).join(", ")}`);
  return ALL_PROCESSORS.filter((p) => queues.includes(p.queue));
}
