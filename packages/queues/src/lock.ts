import type { RedisConnection } from "./connection.ts";

// A short lease in Redis that one worker of the fleet holds at a time (SET NX PX), released only by its holder. The
// worker processes that take such leases (a connection's poll, a conversions batch) share this, not their own copies.

/** Deletes the lock, and any keys listed after it, only while `owner` still holds it. */
const RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', unpack(KEYS)) else return 0 end";

/** Takes `key` for `ttlMs` as `owner`; false when another holds it. */
export async function tryLock(redis: RedisConnection, key: string, owner: string, ttlMs: number): Promise<boolean> {
  return (await redis.set(key, owner, "PX", ttlMs, "NX")) === "OK";
}

/**
 * Releases `key` if `owner` still holds it, deleting `alsoDelete` with it (keys that live as long as the lock; in a
 * Redis Cluster they must share its hash slot).
 */
export async function releaseLock(redis: RedisConnection, key: string, owner: string, ...alsoDelete: string[]): Promise<void> {
  await redis.eval(RELEASE, 1 + alsoDelete.length, key, ...alsoDelete, owner);
}
