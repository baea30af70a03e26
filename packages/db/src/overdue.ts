import type pg from "pg";

// What the outbox sweeper reads, for webhook deliveries and outbox messages alike: pending rows overdue by a grace
// period (their job may have been lost with Redis), and the re-check of the candidates it found lost. One query
// each, over either table.

/** Something that runs a query: the pool, or one client of it (e.g. one holding a session advisory lock). */
export type Queryable = Pick<pg.Pool, "query"> | Pick<pg.PoolClient, "query">;

/** An overdue row; `cursor_at` (its next_attempt_at as text) and `id` page on to the next rows. */
export interface OverdueRow { id: string; attempts: number; cursor_at: string }
export interface OverdueDelivery extends OverdueRow { subscription_id: string; trigger: string; payload: unknown }
export type OverdueOutboxMessage = OverdueRow;

interface Source {
  table: "webhook_deliveries" | "outbox_messages";
  /** Columns besides id and attempts, and joins, of alias `d`. */
  columns: string;
  from: string;
  /** "now" as the table's next_attempt_at is compared with it. */
  now: string;
}

const DELIVERIES: Source = {
  table: "webhook_deliveries",
  columns: ", d.subscription_id, d.trigger, d.payload",
  // Only deliveries of active subscriptions: held or disabled ones are re-queued by resume or recover.
  from: "webhook_deliveries d JOIN webhook_subscriptions s ON s.id = d.subscription_id AND s.status = 'active'",
  now: "now()",
};
const OUTBOX: Source = { table: "outbox_messages", columns: "", from: "outbox_messages d", now: "(now() AT TIME ZONE 'UTC')" };

/**
 * Pending rows that should have been sent at least `olderThanSeconds` ago, oldest first, `limit` at a time; pass the
 * last row back as `after` for the next page (the rows stay pending while their new jobs wait, so paging must not
 * start over). `queue`: only that outbox queue's messages (served by the partial index outbox_messages_due_idx).
 */
async function findOverdue<R extends OverdueRow>(q: Queryable, src: Source, queue: string | null, olderThanSeconds: number, limit: number, after: R | null): Promise<R[]> {
  const { rows } = await (q as pg.Pool).query<R>(
    `SELECT d.id, d.attempts${src.columns}, d.next_attempt_at::text AS cursor_at FROM ${src.from}
      WHERE d.status = 'pending' AND d.next_attempt_at <= ${src.now} - $1 * interval '1 second'${queue === null ? "" : " AND d.queue = $5"}
        AND ($3::timestamp IS NULL OR (d.next_attempt_at, d.id) > ($3::timestamp, $4::text))
      ORDER BY d.next_attempt_at, d.id LIMIT $2`,
    [olderThanSeconds, limit, after?.cursor_at ?? null, after?.id ?? null, ...(queue === null ? [] : [queue])],
  );
  return rows;
}

/** Of these (row, attempts) pairs, the rows still pending with exactly that many attempts made: one query. */
async function pendingAt(q: Queryable, src: Source, pairs: { id: string; attempts: number }[]): Promise<Set<string>> {
  if (!pairs.length) return new Set();
  // Only the primary key in the query, filtered here: with a status condition the planner may walk the partial
  // "pending" index (every pending row, and its dead versions) instead of 1,000 key lookups.
  const { rows } = await (q as pg.Pool).query<{ id: string; status: string; attempts: number }>(
    `SELECT id, status, attempts FROM ${src.table} WHERE id = ANY($1::text[])`, [pairs.map((p) => p.id)]);
  const want = new Map(pairs.map((p) => [p.id, p.attempts]));
  return new Set(rows.filter((r) => r.status === "pending" && want.get(r.id) === r.attempts).map((r) => r.id));
}

export const findOverdueDeliveries = (q: Queryable, olderThanSeconds: number, limit: number, after: OverdueDelivery | null = null) =>
  findOverdue(q, DELIVERIES, null, olderThanSeconds, limit, after);
export const findOverdueOutboxMessages = (q: Queryable, queue: string, olderThanSeconds: number, limit: number, after: OverdueOutboxMessage | null = null) =>
  findOverdue(q, OUTBOX, queue, olderThanSeconds, limit, after);
export const pendingDeliveries = (q: Queryable, pairs: { id: string; attempts: number }[]) => pendingAt(q, DELIVERIES, pairs);
export const pendingOutboxMessages = (q: Queryable, pairs: { id: string; attempts: number }[]) => pendingAt(q, OUTBOX, pairs);
