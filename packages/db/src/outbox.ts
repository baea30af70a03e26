import type pg from "pg";
import type { Db, Tx } from "./client.ts";
import type { OutboxMessage } from "./generated/client.ts";
import { newId } from "./ids.ts";
import type { Queryable } from "./webhook-deliveries.ts";

// The shared outbox (chat messages now; workflow pushes, conversions, ads applies next): a message row is committed
// before its job exists, every attempt is logged once, and the outbox sweeper re-queues any message whose job was
// lost. Redis only schedules; these rows are the record. Times are stored as UTC (`timestamp(3)`, as Prisma does).

export type { OutboxMessage };
export type OutboxStatus = "pending" | "succeeded" | "failed" | "cancelled";

export interface NewOutboxMessage {
  queue: string;
  accountId: string;
  connectionId?: string | null;
  /** What the message is about (an operator item, ...): cancelOutboxMessages finds it by this. */
  subjectId?: string | null;
  /** A second message with the same (queue, dedupKey) is not added (and not returned). */
  dedupKey?: string | null;
  payload: unknown;
  /** Not sent before this time (default: now). */
  notBefore?: Date | null;
}

/** What dispatchOutbox (@trendgate/queues) needs to queue a message's first attempt. */
export interface OutboxRow { id: string; queue: string; next_attempt_at: Date }

/**
 * Inserts messages in the caller's transaction (or on its own), skipping duplicates of (queue, dedup_key). Returns
 * the rows actually inserted, in the order given: hand them to dispatchOutbox after the commit (a dispatch that
 * fails or never happens is left to the sweeper).
 */
export async function addOutboxMessages(tx: Tx, msgs: NewOutboxMessage[]): Promise<OutboxRow[]> {
  if (!msgs.length) return [];
  const now = new Date();
  const values = msgs.map((m) => ({
    id: newId("obx"), queue: m.queue, account_id: m.accountId, connection_id: m.connectionId ?? null, subject_id: m.subjectId ?? null,
    dedup_key: m.dedupKey ?? null, payload: m.payload ?? null, next_attempt_at: (m.notBefore ?? now).toISOString(),
  }));
  const rows = await tx.$queryRawUnsafe<OutboxRow[]>(
    `INSERT INTO outbox_messages (id, account_id, queue, connection_id, subject_id, dedup_key, payload, status, attempts, next_attempt_at, created_at)
     SELECT id, account_id, queue, connection_id, subject_id, dedup_key, payload, 'pending', 0, next_attempt_at AT TIME ZONE 'UTC', now() AT TIME ZONE 'UTC'
       FROM jsonb_to_recordset($1::jsonb) AS v(id text, account_id text, queue text, connection_id text, subject_id text, dedup_key text, payload jsonb, next_attempt_at timestamptz)
     ON CONFLICT (queue, dedup_key) DO NOTHING
     RETURNING id, queue, next_attempt_at`,
    JSON.stringify(values),
  );
  const order = new Map(values.map((v, i) => [v.id, i]));
  return rows.sort((a, b) => order.get(a.id)! - order.get(b.id)!);
}

/** A message as its worker sees it, or null when it was deleted. */
export async function loadOutboxMessage(db: Db | Tx, id: string): Promise<OutboxMessage | null> {
  return db.outboxMessage.findUnique({ where: { id } });
}

export interface OutboxAttemptRecord {
  messageId: string;
  attempt: number;
  outcome: "succeeded" | "retrying" | "failed";
  /** The provider's HTTP status, when there was one. */
  responseStatus?: number | null;
  /** A ProviderError kind (the one error vocabulary). */
  errorClass?: string | null;
  errorMessage?: string | null;
  durationMs: number;
  /** When the next attempt is due (outcome `retrying`). */
  nextRetryAt?: Date | null;
  /** What the send returned (e.g. the provider's message id), kept on the message. */
  result?: unknown;
}

export interface RecordedAttempt {
  /** False when this attempt was recorded before (a job run twice) or the message is gone: nothing changed. */
  recorded: boolean;
  /** The message's status afterwards (`cancelled` wins over a retry: a message cancelled mid-send is not retried). */
  status: OutboxStatus | null;
}

// One statement, so one transaction: the attempt row and the message's new state commit together, and only while
// the message has fewer attempts than this one (row-locked first, so a concurrent cancel or duplicate run waits).
const RECORD_SQL = `
WITH m AS (
  SELECT id, account_id, queue, status FROM outbox_messages WHERE id = $1 AND attempts < $2 FOR UPDATE
), ins AS (
  INSERT INTO outbox_attempts (id, message_id, account_id, queue, attempt, outcome, response_status, error_class, error_message, duration_ms, next_retry_at, created_at)
  SELECT $3, m.id, m.account_id, m.queue, $2, $4, $5, $6, $7, $8, $9::timestamptz AT TIME ZONE 'UTC', clock_timestamp() AT TIME ZONE 'UTC' FROM m
  ON CONFLICT (message_id, attempt) DO NOTHING
  RETURNING message_id
), s AS (
  SELECT m.id, CASE WHEN $4 = 'retrying' THEN CASE WHEN m.status = 'cancelled' THEN 'cancelled' ELSE 'pending' END ELSE $4 END AS status
    FROM m JOIN ins ON ins.message_id = m.id
)
UPDATE outbox_messages o
   SET status = s.status, attempts = $2, last_error = $7, result = coalesce($10::jsonb, o.result),
       next_attempt_at = coalesce($9::timestamptz AT TIME ZONE 'UTC', now() AT TIME ZONE 'UTC'),
       completed_at = CASE WHEN s.status = 'pending' THEN NULL ELSE coalesce(o.completed_at, now() AT TIME ZONE 'UTC') END
  FROM s WHERE o.id = s.id
RETURNING o.status`;

/** Records one attempt and moves the message to its new state (see RECORD_SQL). Safe to call again after an error. */
export async function recordOutboxAttempt(db: Db, r: OutboxAttemptRecord): Promise<RecordedAttempt> {
  const { rows } = await db.$pool.query<{ status: OutboxStatus }>(RECORD_SQL, [
    r.messageId, r.attempt, newId("oba"), r.outcome, r.responseStatus ?? null, r.errorClass ?? null, pgText(r.errorMessage ?? null),
    Math.max(0, Math.round(r.durationMs)), r.nextRetryAt?.toISOString() ?? null, r.result === undefined ? null : JSON.stringify(r.result),
  ]);
  return rows[0] ? { recorded: true, status: rows[0].status } : { recorded: false, status: null };
}

export interface OverdueOutboxMessage { id: string; attempts: number; cursor_at: string }

/**
 * Pending messages of `queue` that should have been sent at least `olderThanSeconds` ago (their job may have been
 * lost with Redis), oldest first, `limit` at a time; pass the last row back as `after` for the next page (like
 * findOverdueDeliveries; served by the partial index outbox_messages_due_idx).
 */
export async function findOverdueOutboxMessages(q: Queryable, queue: string, olderThanSeconds: number, limit: number, after: OverdueOutboxMessage | null = null): Promise<OverdueOutboxMessage[]> {
  const { rows } = await (q as pg.Pool).query<OverdueOutboxMessage>(
    `SELECT id, attempts, next_attempt_at::text AS cursor_at FROM outbox_messages
      WHERE queue = $1 AND status = 'pending' AND next_attempt_at <= (now() AT TIME ZONE 'UTC') - $2 * interval '1 second'
        AND ($4::timestamp IS NULL OR (next_attempt_at, id) > ($4::timestamp, $5::text))
      ORDER BY next_attempt_at, id LIMIT $3`,
    [queue, olderThanSeconds, limit, after?.cursor_at ?? null, after?.id ?? null],
  );
  return rows;
}

/** Of these (message, attempts) pairs, the messages still pending with exactly that many attempts made: one query. */
export async function pendingOutboxMessages(q: Queryable, pairs: { id: string; attempts: number }[]): Promise<Set<string>> {
  if (!pairs.length) return new Set();
  // Primary-key lookups only, filtered here (see pendingDeliveries).
  const { rows } = await (q as pg.Pool).query<{ id: string; status: string; attempts: number }>(
    "SELECT id, status, attempts FROM outbox_messages WHERE id = ANY($1::text[])", [pairs.map((p) => p.id)]);
  const want = new Map(pairs.map((p) => [p.id, p.attempts]));
  return new Set(rows.filter((r) => r.status === "pending" && want.get(r.id) === r.attempts).map((r) => r.id));
}

/**
 * Cancels the pending messages about `subjectId` (optionally of one queue): their jobs then skip them, and an
 * attempt already in flight is recorded but not retried. Returns the ids cancelled.
 */
export async function cancelOutboxMessages(tx: Tx, subjectId: string, queue?: string): Promise<string[]> {
  const rows = await tx.$queryRawUnsafe<{ id: string }[]>(
    `UPDATE outbox_messages SET status = 'cancelled', completed_at = now() AT TIME ZONE 'UTC'
      WHERE subject_id = $1 AND status = 'pending' AND ($2::text IS NULL OR queue = $2::text)
      RETURNING id`,
    subjectId, queue ?? null,
  );
  return rows.map((r) => r.id);
}

/** Text Postgres can store: no NUL characters (a provider's error text may contain anything), and bounded. */
const pgText = (s: string | null) => (s === null ? null : s.replaceAll("\u0000", "\uFFFD").slice(0, 2000));
