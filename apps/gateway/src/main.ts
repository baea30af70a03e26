import fs from "node:fs";
import { loadConfigOrExit } from "@trendgate/config";
import { createLogger } from "@trendgate/logger";
import { whenReady } from "@trendgate/queues";
import { createGateway } from "./app.ts";
import { createDeps } from "./deps.ts";
import { createHttpServer, httpServerOptions } from "./http/server.ts";
import { attachStream } from "./stream/index.ts";

if (fs.existsSync(".env")) process.loadEnvFile(".env"); // variables already set in the environment win
const config = loadConfigOrExit();
const logger = createLogger({ level: config.LOG_LEVEL, name: "gateway" });
const deps = createDeps(config, logger);
// Not fatal: without Redis the gateway still starts, answers 503 where it needs Redis, and reconnects.
if (!(await whenReady(deps.redis, 5000))) logger.warn("Redis not ready after 5 s; starting anyway");
const gateway = await createGateway(deps);

// The HTTP server (timeouts, early 413, problem answers to malformed requests, draining): see http/server.ts.
const http = createHttpServer(gateway.app, httpServerOptions(config, logger));
await http.listen(config.PORT, config.HOST);
logger.info({ port: config.PORT }, `gateway listening on http://${config.HOST === "0.0.0.0" ? "localhost" : config.HOST}:${config.PORT} (docs at /docs)`);
const stream = attachStream(http.server, gateway.deps); // WebSocket trend stream on /api/stream (upgrade requests)

// Graceful shutdown: stop accepting connections and close idle keep-alive ones at once; requests still running (or
// arriving on a connection that was busy) are answered with `Connection: close` and finish; stream sockets close with
// 1001 (clients resume elsewhere with last_event_id); then Redis and Postgres close. SHUTDOWN_TIMEOUT_SECONDS is the
// hard limit: past it the remaining connections are cut and the process exits.
let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  const started = Date.now();
  logger.info({ signal }, "shutting down: draining in-flight requests");
  const force = setTimeout(() => {
    logger.error("shutdown timed out; cutting the remaining connections");
    http.server.closeAllConnections();
    process.exit(1);
  }, config.SHUTDOWN_TIMEOUT_SECONDS * 1000);
  force.unref();
  const drained = http.drain();
  await stream.close().catch((err) => logger.warn({ err: String(err) }, "closing the trend stream failed"));
  await drained;
  await gateway.stop();
  await deps.close();
  logger.info({ duration_ms: Date.now() - started }, "gateway stopped");
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
