import { Redis, type RedisOptions } from "ioredis";

/**
 * Two kinds of Redis connection, as BullMQ recommends:
 * - "client" (gateway, producers): fail fast when Redis is down so requests answer 503 instead of hanging.
 * - "worker" (BullMQ workers, blocking commands): retry forever, never give up on a command.
 * Both pipeline automatically: commands issued in the same tick go out in one write (fewer syscalls on both sides;
 * BullMQ gives blocking commands a connection of their own).
 */
export function createRedis(url: string, role: "client" | "worker", extra: RedisOptions = {}): Redis {
  const opts: RedisOptions =
    role === "client"
      ? { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2000, enableAutoPipelining: true }
      : { maxRetriesPerRequest: null, enableOfflineQueue: true, enableAutoPipelining: true };
  const redis = new Redis(url, { ...opts, ...extra });
  redis.on("error", () => {}); // reported through /status and failed commands; avoid unhandled 'error' events
  return redis;
}
