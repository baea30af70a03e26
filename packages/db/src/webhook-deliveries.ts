import type { Db } from "./client.ts";
import { newId } from "./ids.ts";

export interface FireInput {
  subscriptionId: string;
  eventId: string;
  payload: unknown;
  velocity: number;
}

/**
 * Subscriptions without a cooldown need no serialising: all their firings of a batch are inserted at once.
 * Returns the deliveries created (pairs already delivered, e.g. a re-processed batch, are skipped).
 */
export async function fireUnthrottled(db: Db, pairs: FireInput[]): Promise<{ id: string; subscription_id: string; event_id: string }[]> {
  if (!pairs.length) return [];
  const { rows } = await db.$pool.query<{ id: string; subscription_id: string; event_id: string }>(
    `INSERT INTO webhook_deliveries (id, account_id, subscription_id, event_id, trigger, payload, velocity, status, attempts, next_attempt_at, created_at)
     SELECT v.id, s.account_id, s.id, v.event_id, 'trend_event', v.payload, v.velocity, 'pending', 0, now(), now()
       FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[], $5::float8[]) AS v(id, subscription_id, event_id, payload, velocity)
       JOIN webhook_subscriptions s ON s.id = v.subscription_id AND s.status IN ('active', 'paused') AND s.cooldown_seconds = 0
     ON CONFLICT (subscription_id, event_id) DO NOTHING
     RETURNING id, subscription_id, event_id`,
    [pairs.map(() => newId("msg")), pairs.map((p) => p.subscriptionId), pairs.map((p) => p.eventId), pairs.map((p) => JSON.stringify(p.payload)), pairs.map((p) => p.velocity)],
  );
  return rows;
}

/**
 * instant_stream: deliver now unless the subscription fired within its cooldown. One statement: the conditional
 * UPDATE takes the subscription's row lock, so concurrent workers serialise on it and at most one of them sees the
 * window open (READ COMMITTED re-checks the WHERE clause against the updated row). Times are clock_timestamp(), not
 * now(): now() is when the statement's transaction began, before it waited for the lock. With no cooldown there is
 * nothing to serialise, so no lock is taken. Returns the new delivery id, or null when the cooldown suppressed it.
 */
export async function fireInstant(db: Db, f: FireInput): Promise<string | null> {
  const id = newId("msg");
  const { rows } = await db.$pool.query<{ id: string }>(
    `WITH fired AS (
       UPDATE webhook_subscriptions SET last_fired_at = clock_timestamp()
        WHERE id = $1 AND status IN ('active', 'paused') AND cooldown_seconds > 0
          AND (last_fired_at IS NULL OR last_fired_at <= clock_timestamp() - cooldown_seconds * interval '1 second')
       RETURNING id, account_id
     ), unthrottled AS (
       SELECT id, account_id FROM webhook_subscriptions WHERE id = $1 AND status IN ('active', 'paused') AND cooldown_seconds = 0
     )
     INSERT INTO webhook_deliveries (id, account_id, subscription_id, event_id, trigger, payload, velocity, status, attempts, next_attempt_at, created_at)
     SELECT $2, account_id, id, $3, 'trend_event', $4::jsonb, $5, 'pending', 0, now(), now() FROM (SELECT * FROM fired UNION ALL SELECT * FROM unthrottled) s
     ON CONFLICT (subscription_id, event_id) DO NOTHING
     RETURNING id`,
    [f.subscriptionId, id, f.eventId, JSON.stringify(f.payload), f.velocity],
  );
  return rows[0]?.id ?? null;
}

/**
 * cooldown_digest: like instant when the window is open; inside the window the firing is held in one pending
 * delivery due when the window ends, keeping the strongest (highest velocity) payload. Returns the delivery id and
 * when it is due, or null when nothing new needs queueing (merged into an already-held delivery).
 */
export async function fireDigest(db: Db, f: FireInput): Promise<{ id: string; dueAt: Date } | null> {
  return db.$transaction(async (tx) => {
    const [sub] = await tx.$queryRawUnsafe<{ last_fired_at: Date | null; cooldown_seconds: number; status: string; now: Date }[]>(
      `SELECT last_fired_at, cooldown_seconds, status, clock_timestamp() AS now FROM webhook_subscriptions WHERE id = $1 FOR UPDATE`, f.subscriptionId);
    if (!sub || (sub.status !== "active" && sub.status !== "paused")) return null;
    const now = sub.now;
    const windowEnd = sub.last_fired_at ? new Date(sub.last_fired_at.getTime() + sub.cooldown_seconds * 1000) : now;
    if (windowEnd <= now) {
      const id = newId("msg");
      await tx.webhookSubscription.update({ where: { id: f.subscriptionId }, data: { lastFiredAt: now } });
      const created = await insertDelivery(tx as Db, id, f, now);
      return created ? { id, dueAt: now } : null;
    }
    const held = await tx.webhookDelivery.findFirst({
      where: { subscriptionId: f.subscriptionId, status: "pending", attempts: 0, nextAttemptAt: { gt: now } },
      orderBy: { nextAttemptAt: "asc" },
    });
    if (held) {
      if (f.velocity > held.velocity)
        await tx.webhookDelivery.update({ where: { id: held.id }, data: { payload: f.payload as object, velocity: f.velocity, eventId: f.eventId } });
      return null;
    }
    const id = newId("msg");
    await tx.webhookSubscription.update({ where: { id: f.subscriptionId }, data: { lastFiredAt: windowEnd } }); // reserve the next window
    const created = await insertDelivery(tx as Db, id, f, windowEnd);
    return created ? { id, dueAt: windowEnd } : null;
  });
}

async function insertDelivery(db: Db, id: string, f: FireInput, dueAt: Date) {
  const n = await db.$executeRawUnsafe(
    `INSERT INTO webhook_deliveries (id, account_id, subscription_id, event_id, trigger, payload, velocity, status, attempts, next_attempt_at, created_at)
     SELECT $1, account_id, id, $2, 'trend_event', $3::jsonb, $4, 'pending', 0, $5, now() FROM webhook_subscriptions WHERE id = $6
     ON CONFLICT (subscription_id, event_id) DO NOTHING`,
    id, f.eventId, JSON.stringify(f.payload), f.velocity, dueAt, f.subscriptionId,
  );
  return n > 0;
}

/**
 * A firing for a disabled subscription is not sent but kept as a failed delivery, so that after the owner fixes
 * the endpoint and resumes it, `recover` can re-send everything it missed (as Svix does).
 */
export async function recordMissedDelivery(db: Db, f: FireInput): Promise<void> {
  await db.$executeRawUnsafe(
    `INSERT INTO webhook_deliveries (id, account_id, subscription_id, event_id, trigger, payload, velocity, status, attempts, next_attempt_at, last_error, created_at, completed_at)
     SELECT $1, account_id, id, $2, 'trend_event', $3::jsonb, $4, 'failed', 0, now(), 'subscription disabled', now(), now() FROM webhook_subscriptions WHERE id = $5
     ON CONFLICT (subscription_id, event_id) DO NOTHING`,
    newId("msg"), f.eventId, JSON.stringify(f.payload), f.velocity, f.subscriptionId,
  );
}

/** The subscription row a delivery worker needs (secrets still sealed). */
export async function loadSubscriptionForSend(db: Db, id: string) {
  return db.webhookSubscription.findUnique({
    where: { id },
    select: { id: true, accountId: true, url: true, status: true, secretCiphertext: true, previousSecretCiphertext: true, previousSecretExpiresAt: true },
  });
}
export type SendableSubscription = NonNullable<Awaited<ReturnType<typeof loadSubscriptionForSend>>>;

/**
 * Pending deliveries of active subscriptions that should have been sent a while ago (their job may have been lost
 * with Redis): what the outbox sweeper re-queues, oldest first.
 */
export async function findOverdueDeliveries(db: Db, olderThanSeconds: number, limit: number) {
  return db.$queryRawUnsafe<{ id: string; subscription_id: string; attempts: number; trigger: string; payload: unknown }[]>(
    `SELECT d.id, d.subscription_id, d.attempts, d.trigger, d.payload FROM webhook_deliveries d
       JOIN webhook_subscriptions s ON s.id = d.subscription_id AND s.status = 'active'
      WHERE d.status = 'pending' AND d.next_attempt_at <= now() - $1 * interval '1 second'
      ORDER BY d.next_attempt_at LIMIT $2`,
    olderThanSeconds, limit,
  );
}

/** Whether a delivery still waits for attempt `attempts + 1` (re-read before re-queueing it; see enqueueDelivery). */
export async function isDeliveryPending(db: Db, id: string, attempts: number): Promise<boolean> {
  return (await db.webhookDelivery.count({ where: { id, status: "pending", attempts } })) > 0;
}
