import { encodeTime } from "ulid";
import { ACCOUNT_EVENT_DATA, type AccountEventData, type AccountEventType } from "@trendgate/contracts";
import type { Db, Tx } from "./client.ts";
import type { Prisma } from "./generated/client.ts";
import { newId, type IdPage } from "./ids.ts";

/**
 * Something the service tells an account about; listed by GET /api/events. `data` is typed by its type's schema
 * (contracts: account-events.ts), the one the event catalog publishes, and parsed with it before it is written.
 */
export type AccountEventNotice = { [T in AccountEventType]: { accountId: string; type: T; data: AccountEventData<T> } }[AccountEventType];
export type AccountEventInput = AccountEventNotice & {
  /**
   * Record the event only once: skipped when the account already has an event of the same type, created since
   * `since`, whose data contains `match` (e.g. `{batch_id, index}`), so a retried job does not tell the user twice.
   * The lookup walks the account's events newer than `since` on the (account_id, id) index (ids are time-ordered).
   */
  once?: { match: Record<string, unknown>; since: Date };
};

// Accounts deleted meanwhile are skipped (no foreign-key error). created_at in UTC, like Prisma writes it.
const RECORD_SQL = `
INSERT INTO account_events (id, account_id, type, data, created_at)
SELECT v.id, v.account_id, v.type, v.data, now() AT TIME ZONE 'UTC'
  FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[], $5::jsonb[], $6::text[]) AS v(id, account_id, type, data, match, since_id)
 WHERE EXISTS (SELECT 1 FROM accounts a WHERE a.id = v.account_id)
   AND (v.match IS NULL OR NOT EXISTS (
         SELECT 1 FROM account_events e
          WHERE e.account_id = v.account_id AND e.id >= v.since_id AND e.type = v.type AND e.data @> v.match))
ON CONFLICT (id) DO NOTHING`;

/**
 * Writes account events in one statement; returns how many were written (skipped: already told, account gone).
 * Events recorded `once` take a transaction lock on (account, type, match) first, in a sorted order: two writers
 * checking at the same moment would otherwise both find nothing and both write (two notices 2 ms apart).
 */
export async function recordAccountEvents(db: Db, events: AccountEventInput[]): Promise<number> {
  if (!events.length) return 0;
  const data = events.map(checkedData);
  const col = <T>(f: (e: AccountEventInput) => T) => events.map(f);
  const params = [
    col(() => newId("evt")), col((e) => e.accountId), col((e) => e.type),
    data.map((d) => JSON.stringify(jsonSafe(d))),
    col((e) => (e.once ? JSON.stringify(jsonSafe(e.once.match)) : null)),
    col((e) => (e.once ? `evt_${encodeTime(Math.max(0, e.once.since.getTime()), 10).toLowerCase()}` : null)),
  ];
  const locks = [...new Set(events.flatMap((e, i) => (e.once ? [`account-event-once:${e.accountId}:${e.type}:${params[4][i]}`] : [])))].sort();
  if (!locks.length) return (await db.$pool.query(RECORD_SQL, params)).rowCount ?? 0;
  const client = await db.$pool.connect();
  try {
    await client.query("BEGIN");
    for (const key of locks) await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [key]);
    const { rowCount } = await client.query(RECORD_SQL, params); // a snapshot taken after the locks: sees the other writer's row
    await client.query("COMMIT");
    return rowCount ?? 0;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/**
 * The event's data as its type's schema reads it. A shape the catalog does not publish is a bug at the emitter (the
 * types already refuse it): it throws here rather than reach the account's events and subscribers.
 */
function checkedData(e: AccountEventNotice): Record<string, unknown> {
  const schema = Object.hasOwn(ACCOUNT_EVENT_DATA, e.type) ? ACCOUNT_EVENT_DATA[e.type] : undefined;
  if (!schema) throw new Error(`account event ${e.type}: not a type of the event catalog`);
  const r = schema.safeParse(e.data);
  if (!r.success) throw new Error(`account event ${e.type}: ${r.error.issues.map((i) => `${i.path.join(".") || "data"}: ${i.message}`).join("; ")}`);
  return r.data;
}

/**
 * Text Postgres can keep in jsonb: NUL characters (which jsonb refuses) and lone surrogates (which would not survive
 * UTF-8) become U+FFFD, recursively. Event data often quotes what the user sent, which is exactly where these hide.
 */
export function jsonSafe<T>(v: T): T {
  if (typeof v === "string") return v.replace(/\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD") as T;
  if (Array.isArray(v)) return v.map(jsonSafe) as T;
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [jsonSafe(k), jsonSafe(x)])) as T;
  return v;
}

/**
 * The same events written in the caller's transaction (an operator action and the notice of it commit together).
 * `data.notify_webhook_id` also delivers the event to that subscription of the account, whatever its event types.
 */
export async function recordAccountEventsIn(tx: Tx, events: AccountEventNotice[]): Promise<void> {
  if (!events.length) return;
  await tx.accountEvent.createMany({
    data: events.map((e) => ({ id: newId("evt"), accountId: e.accountId, type: e.type, data: jsonSafe(checkedData(e)) as Prisma.InputJsonValue })),
  });
}

/** A page of the account's events, newest first, of one type when given. */
export const listAccountEvents = (db: Db, accountId: string, type: string | undefined, page: IdPage) =>
  db.accountEvent.findMany({ where: { accountId, ...(type ? { type } : {}), ...page.after }, orderBy: { id: "desc" }, take: page.take });

/** An operational delivery made by pushAccountEvents, for the caller to queue. */
export interface PushedDelivery {
  id: string;
  subscriptionId: string;
  status: "pending" | "failed";
  subscriptionStatus: string;
  type: string;
  payload: { id: string; type: string; created_at: string; data: Record<string, unknown> };
}

/**
 * Fans out account events not pushed yet (oldest first, at most `limit`) to the webhook subscriptions of their
 * account whose event_types list their type: one transaction marks them pushed and writes the deliveries (the
 * outbox rows), so a crash loses neither; the caller queues the pending ones after it (or the sweeper does).
 * Concurrent callers skip each other's rows (SKIP LOCKED). A disabled subscription gets a failed row, for `recover`.
 */
export async function pushAccountEvents(db: Db, limit: number): Promise<{ events: number; deliveries: PushedDelivery[] }> {
  const client = await db.$pool.connect();
  try {
    await client.query("BEGIN");
    const { rows: events } = await client.query<{ id: string; account_id: string; type: string; data: Record<string, unknown>; created_at: string }>(
      `UPDATE account_events SET pushed_at = now() AT TIME ZONE 'UTC'
        WHERE id IN (SELECT id FROM account_events WHERE pushed_at IS NULL ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
        RETURNING id, account_id, type, data, to_char(created_at, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at`, [limit]);
    let deliveries: PushedDelivery[] = [];
    if (events.length) {
      const targetOf = (e: { data: Record<string, unknown> }) => (typeof e.data.notify_webhook_id === "string" ? e.data.notify_webhook_id : null);
      const { rows: subs } = await client.query<{ id: string; account_id: string; event_types: string[]; status: string }>(
        `SELECT id, account_id, event_types, status FROM webhook_subscriptions
          WHERE account_id = ANY($1::text[]) AND ((trigger_type = 'event_types' AND event_types && $2::text[]) OR id = ANY($3::text[]))`,
        [[...new Set(events.map((e) => e.account_id))], [...new Set(events.map((e) => e.type))], events.map(targetOf).filter((x) => x !== null)]);
      const receives = (s: (typeof subs)[number], e: (typeof events)[number]) =>
        s.account_id === e.account_id && (s.event_types.includes(e.type) || s.id === targetOf(e));
      const pairs = events.flatMap((e) => subs.filter((s) => receives(s, e)).map((s) => ({
        id: newId("msg"), e, s, payload: { id: e.id, type: e.type, created_at: e.created_at, data: e.data },
      })));
      if (pairs.length) {
        const { rows } = await client.query<{ id: string; status: "pending" | "failed" }>(
          `INSERT INTO webhook_deliveries (id, account_id, subscription_id, event_id, trigger, payload, velocity, status, attempts, next_attempt_at, last_error, created_at, completed_at)
           SELECT v.id, s.account_id, s.id, v.event_id, 'account_event', v.payload, 0,
                  CASE WHEN s.status = 'disabled' THEN 'failed' ELSE 'pending' END, 0, now(),
                  CASE WHEN s.status = 'disabled' THEN 'subscription disabled' END, now(), CASE WHEN s.status = 'disabled' THEN now() END
             FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[]) AS v(id, subscription_id, event_id, payload)
             JOIN webhook_subscriptions s ON s.id = v.subscription_id
           ON CONFLICT (subscription_id, event_id) DO NOTHING
           RETURNING id, status`,
          [pairs.map((p) => p.id), pairs.map((p) => p.s.id), pairs.map((p) => p.e.id), pairs.map((p) => JSON.stringify(jsonSafe(p.payload)))]);
        const made = new Map(rows.map((r) => [r.id, r.status]));
        deliveries = pairs.filter((p) => made.has(p.id)).map((p) => ({
          id: p.id, subscriptionId: p.s.id, status: made.get(p.id)!, subscriptionStatus: p.s.status, type: p.e.type, payload: p.payload,
        }));
      }
    }
    await client.query("COMMIT");
    return { events: events.length, deliveries };
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}
