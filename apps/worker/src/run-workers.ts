import { Worker } from "bullmq";
import type { Config } from "@trendgate/config";
import { QUEUES } from "@trendgate/contracts";
import { SecretBox } from "@trendgate/crypto";
import { createDb } from "@trendgate/db";
import { OutboundClient, OutboundGuard } from "@trendgate/delivery";
import type { Logger } from "@trendgate/logger";
import { createRedis, Queues } from "@trendgate/queues";
import { ALL_PROCESSORS, type Processor, type ProcessorFactory, type WorkerDeps } from "./processors/index.ts";
import { OutboxSweeper } from "./sweepers/outbox-sweeper.ts";

export interface RunningWorkers {
  workers: Worker[];
  deps: WorkerDeps;
  sweeper: OutboxSweeper;
  /** Stops taking jobs, waits for running ones to finish, flushes buffers, closes connections. */
  close(): Promise<void>;
}

export function createWorkerDeps(config: Config, logger: Logger): WorkerDeps {
  const guard = new OutboundGuard(config.OUTBOUND_ALLOWLIST);
  const outbound = (maxResponseBytes: number, userAgent: string) => new OutboundClient({
    guard, connectTimeoutMs: config.OUTBOUND_CONNECT_TIMEOUT_MS, timeoutMs: config.OUTBOUND_TIMEOUT_MS, maxResponseBytes, userAgent,
  });
  return {
    config,
    logger,
    db: createDb(config.DATABASE_URL, { poolSize: 20 }),
    queues: new Queues(createRedis(config.REDIS_URL, "client"), config.QUEUE_PREFIX),
    outbound: outbound(config.OUTBOUND_RESPONSE_MAX_BYTES, "Trendgate-Webhooks/0.1 (+https://trendgate.dev/docs/webhooks)"),
    // Provider APIs answer with pages of data: same guard and timeouts, a larger read limit.
    connectors: outbound(config.CONNECTOR_RESPONSE_MAX_BYTES, "Trendgate/0.1 (+https://trendgate.dev)"),
    secrets: new SecretBox(config.ENCRYPTION_KEY),
  };
}

/** Starts a BullMQ Worker for each selected queue (all when `queues` is empty). Used by main.ts and by tests. */
export function startWorkers(config: Config, logger: Logger, queues?: string[]): RunningWorkers {
  const selected = selectProcessors(queues);
  const deps = createWorkerDeps(config, logger);
  const connection = createRedis(config.REDIS_URL, "worker");
  const processors: Processor[] = [];

  const workers = selected.map((factory) => {
    const p = factory.create(deps);
    processors.push(p);
    const w = new Worker(factory.queue, (job, token) => p.process(job, token), {
      connection,
      prefix: config.QUEUE_PREFIX,
      concurrency: p.concurrency ?? config.WORKER_CONCURRENCY,
      lockDuration: config.WORKER_LOCK_DURATION_MS,
      stalledInterval: config.WORKER_STALLED_INTERVAL_MS,
    });
    w.on("failed", (job, err) => logger.warn({ queue: factory.queue, job_id: job?.id, attempt: job?.attemptsMade, err: err.message }, "job failed"));
    w.on("error", (err) => logger.error({ queue: factory.queue, err: err.message }, "worker error"));
    return w;
  });
  for (const p of processors) p.start?.().catch((err) => logger.error({ err: String(err) }, "processor start failed"));
  const names = selected.map((p) => p.queue);
  const sweeper = new OutboxSweeper(deps, { deliveries: names.includes(QUEUES.webhookDeliveries), events: names.includes(QUEUES.trendEvents) });
  if (names.includes(QUEUES.webhookDeliveries) || names.includes(QUEUES.trendEvents)) sweeper.start();
  logger.info({ queues: names }, "workers started");

  return {
    workers,
    deps,
    sweeper,
    async close() {
      await sweeper.stop();
      await Promise.all(workers.map((w) => w.close()));
      await Promise.all(processors.map((p) => p.close?.()));
      await deps.queues.close();
      deps.queues.connection.disconnect();
      connection.disconnect();
      await deps.db.$disconnect();
    },
  };
}

export function selectProcessors(queues?: string[]): ProcessorFactory[] {
  if (!queues?.length) return ALL_PROCESSORS;
  const unknown = queues.filter((q) => !ALL_PROCESSORS.some((p) => p.queue === q));
  if (unknown.length) throw new Error(`Unknown queue(s): ${unknown.join(", ")}. Known: ${ALL_PROCESSORS.map((p) => p.queue).join(", ")}`);
  return ALL_PROCESSORS.filter((p) => queues.includes(p.queue));
}
