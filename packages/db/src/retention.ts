import type pg from "pg";
import { encodeTime } from "ulid";
import { shortTransaction } from "./short-transaction.ts";

// Bounded storage (docs/operating.md "Retention"): the rows that grow with traffic are deleted once older than their table's
// retention, in small batches, each its own short transaction. A batch deletes at most `limit` rows found through an
// index on the time column, so it holds row locks only on old rows (which nothing else writes) for milliseconds;
// ingestion and delivery never wait on it. lock_timeout makes a batch give up (and the pass stop) rather than queue
// behind a DDL lock, where it would in turn block every writer queued behind it.

export interface RetentionRule {
  /** Also the key in the pass's result. */
  table: string;
  /** The time column compared with the cutoff (timestamp(3), UTC, as Prisma stores DateTime). */
  column: string;
  /** Extra condition a row must meet to go (e.g. "finished"); `t` is the table's alias. */
  where?: string;
  /**
   * Rows whose id is `<idPrefix>_<ulid>` (time-ordered, newId): the batch is found through the primary key (an id
   * bound derived from the cutoff) instead of an index on the time column, so the hot insert path keeps one index
   * fewer. The time column is still checked, so an id not made by newId is never deleted early (only kept).
   */
  idPrefix?: string;
  /** At most this many rows per batch (rows whose delete cascades to large ones). */
  maxBatch?: number;
  /**
   * The table is partitioned by day on `column` (partitions.ts): whole days past the cutoff are dropped (rows `where`
   * spares move to the default partition first), and only its default partition's rows are deleted in batches.
   */
  partitioned?: boolean;
}

/** How long each kind of row is kept, in milliseconds; 0 = forever. */
export interface RetentionPolicy {
  signalsMs: number;
  bucketsMs: number;
  deliveriesMs: number;
  eventsMs: number;
  /** How long a report export's file is kept past its expires_at (the API hides it from then on). */
  expiredExportsMs: number;
}

/** Every table retention bounds, with the policy entry that applies to it. */
export const RETENTION_RULES: readonly (RetentionRule & { keep: keyof RetentionPolicy })[] = [
  // By the time observed (ingestion accepts the last 30 days of it), day by day.
  { table: "signals", column: "observed_at", keep: "signalsMs", partitioned: true },
  { table: "topic_buckets", column: "bucket_start", keep: "bucketsMs" },
  // Only finished deliveries (retrying ones are 'pending'), and only the attempts of deliveries that are not pending.
  { table: "webhook_deliveries", column: "created_at", where: "t.status <> 'pending'", keep: "deliveriesMs" },
  { table: "webhook_executions", column: "created_at", keep: "deliveriesMs",
    where: "NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = t.delivery_id AND d.status = 'pending')", partitioned: true },
  { table: "outbox_messages", column: "created_at", where: "t.status <> 'pending'", keep: "deliveriesMs" },
  { table: "outbox_attempts", column: "created_at", keep: "deliveriesMs",
    where: "NOT EXISTS (SELECT 1 FROM outbox_messages m WHERE m.id = t.message_id AND m.status = 'pending')", partitioned: true },
  // An undispatched event is still to be matched against subscriptions (the outbox sweeper re-queues it).
  { table: "trend_events", column: "created_at", where: "t.dispatched_at IS NOT NULL", keep: "eventsMs" },
  { table: "account_events", column: "created_at", keep: "eventsMs" },
  // Console sessions end within a day of their creation (an hour to open the link, 24 h at most once open).
  { table: "console_sessions", column: "created_at", idPrefix: "cs", keep: "eventsMs" },
  // Expired CSV exports (their chunks go by cascade, up to REPORT_EXPORT_CHUNK_BYTES each, hence small batches). The
  // gateway drops an account's expired exports when it next lists them; this catches accounts that never come back.
  { table: "report_exports", column: "expires_at", where: "t.status NOT IN ('queued', 'running')", keep: "expiredExportsMs", maxBatch: 20 },
];

/** Tables /status reports the size of: those above, plus the other ones that grow with use. */
export const GROWING_TABLES = [...RETENTION_RULES.map((r) => r.table), "report_export_chunks", "topics", "topic_series", "trends", "idempotency_keys"];

/** The smallest id newId(prefix) could have made at `t`: every id below it was made earlier. */
export const idBefore = (prefix: string, t: Date) => `${prefix}_${encodeTime(t.getTime(), 10).toLowerCase()}`;

/** How many rows one batch of `rule` deletes at most, when `limit` is asked for (the rule's own cap wins). */
export const batchLimit = (rule: RetentionRule, limit: number) => Math.min(limit, rule.maxBatch ?? limit);

/**
 * Deletes at most batchLimit(rule, limit) rows of `rule` older than `cutoff`, in one short transaction; returns how
 * many. The rows are picked by ctid in a sub-select and deleted by ctid (a TID scan): a row updated meanwhile has a
 * new ctid and is skipped, so a delivery that went back to pending is never deleted on the strength of an old read.
 */
export async function deleteExpiredBatch(pool: pg.Pool, rule: RetentionRule, cutoff: Date, limit: number, opts: { lockTimeoutMs?: number; statementTimeoutMs?: number } = {}): Promise<number> {
  const params: unknown[] = [cutoff.toISOString(), batchLimit(rule, limit)];
  const conds = [`t.${rule.column} < ($1::timestamptz AT TIME ZONE 'UTC')`];
  if (rule.idPrefix) {
    params.push(`${rule.idPrefix}_`, idBefore(rule.idPrefix, cutoff));
    conds.unshift("t.id >= $3", "t.id < $4");
  }
  if (rule.where) conds.push(`(${rule.where})`);
  // Oldest first along the index: the planner walks it (a seq scan would re-read the freed head of the table every
  // batch until vacuum), and the index entries of rows already deleted are marked dead on the first visit.
  const order = rule.idPrefix ? "t.id" : `t.${rule.column}`;
  const sql = `DELETE FROM ${rule.table} WHERE ctid = ANY(ARRAY(SELECT t.ctid FROM ${rule.table} t WHERE ${conds.join(" AND ")} ORDER BY ${order} LIMIT $2))`;
  return shortTransaction(pool, { lockTimeoutMs: opts.lockTimeoutMs ?? 1000, statementTimeoutMs: opts.statementTimeoutMs ?? 30_000 },
    async (c) => (await c.query(sql, params)).rowCount ?? 0);
}

/**
 * Size on disk (indexes and TOAST included) and estimated rows of each table in `tables` that exists; a partitioned
 * table's are its partitions' summed (the parent itself stores nothing).
 */
export async function tableSizes(pool: pg.Pool, tables: readonly string[]): Promise<Record<string, { bytes: number; rows_estimate: number }>> {
  const { rows } = await pool.query<{ name: string; bytes: string; rows: string }>(
    `SELECT c.relname AS name, sum(pg_total_relation_size(l.oid))::bigint AS bytes, CASE WHEN bool_and(l.reltuples < 0) THEN -1 ELSE sum(greatest(l.reltuples, 0)) END::bigint AS rows
       FROM pg_class c
       JOIN LATERAL (SELECT k.oid, k.reltuples FROM pg_class k
                      WHERE k.oid = c.oid AND c.relkind = 'r' OR k.oid IN (SELECT relid FROM pg_partition_tree(c.oid) WHERE isleaf) AND c.relkind = 'p') l ON true
      WHERE c.relname = ANY($1::text[]) AND c.relkind IN ('r', 'p') AND c.relnamespace = current_schema()::regnamespace
      GROUP BY c.relname ORDER BY c.relname`,
    [tables],
  );
  return Object.fromEntries(rows.map((r) => [r.name, { bytes: Number(r.bytes), rows_estimate: Number(r.rows) }]));
}
