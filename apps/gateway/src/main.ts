import fs from "node:fs";
import { loadConfigOrExit } from "@trendgate/config";
import { createLogger } from "@trendgate/logger";
import { createGateway } from "./app.ts";
import { createDeps } from "./deps.ts";
import { attachStream } from "./stream/index.ts";

if (fs.existsSync(".env")) process.loadEnvFile(".env"); // variables already set in the environment win
const config = loadConfigOrExit();
const logger = createLogger({ level: config.LOG_LEVEL, name: "gateway" });
const deps = createDeps(config, logger);
const gateway = await createGateway(deps);

const server = gateway.app.listen(config.PORT, config.HOST, () =>
  logger.info({ port: config.PORT }, `gateway listening on http://${config.HOST === "0.0.0.0" ? "localhost" : config.HOST}:${config.PORT} (docs at /docs)`));
server.keepAliveTimeout = 65_000; // longer than common load-balancer idle timeouts
const stream = attachStream(server, gateway.deps); // WebSocket trend stream on /api/stream (upgrade requests)

// Graceful shutdown: close stream sockets (1001: clients resume elsewhere with last_event_id), stop accepting, let
// in-flight requests finish, then close Redis/Postgres.
let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, "shutting down: draining in-flight requests");
  const force = setTimeout(() => { logger.error("shutdown timed out; exiting"); process.exit(1); }, config.SHUTDOWN_TIMEOUT_SECONDS * 1000);
  force.unref();
  await stream.close().catch((err) => logger.warn({ err: String(err) }, "closing the trend stream failed"));
  server.close(async () => {
    await gateway.stop();
    await deps.close();
    logger.info("gateway stopped");
    process.exit(0);
  });
  server.closeIdleConnections();
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
