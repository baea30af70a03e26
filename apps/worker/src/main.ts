import fs from "node:fs";
import { parseArgs } from "node:util";
import { loadConfigOrExit } from "@trendgate/config";
import { createLogger } from "@trendgate/logger";
import { startWorkers } from "./run-workers.ts";

// Usage: npm run worker -- [--queues signals-ingest,webhook-deliveries]   (default: every queue, or WORKER_QUEUES)
if (fs.existsSync(".env")) process.loadEnvFile(".env");
const config = loadConfigOrExit();
const logger = createLogger({ level: config.LOG_LEVEL, name: "worker" });
const { values } = parseArgs({ options: { queues: { type: "string" } } });
const queues = values.queues ? values.queues.split(",").map((s) => s.trim()) : config.WORKER_QUEUES;

let running: ReturnType<typeof startWorkers>;
try {
  running = startWorkers(config, logger, queues);
} catch (e) {
  process.stderr.write(`${(e as Error).message}\n`);
  process.exit(64);
}

// Graceful shutdown: worker.close() lets active jobs finish; a job cut off by a hard kill is picked up again by
// another worker after its lock expires (BullMQ stalled-job check), so no job is lost either way.
let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, "worker shutting down: finishing active jobs");
  setTimeout(() => { logger.error("shutdown timed out; exiting"); process.exit(1); }, config.SHUTDOWN_TIMEOUT_SECONDS * 1000).unref();
  await running.close();
  logger.info("worker stopped");
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
