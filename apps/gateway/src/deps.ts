import { Registry, collectDefaultMetrics } from "prom-client";
import type { Config } from "@trendgate/config";
import type { Connections } from "@trendgate/connections";
import type { ConnectorRegistry } from "@trendgate/connectors";
import type { SecretBox } from "@trendgate/crypto";
import { createDb, type Db } from "@trendgate/db";
import type { OutboundGuard } from "@trendgate/delivery";
import type { Logger } from "@trendgate/logger";
import { createRedis, Queues, type RedisConnection } from "@trendgate/queues";
import type { Authenticator } from "./http/auth.ts";
import type { IdempotencyStore } from "./http/idempotency.ts";
import type { AuthFailureLimiter, RateLimits } from "./http/rate-limit.ts";
import type { BacktestPool } from "./services/backtest/pool.ts";

/** Everything a request handler may touch. Built once per process (and once per test app). */
export interface Deps {
  config: Config;
  logger: Logger;
  db: Db;
  /**
   * Where the read-only routes that tolerate replication lag read (trend lists and details, recommendations,
   * backtests): the read replica of DATABASE_READ_URL, else the primary itself (`db`). Never for a read that must see
   * a write just made.
   */
  readDb: Db;
  redis: RedisConnection;
  queues: Queues;
  metrics: Registry;
  close(): Promise<void>;
}

/** What the gateway adds for its routes (built by createGateway). */
export interface GatewayDeps extends Deps {
  authenticator: Authenticator;
  /** Failed authentications per client address (API keys and the admin token). */
  authFailures: AuthFailureLimiter;
  idempotency: IdempotencyStore;
  secrets: SecretBox;
  guard: OutboundGuard;
  rateLimits: RateLimits;
  registry: ConnectorRegistry;
  /** Browser-OAuth connections: auth, callback, status, disconnect, access tokens. */
  connections: Connections;
  /** The threads backtests run on. */
  backtests: BacktestPool;
}

export function createDeps(config: Config, logger: Logger): Deps {
  const db = createDb(config.DATABASE_URL, { connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS });
  const readDb = config.DATABASE_READ_URL ? createDb(config.DATABASE_READ_URL, { connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS }) : db;
  const redis = createRedis(config.REDIS_URL, "client");
  const queues = new Queues(redis, config.QUEUE_PREFIX);
  const metrics = new Registry();
  if (config.NODE_ENV !== "test") collectDefaultMetrics({ register: metrics });
  return {
    config, logger, db, readDb, redis, queues, metrics,
    async close() {
      await queues.close().catch(() => {});
      redis.disconnect();
      await db.$disconnect().catch(() => {});
      if (readDb !== db) await readDb.$disconnect().catch(() => {});
    },
  };
}
