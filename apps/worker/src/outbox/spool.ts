import type { OutboxAttemptRecord } from "@trendgate/db";
import type { RedisConnection } from "@trendgate/queues";

/**
 * Attempt records that were sent but could not be written (Postgres down beyond the writer's own retries), kept in
 * Redis by message until they are: the next job of that message (BullMQ running the failed job again, or the
 * sweeper's re-queue once the message is overdue) writes its record before anything else, so the attempt is never
 * sent again without its record. One hash per queue, one field per message (a message has at most one attempt in
 * flight: the next is queued only after this one's record).
 */
export class AttemptSpool {
  private readonly key: string;

  constructor(private readonly redis: RedisConnection, prefix: string, queue: string) {
    this.key = `${prefix}:outbox:unrecorded:${queue}`;
  }

  async keep(record: OutboxAttemptRecord): Promise<void> {
    await this.redis.hset(this.key, record.messageId, JSON.stringify(record));
  }

  /** The record kept for this message, if any. */
  async find(messageId: string): Promise<OutboxAttemptRecord | null> {
    const raw = await this.redis.hget(this.key, messageId);
    if (!raw) return null;
    const r = JSON.parse(raw) as OutboxAttemptRecord & { nextRetryAt?: string | null };
    return { ...r, nextRetryAt: r.nextRetryAt ? new Date(r.nextRetryAt) : null };
  }

  /** Forgets a kept record once it is written (only that attempt's: a newer one kept meanwhile stays). */
  async written(record: OutboxAttemptRecord): Promise<void> {
    const raw = await this.redis.hget(this.key, record.messageId);
    if (raw && (JSON.parse(raw) as OutboxAttemptRecord).attempt === record.attempt) await this.redis.hdel(this.key, record.messageId);
  }
}
