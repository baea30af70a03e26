import type { Job } from "bullmq";
import type { Config } from "@trendgate/config";
import type { QueueName } from "@trendgate/contracts";
import type { Db } from "@trendgate/db";
import type { Logger } from "@trendgate/logger";
import type { Queues } from "@trendgate/queues";

export interface WorkerDeps {
  config: Config;
  logger: Logger;
  db: Db;
  queues: Queues;
}

/** One queue's consumer: what it drains and how. Worker processes pick processors by queue name. */
export interface Processor {
  queue: QueueName;
  /** Jobs this process runs at once for this queue (defaults to WORKER_CONCURRENCY). */
  concurrency?: number;
  process(job: Job, deps: WorkerDeps): Promise<unknown>;
}
