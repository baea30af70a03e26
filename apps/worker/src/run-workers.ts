import { Worker } from "bullmq";
import type { Config } from "@trendgate/config";
import { createDb } from "@trendgate/db";
import type { Logger } from "@trendgate/logger";
import { createRedis, Queues } from "@trendgate/queues";
import { ALL_PROCESSORS, type Processor, type WorkerDeps } from "./processors/index.ts";

export interface RunningWorkers {
  workers: Worker[];
  deps: WorkerDeps;
  /** Stops taking jobs, waits for running ones to finish, closes connections. */
  close(): Promise<void>;
}

/** Starts a BullMQ Worker for each selected queue (all when `queues` is empty). Used by main.ts and by tests. */
export function startWorkers(config: Config, logger: Logger, queues?: string[]): RunningWorkers {
  const selected = selectProcessors(queues);
  const db = createDb(config.DATABASE_URL, { poolSize: Math.min(20, config.WORKER_CONCURRENCY + 2) });
  const producer = createRedis(config.REDIS_URL, "client");
  const deps: WorkerDeps = { config, logger, db, queues: new Queues(producer, config.QUEUE_PREFIX) };
  const connection = createRedis(config.REDIS_URL, "worker");

  const workers = selected.map((p) => {
    const w = new Worker(p.queue, (job) => p.process(job, deps), {
      connection,
      prefix: config.QUEUE_PREFIX,
      concurrency: p.concurrency ?? config.WORKER_CONCURRENCY,
    });
    w.on("failed", (job, err) => logger.warn({ queue: p.queue, job_id: job?.id, attempt: job?.attemptsMade, err: err.message }, "job failed"));
    w.on("error", (err) => logger.error({ queue: p.queue, err: err.message }, "worker error"));
    return w;
  });
  logger.info({ queues: selected.map((p) => p.queue) }, "workers started");

  return {
    workers,
    deps,
    async close() {
      await Promise.all(workers.map((w) => w.close()));
      await deps.queues.close();
      connection.disconnect();
      producer.disconnect();
      await db.$disconnect();
    },
  };
}

export function selectProcessors(queues?: string[]): Processor[] {
  if (!queues?.length) return ALL_PROCESSORS;
  const unknown = queues.filter((q) => !ALL_PROCESSORS.some((p) => p.queue === q));
  if (unknown.length) throw new Error(`Unknown queue(s): ${unknown.join(", ")}. Known: ${ALL_PROCESSORS.map((p) => p.queue).join(", ")}`);
  return ALL_PROCESSORS.filter((p) => queues.includes(p.queue));
}
