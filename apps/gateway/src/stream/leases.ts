import crypto from "node:crypto";
import type { RedisConnection } from "@trendgate/queues";

/**
 * Open stream sockets counted across the whole gateway fleet: one Redis sorted set per account whose members are
 * `<key prefix>|<socket id>` scored by when the lease lapses. Each gateway renews its sockets' leases at every
 * heartbeat and removes them on close, so a gateway that dies stops counting after `ttlMs`.
 */
export interface SocketLeases {
  /** Takes a lease, or says which cap is full (nothing taken). */
  acquire(accountId: string, keyPrefix: string): Promise<{ leaseId: string } | { full: "account" | "key"; open: number }>;
  renew(leases: { accountId: string; leaseId: string }[]): Promise<void>;
  release(accountId: string, leaseId: string): Promise<void>;
}

// KEYS[1] the account's set; ARGV: now, lapse, member, key prefix + "|", account cap, key cap.
// Stale leases go first; both caps are checked and the lease added in one step, so parallel upgrades on different
// gateways cannot overshoot.
const ACQUIRE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
local members = redis.call('ZRANGE', KEYS[1], 0, -1)
if #members >= tonumber(ARGV[5]) then return {'account', #members} end
local mine = 0
for _, m in ipairs(members) do
  if string.sub(m, 1, #ARGV[4]) == ARGV[4] then mine = mine + 1 end
end
if mine >= tonumber(ARGV[6]) then return {'key', mine} end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
redis.call('PEXPIREAT', KEYS[1], ARGV[2])
return {'ok', #members + 1}
`;
// Renews only leases still held: one released (or lapsed and swept) is not brought back.
const RENEW = `
redis.call('ZADD', KEYS[1], 'XX', ARGV[1], ARGV[2])
redis.call('PEXPIREAT', KEYS[1], ARGV[1])
return 1
`;

export function socketLeases(redis: RedisConnection, opts: {
  setKey: (accountId: string) => string;
  ttlMs: number;
  maxPerAccount: number;
  maxPerKey: number;
}): SocketLeases {
  return {
    async acquire(accountId, keyPrefix) {
      const now = Date.now();
      const leaseId = `${keyPrefix}|${crypto.randomUUID()}`;
      const [verdict, open] = await redis.eval(ACQUIRE, 1, opts.setKey(accountId), now, now + opts.ttlMs, leaseId,
        `${keyPrefix}|`, opts.maxPerAccount, opts.maxPerKey) as [string, number];
      return verdict === "ok" ? { leaseId } : { full: verdict as "account" | "key", open: Number(open) };
    },
    async renew(leases) {
      const lapse = Date.now() + opts.ttlMs;
      await Promise.all(leases.map((l) => redis.eval(RENEW, 1, opts.setKey(l.accountId), lapse, l.leaseId)));
    },
    async release(accountId, leaseId) {
      await redis.zrem(opts.setKey(accountId), leaseId);
    },
  };
}
