import type { RedisConnection } from "@trendgate/queues";

/** How long a kept record waits for its row's next job. Past it the attempt may be sent again: never kept forever. */
export const SPOOL_TTL_SECONDS = 7 * 24 * 3600;

/** Which row and which attempt a record is of. */
export interface SpoolKey<R> {
  id(record: R): string;
  attempt(record: R): number;
}

/**
 * Attempt records that were sent but could not be written (Postgres down beyond the writer's own retries), kept in
 * Redis by row until they are: the row's next job (BullMQ running the failed job again, or the sweeper's re-queue once
 * the row is overdue) writes its record before anything else, so an attempt is never sent again for want of its
 * record. Every outbound kind uses it (outbox messages, webhook deliveries). One key per row (a row has at most one
 * attempt in flight: the next is queued only after this one's record), expiring after SPOOL_TTL_SECONDS, so a row
 * deleted meanwhile leaves nothing behind; the keys of one kind share a hash slot (`{kind}`), so `findMany` is one
 * MGET on Redis Cluster too.
 */
export class AttemptSpool<R> {
  private readonly prefix: string;

  /** `revive` turns a parsed record back into one (its dates were written as strings). */
  constructor(
    private readonly redis: RedisConnection, prefix: string, kind: string,
    private readonly key: SpoolKey<R>, private readonly revive: (parsed: R) => R,
  ) {
    this.prefix = `${prefix}:unrecorded:{${kind}}:`;
  }

  /** The key pattern of this kind's kept records (for a look at what waits). */
  get pattern(): string {
    return `${this.prefix}*`;
  }

  async keep(record: R): Promise<void> {
    await this.redis.set(this.prefix + this.key.id(record), JSON.stringify(record), "EX", SPOOL_TTL_SECONDS);
  }

  /** The record kept for this row, if any. */
  async find(id: string): Promise<R | null> {
    const raw = await this.redis.get(this.prefix + id);
    return raw ? this.revive(JSON.parse(raw) as R) : null;
  }

  /** The rows among `ids` that have a record kept (a batch leaves them out: their own jobs write them first). */
  async keptAmong(ids: readonly string[]): Promise<Set<string>> {
    if (!ids.length) return new Set();
    const raws = await this.redis.mget(...ids.map((id) => this.prefix + id));
    return new Set(ids.filter((_, i) => raws[i] !== null));
  }

  /** Forgets a kept record once it is written (only that attempt's: a newer one kept meanwhile stays). */
  async written(record: R): Promise<void> {
    const k = this.prefix + this.key.id(record);
    const raw = await this.redis.get(k);
    if (raw && this.key.attempt(JSON.parse(raw) as R) === this.key.attempt(record)) await this.redis.del(k);
  }
}
