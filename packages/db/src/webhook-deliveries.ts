import type { Db, Tx } from "./client.ts";
import { isDbReferenceGone } from "./errors.ts";
import type { Prisma } from "./generated/client.ts";
import { idFloorAt, newId } from "./ids.ts";

/**
 * A re-processed firing batch (a retried or stalled job) must not record its drops twice: a drop is recorded unless
 * the subscription already has one for the same event among its executions of the last hour (a range of its index).
 */
const NOT_RECORDED = `NOT EXISTS (SELECT 1 FROM webhook_executions x WHERE x.subscription_id = s.id AND x.id >= $DROP_FLOOR
                                   AND x.outcome = 'suppressed' AND x.error_message LIKE '%, event ' || $DROP_EVENT)`;
const dropFloor = () => idFloorAt("exe", new Date(Date.now() - 3_600_000));

export interface FireInput {
  subscriptionId: string;
  eventId: string;
  payload: unknown;
  velocity: number;
}

/** A firing that left a delivery row: pending (queue it if the subscription is active) or failed (disabled). */
export interface Fired {
  id: string;
  subscriptionId: string;
  eventId: string;
  status: "pending" | "failed";
  /** The subscription's status when the row was written (not a cache's): only `active` ones are queued now. */
  subscriptionStatus: string;
  /** When it is due: now, or for a held digest when its cooldown ends. */
  dueAt: Date;
}

// A firing's row is decided from the subscription's current row, never from a worker's cached copy: a subscription
// disabled a moment ago (a 410 seen by another worker) still gets a row for every firing, recorded as failed with
// "subscription disabled", so that `recover` can send it once the owner has fixed the endpoint and resumed.
const STATUS_OF = (sub: string) => `CASE WHEN ${sub} = 'disabled' THEN 'failed' ELSE 'pending' END`;
const ERROR_OF = (sub: string) => `CASE WHEN ${sub} = 'disabled' THEN 'subscription disabled' END`;
const DONE_OF = (sub: string) => `CASE WHEN ${sub} = 'disabled' THEN now() END`;

/**
 * Subscriptions without a cooldown need no serialising: all their firings of a batch are inserted at once.
 * Returns the deliveries created (pairs already delivered, e.g. a re-processed batch, are skipped), and the firings
 * it did not handle because the subscription has meanwhile been given a cooldown or the digest mode (the caller's
 * cache was stale): those go through fireInstant/fireDigest, per `deliveryMode`.
 * Named statements (here and on the other hot paths) are parsed and planned once per pooled connection.
 */
export async function fireUnthrottled(db: Db, pairs: FireInput[]): Promise<{ fired: Fired[]; throttled: { fire: FireInput; deliveryMode: string }[] }> {
  if (!pairs.length) return { fired: [], throttled: [] };
  const { rows } = await db.$pool.query<{ id: string | null; subscription_id: string; event_id: string; status: "pending" | "failed" | null; sub_status: string; delivery_mode: string }>({
    name: "tg_fire_unthrottled",
    text: `WITH v AS (
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[], $5::float8[]) AS v(id, subscription_id, event_id, payload, velocity)
     ), m AS (
       SELECT v.*, s.account_id, s.status AS sub_status, s.delivery_mode,
              s.status <> 'disabled' AND (s.cooldown_seconds > 0 OR s.delivery_mode <> 'instant_stream') AS throttled
         FROM v JOIN webhook_subscriptions s ON s.id = v.subscription_id
     ), ins AS (
       INSERT INTO webhook_deliveries (id, account_id, subscription_id, event_id, trigger, payload, velocity, status, attempts, next_attempt_at, last_error, created_at, completed_at)
       SELECT id, account_id, subscription_id, event_id, 'trend_event', payload, velocity, ${STATUS_OF("sub_status")}, 0, now(), ${ERROR_OF("sub_status")}, now(), ${DONE_OF("sub_status")}
         FROM m WHERE NOT throttled
       ON CONFLICT (subscription_id, event_id) DO NOTHING
       RETURNING id, subscription_id, event_id, status
     )
     SELECT ins.id, ins.subscription_id, ins.event_id, ins.status, m.sub_status, m.delivery_mode
       FROM ins JOIN m ON m.subscription_id = ins.subscription_id AND m.event_id = ins.event_id
     UNION ALL
     SELECT NULL, subscription_id, event_id, NULL, sub_status, delivery_mode FROM m WHERE throttled`,
    values: [pairs.map(() => newId("msg")), pairs.map((p) => p.subscriptionId), pairs.map((p) => p.eventId), pairs.map((p) => JSON.stringify(p.payload)), pairs.map((p) => p.velocity)],
  });
  const byKey = new Map(pairs.map((p) => [`${p.subscriptionId} ${p.eventId}`, p]));
  const fired: Fired[] = [];
  const throttled: { fire: FireInput; deliveryMode: string }[] = [];
  for (const r of rows) {
    if (r.id === null) throttled.push({ fire: byKey.get(`${r.subscription_id} ${r.event_id}`)!, deliveryMode: r.delivery_mode });
    else fired.push({ id: r.id, subscriptionId: r.subscription_id, eventId: r.event_id, status: r.status!, subscriptionStatus: r.sub_status, dueAt: new Date() });
  }
  return { fired, throttled };
}

/**
 * instant_stream: deliver now unless the subscription fired within its cooldown. One statement: the conditional
 * UPDATE takes the subscription's row lock, so concurrent workers serialise on it and at most one of them sees the
 * window open (READ COMMITTED re-checks the WHERE clause against the updated row). Times are clock_timestamp(), not
 * now(): now() is when the statement's transaction began, before it waited for the lock. With no cooldown there is
 * nothing to serialise, so no lock is taken. A disabled subscription gets a failed row (cooldown untouched): its
 * status is read under the same row lock, so a disable committing meanwhile cannot make the firing vanish. Returns
 * the new delivery, or null when the cooldown suppressed it (or the subscription is gone).
 */
export async function fireInstant(db: Db, f: FireInput): Promise<Fired | null> {
  const id = newId("msg");
  const { rows } = await db.$pool.query<{ id: string; status: "pending" | "failed"; sub_status: string }>({
    name: "tg_fire_instant",
    text: `WITH fired AS (
       UPDATE webhook_subscriptions SET last_fired_at = CASE WHEN status = 'disabled' THEN last_fired_at ELSE clock_timestamp() END
        WHERE id = $1 AND cooldown_seconds > 0
          AND (status = 'disabled' OR last_fired_at IS NULL OR last_fired_at <= clock_timestamp() - cooldown_seconds * interval '1 second')
       RETURNING id, account_id, status
     ), unthrottled AS (
       SELECT id, account_id, status FROM webhook_subscriptions WHERE id = $1 AND cooldown_seconds = 0
     ), s AS (
       SELECT * FROM fired UNION ALL SELECT * FROM unthrottled
     ), ins AS (
       INSERT INTO webhook_deliveries (id, account_id, subscription_id, event_id, trigger, payload, velocity, status, attempts, next_attempt_at, last_error, created_at, completed_at)
       SELECT $2, account_id, id, $3, 'trend_event', $4::jsonb, $5, ${STATUS_OF("status")}, 0, now(), ${ERROR_OF("status")}, now(), ${DONE_OF("status")} FROM s
       ON CONFLICT (subscription_id, event_id) DO NOTHING
       RETURNING id, status
     )
     SELECT ins.id, ins.status, s.status AS sub_status FROM ins, s`,
    values: [f.subscriptionId, id, f.eventId, JSON.stringify(f.payload), f.velocity],
  });
  const r = rows[0];
  return r ? { id: r.id, subscriptionId: f.subscriptionId, eventId: f.eventId, status: r.status, subscriptionStatus: r.sub_status, dueAt: new Date() } : null;
}

/**
 * cooldown_digest: like instant when the window is open; inside the window the firing is held in one pending
 * delivery due when the window ends, keeping the strongest (highest velocity) payload. Returns the delivery id and
 * when it is due, or null when nothing new needs queueing (merged into an already-held delivery).
 */
export async function fireDigest(db: Db, f: FireInput): Promise<Fired | null> {
  return db.$transaction(async (tx) => {
    const [sub] = await tx.$queryRawUnsafe<{ last_fired_at: Date | null; cooldown_seconds: number; status: string; now: Date }[]>(
      `SELECT last_fired_at, cooldown_seconds, status, clock_timestamp() AS now FROM webhook_subscriptions WHERE id = $1 FOR UPDATE`, f.subscriptionId);
    if (!sub) return null;
    const fired = (id: string, dueAt: Date, status: Fired["status"] = "pending"): Fired =>
      ({ id, subscriptionId: f.subscriptionId, eventId: f.eventId, status, subscriptionStatus: sub.status, dueAt });
    if (sub.status === "disabled") { // decided under the row lock: recorded as missed, for `recover`
      const id = newId("msg");
      return (await insertMissed(tx as Db, id, f)) ? fired(id, sub.now, "failed") : null;
    }
    const now = sub.now;
    const windowEnd = sub.last_fired_at ? new Date(sub.last_fired_at.getTime() + sub.cooldown_seconds * 1000) : now;
    if (windowEnd <= now) {
      const id = newId("msg");
      await tx.webhookSubscription.update({ where: { id: f.subscriptionId }, data: { lastFiredAt: now } });
      const created = await insertDelivery(tx as Db, id, f, now);
      return created ? fired(id, now) : null;
    }
    const held = await tx.webhookDelivery.findFirst({
      where: { subscriptionId: f.subscriptionId, status: "pending", attempts: 0, nextAttemptAt: { gt: now } },
      orderBy: { nextAttemptAt: "asc" },
    });
    if (held) {
      // One digest per window keeps the strongest: the weaker of the two is dropped, and recorded as such.
      const due = held.nextAttemptAt.toISOString();
      if (f.velocity > held.velocity) {
        await tx.webhookDelivery.update({ where: { id: held.id }, data: { payload: f.payload as object, velocity: f.velocity, eventId: f.eventId } });
        await recordSuppressed(tx as Db, { subscriptionId: f.subscriptionId, eventId: held.eventId ?? "", payload: held.payload, velocity: held.velocity },
          `replaced by a stronger firing (${firingLabel(f.payload, f.eventId)}) in the digest due ${due}`);
      } else {
        await recordSuppressed(tx as Db, f, `merged into the digest due ${due}, which holds a stronger firing (${firingLabel(held.payload, held.eventId)})`);
      }
      return null;
    }
    const id = newId("msg");
    await tx.webhookSubscription.update({ where: { id: f.subscriptionId }, data: { lastFiredAt: windowEnd } }); // reserve the next window
    const created = await insertDelivery(tx as Db, id, f, windowEnd);
    return created ? fired(id, windowEnd) : null;
  });
}

/** How a suppression record names a firing: its trend as the payload has it, and the event. */
function firingLabel(payload: unknown, eventId: string | null): string {
  const p = (payload ?? {}) as { trend_name?: unknown; severity?: unknown; velocity?: unknown };
  return `trend "${String(p.trend_name ?? "?")}" (severity ${String(p.severity ?? "?")}, velocity ${String(p.velocity ?? "?")}), event ${eventId ?? "?"}`;
}

/**
 * Records a firing the cooldown dropped, as an execution with outcome `suppressed` and error class `cooldown` (attempt
 * 0, nothing sent; `delivery_id` an id no delivery has), so the drop shows in the subscription's executions with the
 * trend and until when. `why` completes the message after "suppressed by the cooldown (N s) ". Nothing is recorded for
 * a firing that has a delivery after all (a re-processed batch) or a subscription without a cooldown or window.
 */
async function recordSuppressed(db: Db, f: FireInput, why: string): Promise<void> {
  await db.$executeRawUnsafe(
    `INSERT INTO webhook_executions (id, account_id, subscription_id, delivery_id, attempt, trigger, outcome, request_url, request_headers,
       request_body_bytes, response_body_truncated, duration_ms, error_class, error_message, created_at)
     SELECT $2, s.account_id, s.id, $3, 0, 'trend_event', 'suppressed', s.url, '{}'::json, 0, false, 0, 'cooldown',
            format('suppressed by the cooldown (%s s) %s: %s', s.cooldown_seconds,
              replace($4, '{until}', to_char(s.last_fired_at + s.cooldown_seconds * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')), $5::text), now()
       FROM webhook_subscriptions s
      WHERE s.id = $1 AND s.cooldown_seconds > 0 AND s.status <> 'disabled' AND s.last_fired_at IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.subscription_id = s.id AND d.event_id = $6)
        AND ${NOT_RECORDED.replace("$DROP_FLOOR", "$7").replace("$DROP_EVENT", "$6")}`,
    f.subscriptionId, newId("exe"), newId("msg"), why, firingLabel(f.payload, f.eventId), f.eventId, dropFloor(),
  );
}

/**
 * Records a firing a subscription's window dropped (`trigger_window`: its trend no longer anomalous at the window's end;
 * `recovery_window`: a re-detection too soon after the trend's end) as a `suppressed` execution, like a cooldown drop.
 */
export async function recordWindowDrop(db: Db, f: FireInput, errorClass: "trigger_window" | "recovery_window", why: string): Promise<void> {
  await db.$executeRawUnsafe(
    `INSERT INTO webhook_executions (id, account_id, subscription_id, delivery_id, attempt, trigger, outcome, request_url, request_headers,
       request_body_bytes, response_body_truncated, duration_ms, error_class, error_message, created_at)
     SELECT $2, s.account_id, s.id, $3, 0, 'trend_event', 'suppressed', s.url, '{}'::json, 0, false, 0, $4, $5 || ': ' || $6, now()
       FROM webhook_subscriptions s
      WHERE s.id = $1 AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.subscription_id = s.id AND d.event_id = $7)
        AND ${NOT_RECORDED.replace("$DROP_FLOOR", "$8").replace("$DROP_EVENT", "$7")}`,
    f.subscriptionId, newId("exe"), newId("msg"), errorClass, why, firingLabel(f.payload, f.eventId), f.eventId, dropFloor(),
  );
}

/**
 * instant_stream: records a firing that fireInstant returned null for, if the cooldown is what dropped it (the window
 * is read after the fact: a concurrent firing may have moved it on).
 */
export function recordCooldownDrop(db: Db, f: FireInput): Promise<void> {
  return recordSuppressed(db, f, "until {until}");
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
  await insertMissed(db, newId("msg"), f);
}

async function insertMissed(db: Db, id: string, f: FireInput): Promise<boolean> {
  const n = await db.$executeRawUnsafe(
    `INSERT INTO webhook_deliveries (id, account_id, subscription_id, event_id, trigger, payload, velocity, status, attempts, next_attempt_at, last_error, created_at, completed_at)
     SELECT $1, account_id, id, $2, 'trend_event', $3::jsonb, $4, 'failed', 0, now(), 'subscription disabled', now(), now() FROM webhook_subscriptions WHERE id = $5
     ON CONFLICT (subscription_id, event_id) DO NOTHING`,
    id, f.eventId, JSON.stringify(f.payload), f.velocity, f.subscriptionId,
  );
  return n > 0;
}

/**
 * A queued delivery whose subscription turned out to be disabled when its job ran: recorded as failed ("subscription
 * disabled", like a firing while disabled), so `recover` re-sends it. Only while the row still waits for this very
 * attempt and the subscription is disabled right now (not per a cache: one resumed meanwhile keeps it pending).
 */
export async function markDeliveryMissed(db: Db, deliveryId: string, attempts: number): Promise<boolean> {
  const { rowCount } = await db.$pool.query(
    `UPDATE webhook_deliveries d SET status = 'failed', last_error = 'subscription disabled', completed_at = now()
       FROM webhook_subscriptions s
      WHERE d.id = $1 AND d.status = 'pending' AND d.attempts = $2 AND s.id = d.subscription_id AND s.status = 'disabled'`,
    [deliveryId, attempts],
  );
  return (rowCount ?? 0) > 0;
}

/** A delivery's state, read when its job runs again (after a crash or a failure) to tell whether that attempt was already recorded. */
export async function loadDeliveryState(db: Db, id: string) {
  const { rows } = await db.$pool.query<{ status: string; attempts: number; next_attempt_at: Date }>({
    name: "tg_delivery_state", text: "SELECT status, attempts, next_attempt_at AT TIME ZONE 'UTC' AS next_attempt_at FROM webhook_deliveries WHERE id = $1", values: [id] });
  return rows[0] ?? null;
}

/** A delivery's stored payload and the trend event behind it (none for tests), for jobs that carry neither. */
export async function loadDeliveryContent(db: Db, id: string) {
  const { rows } = await db.$pool.query<{ payload: unknown; event_type: string | null; trend_id: string | null }>({
    name: "tg_delivery_content",
    // The event behind it: a trend event (type and trend), or an operational account event (type).
    text: `SELECT d.payload, coalesce(e.type, a.type) AS event_type, e.trend_id FROM webhook_deliveries d
             LEFT JOIN trend_events e ON e.id = d.event_id LEFT JOIN account_events a ON a.id = d.event_id AND d.trigger = 'account_event'
            WHERE d.id = $1`,
    values: [id],
  });
  const r = rows[0];
  return r ? { payload: r.payload, event: r.event_type ? { type: r.event_type, trend_id: r.trend_id } : null } : null;
}

/** The subscription row a delivery worker needs (secrets still sealed). */
export async function loadSubscriptionForSend(db: Db, id: string) {
  return db.webhookSubscription.findUnique({
    where: { id },
    select: { id: true, accountId: true, url: true, status: true, secretCiphertext: true, previousSecretCiphertext: true, previousSecretExpiresAt: true, headersCiphertext: true, bodyTemplate: true, rateLimit: true },
  });
}
export type SendableSubscription = NonNullable<Awaited<ReturnType<typeof loadSubscriptionForSend>>>;

/** Whether a delivery still waits for attempt `attempts + 1` (re-read before re-queueing it; see enqueueDelivery). */
export async function isDeliveryPending(db: Db, id: string, attempts: number): Promise<boolean> {
  return (await db.webhookDelivery.count({ where: { id, status: "pending", attempts } })) > 0;
}

/** Which pending deliveries to re-queue: one delivery, or a subscription's, optionally only those due by a time. */
export type PendingDeliveryFilter = { id: string } | { subscriptionId: string; dueBy?: Date };

/** Pending deliveries matching `f`, oldest first, at most `limit`. */
export function findPendingDeliveries(db: Db, f: PendingDeliveryFilter, limit: number) {
  const where = "id" in f ? { id: f.id } : { subscriptionId: f.subscriptionId, ...(f.dueBy ? { nextAttemptAt: { lte: f.dueBy } } : {}) };
  return db.webhookDelivery.findMany({ where: { ...where, status: "pending" }, take: limit, orderBy: { createdAt: "asc" } });
}

/**
 * A test delivery (trigger `test`), due now, for the account's subscription; false (nothing written) when the
 * subscription is gone. A test racing a DELETE of its subscription: the subscription's row is held (FOR KEY SHARE,
 * which a DELETE waits for) for the rest of the caller's transaction, so the insert finds it there, or a DELETE that
 * committed first leaves no row to hold and the answer is false. Outside a transaction the lock ends at once: a
 * foreign-key violation from a DELETE in between also answers false (inside one, the transaction is then aborted: the
 * caller must throw, e.g. not found).
 */
export async function createTestDelivery(db: Db | Tx, d: { id: string; accountId: string; subscriptionId: string; payload: unknown; velocity: number }): Promise<boolean> {
  const held = await db.$queryRaw<{ id: string }[]>`SELECT id FROM webhook_subscriptions WHERE id = ${d.subscriptionId} AND account_id = ${d.accountId} FOR KEY SHARE`;
  if (held.length === 0) return false;
  try {
    await db.webhookDelivery.create({
      data: { id: d.id, accountId: d.accountId, subscriptionId: d.subscriptionId, trigger: "test", payload: d.payload as Prisma.InputJsonValue, velocity: d.velocity, nextAttemptAt: new Date() },
    });
  } catch (err) {
    if (isDbReferenceGone(err)) return false;
    throw err;
  }
  return true;
}

export const findDelivery = (db: Db | Tx, id: string) => db.webhookDelivery.findUnique({ where: { id } });

/** A finished delivery pending again, due now (a replay: same payload, a new attempt). */
export async function reopenDelivery(db: Db | Tx, id: string): Promise<void> {
  await db.webhookDelivery.update({ where: { id }, data: { status: "pending", nextAttemptAt: new Date(), completedAt: null } });
}

/** Every failed delivery of the subscription created since `since` pending again, due now; returns how many. */
export async function reopenFailedDeliveries(db: Db | Tx, subscriptionId: string, since: Date): Promise<number> {
  const { count } = await db.webhookDelivery.updateMany({
    where: { subscriptionId, status: "failed", createdAt: { gte: since } },
    data: { status: "pending", nextAttemptAt: new Date(), completedAt: null },
  });
  return count;
}
