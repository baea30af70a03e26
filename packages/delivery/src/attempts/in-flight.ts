import type { RedisConnection } from "@trendgate/queues";

/** How long a mark outlives a send that never cleared it (a killed worker's job runs again within minutes). */
const IN_FLIGHT_TTL_SECONDS = 24 * 3600;

/**
 * "This attempt is being sent", written to Redis before the request goes out and cleared once its record is written
 * (or kept in the spool). A job that runs again after its worker died finds the mark of an attempt it never recorded:
 * the receiver may have that send, so it goes into the attempt log as interrupted before the attempt is sent again.
 * One key per row (one attempt in flight per row), in one hash slot per kind.
 */
export class InFlightMarks<T extends { attempt: number }> {
  private readonly prefix: string;

  constructor(private readonly redis: RedisConnection, prefix: string, kind: string) {
    this.prefix = `${prefix}:inflight:{${kind}}:`;
  }

  async mark(id: string, value: T): Promise<void> {
    await this.redis.set(this.prefix + id, JSON.stringify(value), "EX", IN_FLIGHT_TTL_SECONDS);
  }

  /** The mark left for this row's `attempt`, if any. */
  async find(id: string, attempt: number): Promise<T | null> {
    const raw = await this.redis.get(this.prefix + id);
    const v = raw ? (JSON.parse(raw) as T) : null;
    return v && v.attempt === attempt ? v : null;
  }

  /** Not awaited by senders: a mark left behind only matters to a job whose attempt is unrecorded, and it expires. */
  clear(id: string): void {
    this.redis.del(this.prefix + id).catch(() => undefined);
  }
}
