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
// Before the workers start: until a listener exists, SIGTERM kills the process outright, and "workers started" is
// logged (and seen by a supervisor) before startWorkers returns. A signal is handled only once this code has run.
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
try {
  running = startWorkers(config, logger, queues);
} catch (e) {
  process.stderr.write(`${(e as Error).message}\n`);
  process.exit(64);
}

// Graceful shutdown: every queue stops taking jobs at once and the active jobs finish (normally within seconds; a
// delivery is bounded by OUTBOUND_TIMEOUT_MS); a running outbox sweep is cut after a second instead of awaited (see
// run-workers.ts). SHUTDOWN_TIMEOUT_SECONDS is the hard limit: past it the process exits anyway, and a job it cut
// off is picked up again by another worker once its lock expires (BullMQ stalled-job check), so no job is lost.
let stopping = false;
async function shutdown(signal: string) {
  if (stopping) {
    if (signal === "SIGINT") process.exit(130); // a second Ctrl-C: stop now
    return;
  }
  stopping = true;
  const started = Date.now();
  logger.info({ signal }, "worker shutting down: no new jobs, finishing active ones");
  setTimeout(() => { logger.error("shutdown timed out; exiting"); process.exit(1); }, config.SHUTDOWN_TIMEOUT_SECONDS * 1000).unref();
  try {
    await running.close();
  } catch (err) {
    logger.error({ err: String(err) }, "worker shutdown failed");
    process.exit(1);
  }
  logger.info({ duration_ms: Date.now() - started }, "worker stopped");
  process.exit(0);
}
