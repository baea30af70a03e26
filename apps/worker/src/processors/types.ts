import type { Job } from "bullmq";
import type { Config } from "@trendgate/config";
import type { Connections } from "@trendgate/connections";
import type { ConnectorRegistry } from "@trendgate/connectors";
import type { QueueName } from "@trendgate/contracts";
import type { SecretBox } from "@trendgate/crypto";
import type { Db } from "@trendgate/db";
import type { OutboundClient } from "@trendgate/delivery";
import type { Logger } from "@trendgate/logger";
import type { Queues } from "@trendgate/queues";

/** What every processor may use; built once per worker process. */
export interface WorkerDeps {
  config: Config;
  logger: Logger;
  db: Db;
  queues: Queues;
  /** Webhook deliveries: responses kept up to OUTBOUND_RESPONSE_MAX_BYTES. */
  outbound: OutboundClient;
  secrets: SecretBox;
  registry: ConnectorRegistry;
  /** Browser-OAuth connections: valid access tokens (refreshed under a shared lock), needs_reauth. */
  connections: Connections;
}

export interface Processor {
  /** Jobs this process runs at once for this queue (defaults to WORKER_CONCURRENCY). */
  concurrency?: number;
  process(job: Job, token?: string): Promise<unknown>;
  /** Called once the worker runs (register job schedulers). */
  start?(): Promise<void>;
  /** Called as shutdown begins, before the active jobs are awaited: a long job should wind up (synchronous). */
  stopping?(): void;
  /** Called on shutdown after the worker stopped taking jobs (flush buffers). */
  close?(): Promise<void>;
}

/** One queue's consumer. Worker processes pick processors by queue name. */
export interface ProcessorFactory {
  queue: QueueName;
  create(deps: WorkerDeps): Processor;
}
