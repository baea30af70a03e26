import type { OutboxPayload, OutboxQueueName } from "@trendgate/contracts";
import type { Db, Tx } from "./client.ts";
import type { OutboxAttempt, OutboxMessage } from "./generated/client.ts";
import { newId } from "./ids.ts";

// The shared outbox (chat messages now; workflow pushes, conversions, ads applies next): a message row is committed
// before its job exists, every attempt is logged once, and the outbox sweeper re-queues any message whose job was
// lost. Redis only schedules; these rows are the record. Times are stored as UTC (`timestamp(3)`, as Prisma does).

export type { OutboxMessage };
export type OutboxAttemptRow = OutboxAttempt;
/** `unknown`: the last attempt may have reached the peer's action (e.g. a workflow that ran and failed); not retried. */
export type OutboxStatus = "pending" | "succeeded" | "failed" | "unknown" | "cancelled";

/** A message to add: its payload typed by its queue (OUTBOX_PAYLOADS), as the worker will parse it. */
export type NewOutboxMessage<Q extends OutboxQueueName = OutboxQueueName> = { [K in Q]: NewOutboxFields & { queue: K; payload: OutboxPayload<K> } }[Q];

interface NewOutboxFields {
  accountId: string;
  connectionId?: string | null;
  /** What the message is about (an operator item, ...): cancelOutboxMessages finds it by this. */
  subjectId?: string | null;
  /** A second message with the same (queue, dedupKey) is not added (and not returned). */
  dedupKey?: string | null;
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
  const values = insertValues(msgs);
  const rows = await tx.$queryRawUnsafe<OutboxRow[]>(INSERT_SQL, JSON.stringify(values));
  const order = new Map(values.map((v, i) => [v.id, i]));
  return rows.sort((a, b) => order.get(a.id)! - order.get(b.id)!);
}

const INSERT_SQL = `INSERT INTO outbox_messages (id, account_id, queue, connection_id, subject_id, dedup_key, payload, status, attempts, next_attempt_at, created_at)
     SELECT id, account_id, queue, connection_id, subject_id, dedup_key, payload, 'pending', 0, next_attempt_at AT TIME ZONE 'UTC', now() AT TIME ZONE 'UTC'
       FROM jsonb_to_recordset($1::jsonb) AS v(id text, account_id text, queue text, connection_id text, subject_id text, dedup_key text, payload jsonb, next_attempt_at timestamptz)
     ON CONFLICT (queue, dedup_key) DO NOTHING
     RETURNING id, queue, next_attempt_at AT TIME ZONE 'UTC' AS next_attempt_at`;

function insertValues(msgs: NewOutboxMessage[]) {
  const now = new Date();
  return msgs.map((m) => ({
    id: newId("obx"), queue: m.queue, account_id: m.accountId, connection_id: m.connectionId ?? null, subject_id: m.subjectId ?? null,
    dedup_key: m.dedupKey ?? null, payload: m.payload ?? null, next_attempt_at: (m.notBefore ?? now).toISOString(),
  }));
}

type Grouped = { msg: NewOutboxMessage; resolve(row: OutboxRow | null): void; reject(e: unknown): void }[];
const groupedByDb = new WeakMap<Db, Grouped>();

/**
 * One message on its own (no transaction of the caller's), added with the others added in the same turn of the event
 * loop as one INSERT: one statement and one commit for all (conversion pushes: 1.8x the pushes accepted per second
 * than with a transaction each). Resolves to the row, or null for a duplicate of (queue, dedup_key).
 * When the shared statement fails, each message is tried alone: a row Postgres refuses fails only its own caller.
 */
export function addOutboxMessageGrouped(db: Db, msg: NewOutboxMessage): Promise<OutboxRow | null> {
  return new Promise((resolve, reject) => {
    let group = groupedByDb.get(db);
    if (!group) {
      const mine: Grouped = [];
      group = mine;
      groupedByDb.set(db, mine);
      setImmediate(() => {
        groupedByDb.delete(db);
        void insertGroup(db, mine);
      });
    }
    group.push({ msg, resolve, reject });
  });
}

async function insertGroup(db: Db, group: Grouped): Promise<void> {
  const values = insertValues(group.map((g) => g.msg));
  try {
    const { rows } = await db.$pool.query<OutboxRow>(INSERT_SQL, [JSON.stringify(values)]);
    const byId = new Map(rows.map((r) => [r.id, r]));
    group.forEach((g, i) => g.resolve(byId.get(values[i].id) ?? null));
  } catch (err) {
    if (group.length === 1) return group[0].reject(err);
    await Promise.all(group.map((g) => insertGroup(db, [g])));
  }
}

// The row as Prisma's OutboxMessage (times are stored as UTC without a zone: read back as instants).
const MESSAGE_COLUMNS = `id, account_id AS "accountId", queue, connection_id AS "connectionId", subject_id AS "subjectId",
  dedup_key AS "dedupKey", payload, status, attempts, next_attempt_at AT TIME ZONE 'UTC' AS "nextAttemptAt",
  last_error AS "lastError", result, created_at AT TIME ZONE 'UTC' AS "createdAt",
  completed_at AT TIME ZONE 'UTC' AS "completedAt"`;

type Waiting = Map<string, { resolve(m: OutboxMessage | null): void; reject(e: unknown): void }[]>;
const waitingByDb = new WeakMap<Db, Waiting>();

/**
 * A message as its worker sees it, or null when it was deleted. Every outbox job starts with this read, so the reads
 * of the jobs that start in the same turn of the event loop go out as one primary-key query on the pg pool.
 */
export function loadOutboxMessage(db: Db, id: string): Promise<OutboxMessage | null> {
  let waiting = waitingByDb.get(db);
  if (!waiting) {
    const batch: Waiting = new Map();
    waiting = batch;
    waitingByDb.set(db, batch);
    setImmediate(() => {
      waitingByDb.delete(db);
      db.$pool.query<OutboxMessage>(`SELECT ${MESSAGE_COLUMNS} FROM outbox_messages WHERE id = ANY($1::text[])`, [[...batch.keys()]]).then(
        ({ rows }) => {
          const byId = new Map(rows.map((r) => [r.id, r]));
          for (const [key, ws] of batch) for (const w of ws) w.resolve(byId.get(key) ?? null);
        },
        (err) => { for (const ws of batch.values()) for (const w of ws) w.reject(err); });
    });
  }
  const target = waiting;
  return new Promise((resolve, reject) => {
    const ws = target.get(id);
    if (ws) ws.push({ resolve, reject });
    else target.set(id, [{ resolve, reject }]);
  });
}

export interface OutboxAttemptRecord {
  messageId: string;
  attempt: number;
  outcome: "succeeded" | "retrying" | "failed" | "unknown";
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

// One statement, so one transaction, for a batch of attempts (one commit for all: a one-row commit costs Postgres
// ~20x a row inside a multi-row write). Each attempt row and its message's new state commit together, and only
// while the message has fewer attempts than this one; messages are row-locked first, in id order, so a concurrent
// cancel or duplicate run waits and two batches never deadlock.
const RECORD_SQL = `
WITH v AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS v(message_id text, attempt int, id text, outcome text, response_status int,
    error_class text, error_message text, duration_ms int, next_retry_at timestamptz, result jsonb)
), m AS (
  SELECT o.id, o.account_id, o.queue, o.status FROM outbox_messages o JOIN v ON v.message_id = o.id AND o.attempts < v.attempt
   ORDER BY o.id FOR UPDATE OF o
), ins AS (
  INSERT INTO outbox_attempts (id, message_id, account_id, queue, attempt, outcome, response_status, error_class, error_message, duration_ms, next_retry_at, created_at)
  SELECT v.id, m.id, m.account_id, m.queue, v.attempt, v.outcome, v.response_status, v.error_class, v.error_message, v.duration_ms,
         v.next_retry_at AT TIME ZONE 'UTC', clock_timestamp() AT TIME ZONE 'UTC'
    FROM m JOIN v ON v.message_id = m.id
  RETURNING message_id
), s AS (
  SELECT m.id, v.attempt, v.error_message, v.result, v.next_retry_at,
         CASE WHEN v.outcome = 'retrying' THEN CASE WHEN m.status = 'cancelled' THEN 'cancelled' ELSE 'pending' END ELSE v.outcome END AS status
    FROM m JOIN ins ON ins.message_id = m.id JOIN v ON v.message_id = m.id
)
UPDATE outbox_messages o
   SET status = s.status, attempts = s.attempt, last_error = s.error_message, result = coalesce(s.result, o.result),
       next_attempt_at = coalesce(s.next_retry_at AT TIME ZONE 'UTC', now() AT TIME ZONE 'UTC'),
       completed_at = CASE WHEN s.status = 'pending' THEN NULL ELSE coalesce(o.completed_at, now() AT TIME ZONE 'UTC') END
  FROM s WHERE o.id = s.id
RETURNING o.id, o.status`;

/**
 * Records attempts and moves their messages to their new state (see RECORD_SQL), answering one result per record,
 * in order. Safe to call again after an error. Of two records for the same message in one call, the first counts.
 */
export async function recordOutboxAttempts(db: Db, records: OutboxAttemptRecord[]): Promise<RecordedAttempt[]> {
  if (!records.length) return [];
  const first = new Map<string, number>();
  records.forEach((r, i) => { if (!first.has(r.messageId)) first.set(r.messageId, i); });
  const values = records.filter((r, i) => first.get(r.messageId) === i).map((r) => ({
    message_id: r.messageId, attempt: r.attempt, id: newId("oba"), outcome: r.outcome, response_status: r.responseStatus ?? null,
    error_class: r.errorClass ?? null, error_message: pgText(r.errorMessage ?? null), duration_ms: Math.max(0, Math.round(r.durationMs)),
    next_retry_at: r.nextRetryAt?.toISOString() ?? null, result: r.result === undefined ? null : r.result,
  }));
  const { rows } = await db.$pool.query<{ id: string; status: OutboxStatus }>(RECORD_SQL, [JSON.stringify(values)]);
  const status = new Map(rows.map((r) => [r.id, r.status]));
  return records.map((r, i) => (first.get(r.messageId) === i && status.has(r.messageId)
    ? { recorded: true, status: status.get(r.messageId)! }
    : { recorded: false, status: null }));
}

/** Records one attempt (recordOutboxAttempts with one record). */
export async function recordOutboxAttempt(db: Db, r: OutboxAttemptRecord): Promise<RecordedAttempt> {
  return (await recordOutboxAttempts(db, [r]))[0];
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

export interface OutboxBatchGroup {
  queue: string;
  connectionId: string;
  /** The group's key in subject_id (conversion events: pixel and test id). */
  subjectId: string;
}

/**
 * The batch a leader sends (the caller holds its group's batch lock): its own message, only while still pending with
 * exactly `leader.attempts` attempts, then up to `limit` other due, pending messages of its group, oldest first, none
 * of `exclude` (messages sent whose records are being written). Null when its own message was recorded meanwhile
 * (by an earlier batch): send nothing. Without a leader: just the group's next messages.
 */
export async function findOutboxBatch(db: Db, group: OutboxBatchGroup, leader: { id: string; attempts: number } | null, limit: number, exclude: string[] = []): Promise<OutboxMessage[] | null> {
  const { rows } = await db.$pool.query<OutboxMessage>(
    `(SELECT ${MESSAGE_COLUMNS} FROM outbox_messages WHERE id = $4 AND status = 'pending' AND attempts = $5)
     UNION ALL
     (SELECT ${MESSAGE_COLUMNS} FROM outbox_messages
       WHERE queue = $1 AND connection_id = $2 AND subject_id = $3 AND status = 'pending' AND id IS DISTINCT FROM $4
         AND id <> ALL($7::text[]) AND next_attempt_at <= now() AT TIME ZONE 'UTC'
       ORDER BY next_attempt_at, id LIMIT $6)`,
    [group.queue, group.connectionId, group.subjectId, leader?.id ?? null, leader?.attempts ?? null, limit, exclude]);
  if (!leader) return rows;
  return rows[0]?.id === leader.id ? rows : null;
}

/** Pending messages of a group (due or not), counted up to `max`. */
export async function countOutboxGroup(db: Db, group: OutboxBatchGroup, max: number): Promise<number> {
  const { rows } = await db.$pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (SELECT 1 FROM outbox_messages
        WHERE queue = $1 AND connection_id = $2 AND subject_id = $3 AND status = 'pending' LIMIT $4) x`,
    [group.queue, group.connectionId, group.subjectId, max]);
  return rows[0]?.n ?? 0;
}

/** Messages a user may send again: ended without (certain) success. */
export const REPLAYABLE_STATUSES = ["failed", "unknown"] as const;

/**
 * Puts an account's message of `queue` that failed (or whose outcome is unknown) back to pending for one more
 * attempt, due now; the caller queues that attempt (dispatchOutbox with `attempts`) after the commit. Returns the row
 * to queue, or what it found instead: `missing` (no such message of this account and queue) or its status.
 */
export async function replayOutboxMessage(tx: Tx, accountId: string, queue: string, id: string): Promise<{ row: OutboxRow & { attempts: number } } | { status: string | "missing" }> {
  const rows = await tx.$queryRawUnsafe<(OutboxRow & { attempts: number })[]>(
    `UPDATE outbox_messages SET status = 'pending', next_attempt_at = now() AT TIME ZONE 'UTC', completed_at = NULL
      WHERE id = $1 AND account_id = $2 AND queue = $3 AND status = ANY($4::text[])
      RETURNING id, queue, next_attempt_at AT TIME ZONE 'UTC' AS next_attempt_at, attempts`,
    id, accountId, queue, [...REPLAYABLE_STATUSES]);
  if (rows[0]) return { row: rows[0] };
  const found = await tx.outboxMessage.findFirst({ where: { id, accountId, queue }, select: { status: true } });
  return { status: found?.status ?? "missing" };
}

// Reads of the listings of what a connector sent (workflow executions, conversion events).

/**
 * The account's messages of `queue`, newest first, of one status when given, after the cursor (a message id) when
 * given; `take` rows (ask for one more than the page to know whether a next page exists).
 */
export const listOutboxMessages = (db: Db, q: { accountId: string; queue: string; status?: string; cursor?: string; take: number }) =>
  db.outboxMessage.findMany({
    where: { accountId: q.accountId, queue: q.queue, ...(q.status ? { status: q.status } : {}), ...(q.cursor ? { id: { lt: q.cursor } } : {}) },
    orderBy: { id: "desc" }, take: q.take,
  });

/** The attempts of these messages, each message's in order. */
export const outboxAttemptsOf = (db: Db, messageIds: string[]): Promise<OutboxAttemptRow[]> =>
  db.outboxAttempt.findMany({ where: { messageId: { in: messageIds } }, orderBy: { attempt: "asc" } });

/** One message's attempts, in order. */
export const outboxMessageAttempts = (db: Db, messageId: string): Promise<OutboxAttemptRow[]> =>
  db.outboxAttempt.findMany({ where: { messageId }, orderBy: { attempt: "asc" } });

/** One of the account's messages of `queue`, or null. */
export const findAccountOutboxMessage = (db: Db, accountId: string, queue: string, id: string) =>
  db.outboxMessage.findFirst({ where: { id, accountId, queue } });

/** The message of `queue` with this de-duplication key, or null. */
export const findOutboxMessageByDedupKey = (db: Db | Tx, queue: string, dedupKey: string) =>
  db.outboxMessage.findUnique({ where: { queue_dedupKey: { queue, dedupKey } } });

/** Whose message of `queue` has this de-duplication key: its id and account, or null. */
export const outboxMessageOwnerByDedupKey = (db: Db | Tx, queue: string, dedupKey: string) =>
  db.outboxMessage.findUnique({ where: { queue_dedupKey: { queue, dedupKey } }, select: { id: true, accountId: true } });

/** Cancels the pending messages of a connection (it is being deleted: a later connection is a new row). */
export async function cancelConnectionOutboxMessages(tx: Tx, connectionId: string): Promise<number> {
  const r = await tx.outboxMessage.updateMany({ where: { connectionId, status: "pending" }, data: { status: "cancelled", completedAt: new Date() } });
  return r.count;
}

/** Text Postgres can store: no NUL characters (a provider's error text may contain anything), and bounded. */
const pgText = (s: string | null) => (s === null ? null : s.replaceAll("\u0000", "\uFFFD").slice(0, 2000));
