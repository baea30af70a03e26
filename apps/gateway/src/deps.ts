import { Registry, collectDefaultMetrics } from "prom-client";
import type { Config } from "@trendgate/config";
import { createDb, type Db } from "@trendgate/db";
import type { Logger } from "@trendgate/logger";
import { createRedis, Queues, type RedisConnection } from "@trendgate/queues";

/** Everything a request handler may touch. Built once per process (and once per test app). */
export interface Deps {
  config: Config;
  logger: Logger;
  db: Db;
  redis: RedisConnection;
  queues: Queues;
  metrics: Registry;
  close(): Promise<void>;
}

export function createDeps(config: Config, logger: Logger): Deps {
  const db = createDb(config.DATABASE_URL);
  const redis = createRedis(config.REDIS_URL, "client");
  const queues = new Queues(redis, config.QUEUE_PREFIX);
  const metrics = new Registry();
  if (config.NODE_ENV !== "test") collectDefaultMetrics({ register: metrics });
  return {
    config, logger, db, redis, queues, metrics,
    async close() {
      await queues.close().catch(() => {});
      redis.disconnect();
      await db.$disconnect().catch(() => {});
    },
  };
}
