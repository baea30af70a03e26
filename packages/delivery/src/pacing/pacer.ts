import type { RedisConnection } from "@trendgate/queues";

/**
 * At most one send per `intervalMs` per lane (e.g. one post per second per chat channel), fleet-wide. Each message
 * that has to wait reserves its own future slot (a ticket), so a backlog of N messages wakes N times in all, one per
 * slot, instead of every waiting job waking on every slot. Times come from the Redis server's clock, so workers on
 * machines with skewed clocks agree. Returns 0 when the message may send now, else the milliseconds to wait (defer
 * the job that long; it finds its ticket when it runs again).
 */
const RESERVE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local interval = tonumber(ARGV[1])
local ticket = tonumber(redis.call('GET', KEYS[2]) or '-1')
if ticket >= 0 then
  if now >= ticket then redis.call('DEL', KEYS[2]) return 0 end
  return ticket - now
end
local at = math.max(now, tonumber(redis.call('GET', KEYS[1]) or '0'))
redis.call('SET', KEYS[1], at + interval, 'PX', at + interval - now + 60000)
if at <= now then return 0 end
redis.call('SET', KEYS[2], at, 'PX', at - now + 600000)
return at - now`;

export class Pacer {
  constructor(private readonly redis: RedisConnection, private readonly prefix: string, private readonly intervalMs: number) {}

  /** 0: go now (the slot is taken for this message); otherwise wait this many ms and ask again. */
  async reserve(lane: string, messageId: string): Promise<number> {
    if (this.intervalMs <= 0) return 0;
    // One hash tag per lane: the script's two keys must live in one Redis Cluster slot.
    const tag = `${this.prefix}:pace:{${lane}}`;
    const wait = await this.redis.eval(RESERVE, 2, tag, `${tag}:ticket:${messageId}`, this.intervalMs);
    return Number(wait);
  }
}
