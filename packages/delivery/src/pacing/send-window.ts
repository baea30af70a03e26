import type { RedisConnection } from "@trendgate/queues";

/**
 * At most `limit` sends per `windowMs` on a lane (a webhook subscription's rate_limit), fleet-wide, as the receiver
 * sees them: a send holds one of the lane's `limit` units from its start until `windowMs` after its answer, so no
 * window of that length at the receiver ever holds more than `limit` arrivals, however late a worker's request leaves
 * or an answer comes (the Pacer's slots, ./pacer.ts, space starts, which a busy worker or a slow wake-up can bunch).
 * Messages waiting for a unit queue in order of their first ask (FIFO), each told how long until its turn, so a
 * backlog wakes about once per message instead of every waiter on every release. A waiter that does not ask again
 * within `graceMs` of its turn (its job gone) loses its place; a send never reported done frees its unit after
 * `holdMs`. Times come from the Redis server's clock; all keys of a lane share one hash tag (one Cluster slot).
 */
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local units, started, queue, deadlines = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id, limit, window, hold, grace = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
for _, u in ipairs(redis.call('ZRANGEBYSCORE', units, '-inf', now)) do redis.call('HDEL', started, u) end
redis.call('ZREMRANGEBYSCORE', units, '-inf', now)
if redis.call('ZSCORE', units, id) then return 0 end
for _, w in ipairs(redis.call('ZRANGEBYSCORE', deadlines, '-inf', now)) do redis.call('ZREM', queue, w) end
redis.call('ZREMRANGEBYSCORE', deadlines, '-inf', now)
redis.call('ZADD', queue, 'NX', now, id)
local rank = redis.call('ZRANK', queue, id)
local held = redis.call('ZCARD', units)
if rank < limit - held then
  redis.call('ZREM', queue, id)
  redis.call('ZREM', deadlines, id)
  redis.call('ZADD', units, now + hold, id)
  redis.call('HSET', started, id, now)
  redis.call('PEXPIRE', units, hold + window)
  redis.call('PEXPIRE', started, hold + window)
  return 0
end
-- Its turn: after (rank - free + 1) releases. Units in release order (answered ones first, then those in flight by
-- start); one in flight is guessed to free a window after its start, and each unit frees once a window after that.
local k = rank - math.max(limit - held, 0)
local idx = k % math.max(held, 1)
local unit = redis.call('ZRANGE', units, idx, idx, 'WITHSCORES')
local at = now + window
if unit[1] then
  local s = redis.call('HGET', started, unit[1])
  at = s and math.max(tonumber(s) + window, now + math.ceil(window / limit)) or tonumber(unit[2])
end
local wait = math.max(at + math.floor(k / math.max(held, 1)) * window - now, 1)
redis.call('ZADD', deadlines, now + wait + grace, id)
local last = redis.call('ZRANGE', deadlines, -1, -1, 'WITHSCORES')
redis.call('PEXPIRE', queue, tonumber(last[2]) - now + window)
redis.call('PEXPIRE', deadlines, tonumber(last[2]) - now + window)
return wait`;

/** The send is over (answered or not): its unit frees `windowMs` from now. */
const RELEASE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('HDEL', KEYS[2], ARGV[1]) == 1 then redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), ARGV[1]) end
return 0`;

export interface SendWindowOptions {
  /** How long one window lasts (1000: a limit per second). */
  windowMs: number;
  /** The longest a send may take; a unit not released by then is freed (its worker died mid-send). */
  holdMs: number;
  /** How late a waiter may ask again after its turn before it loses its place. */
  graceMs: number;
}

export class SendWindow {
  constructor(private readonly redis: RedisConnection, private readonly prefix: string, private readonly opts: SendWindowOptions) {}

  private keys(lane: string) {
    const tag = `${this.prefix}:window:{${lane}}`;
    return [`${tag}:units`, `${tag}:started`, `${tag}:queue`, `${tag}:deadlines`];
  }

  /** 0: send now (a unit is held for `sendId` until `release`); otherwise wait this many ms and ask again. */
  async acquire(lane: string, sendId: string, limit: number): Promise<number> {
    const { windowMs, holdMs, graceMs } = this.opts;
    return Number(await this.redis.eval(ACQUIRE, 4, ...this.keys(lane), sendId, limit, windowMs, holdMs, graceMs));
  }

  /** After the send, whatever its outcome: its unit frees a window from now. */
  async release(lane: string, sendId: string): Promise<void> {
    const [units, started] = this.keys(lane);
    await this.redis.eval(RELEASE, 2, units, started, sendId, this.opts.windowMs);
  }
}
