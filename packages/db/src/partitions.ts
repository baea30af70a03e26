import type pg from "pg";
import { shortTransaction } from "./short-transaction.ts";

// The append-only logs that grow with traffic are range-partitioned by day (migration 20261216000001_partitioned_logs):
// `<table>_pYYYYMMDD` holds [day, day + 1) of its partition column, `<table>_default` anything no day partition covers.
// The service keeps partitions made ahead of time and drops whole days past retention: a DROP of a day's table
// instead of deleting millions of rows one by one (no vacuum debt, no index bloat, no WAL per row).

export interface PartitionedTable {
  table: string;
  /** The range partition column (timestamp(3), UTC). */
  column: string;
}

export const PARTITIONED_TABLES: readonly PartitionedTable[] = [
  { table: "signals", column: "observed_at" },
  { table: "webhook_executions", column: "created_at" },
  { table: "outbox_attempts", column: "created_at" },
];

/** Day partitions kept made ahead of today, so a worker fleet that stops for days still finds its partitions. */
export const PARTITION_DAYS_AHEAD = 14;

const DAY_MS = 86_400_000;
const dayOf = (t: Date) => new Date(Math.floor(t.getTime() / DAY_MS) * DAY_MS);
const isoDay = (t: Date) => t.toISOString().slice(0, 10);

/**
 * Makes every missing day partition of each partitioned table from yesterday to PARTITION_DAYS_AHEAD days ahead;
 * returns how many it made. Rows the default partition took for one of those days move into it.
 */
export async function ensurePartitions(pool: pg.Pool, now = new Date(), opts: { lockTimeoutMs?: number } = {}): Promise<number> {
  const from = isoDay(new Date(dayOf(now).getTime() - DAY_MS));
  const to = isoDay(new Date(dayOf(now).getTime() + PARTITION_DAYS_AHEAD * DAY_MS));
  let made = 0;
  for (const p of PARTITIONED_TABLES) made += await ensureDays(pool, p, from, to, opts.lockTimeoutMs);
  return made;
}

/** Makes the day partitions of `p` from `fromDay` to `toDay` (YYYY-MM-DD, inclusive) that are missing. */
export async function ensureDays(pool: pg.Pool, p: PartitionedTable, fromDay: string, toDay: string, lockTimeoutMs = 5000): Promise<number> {
  return shortTransaction(pool, { lockTimeoutMs }, async (c) =>
    (await c.query<{ made: number }>("SELECT trendgate_ensure_day_partitions($1, $2, $3::date, $4::date) AS made", [p.table, p.column, fromDay, toDay])).rows[0].made);
}

export interface DayPartition {
  name: string;
  /** Start of the day it holds (UTC); it holds [from, from + 1 day). */
  from: Date;
}

/** The day partitions of `table`, oldest first. */
export async function dayPartitions(pool: pg.Pool | pg.PoolClient, table: string): Promise<DayPartition[]> {
  const { rows } = await pool.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = to_regclass($1) ORDER BY c.relname`, [table]);
  return rows.flatMap(({ name }) => {
    const m = /_p(\d{4})(\d{2})(\d{2})$/.exec(name);
    return m ? [{ name, from: new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) }] : [];
  });
}

/**
 * Drops the day partitions of `table` that end at or before `cutoff` (every row in them older than it). `keep`: a
 * condition on its rows (alias t) that must survive (a pending delivery's attempts); a partition holding any is
 * detached, those rows go back into the table (its default partition takes them: no day covers them any more), then
 * it is dropped. Each drop is its own short transaction under lock_timeout: dropping a partition locks the parent for
 * an instant, and a drop that would queue behind a long lock gives up (the next pass retries) rather than hold up
 * every writer queued behind it. Returns the partitions dropped and an estimate of their rows (pg_class.reltuples:
 * counting would read them).
 */
export async function dropPartitionsBefore(pool: pg.Pool, table: string, cutoff: Date, opts: { keep?: string; lockTimeoutMs?: number } = {}): Promise<{ dropped: string[]; rows: number }> {
  const dropped: string[] = [];
  let rows = 0;
  for (const p of await dayPartitions(pool, table)) {
    if (p.from.getTime() + DAY_MS > cutoff.getTime()) break;
    // Read before the lock: nearly always nothing to keep, and then the drop holds the parent for no scan at all.
    const keeps = opts.keep ? (await pool.query(`SELECT 1 FROM "${p.name}" t WHERE ${opts.keep} LIMIT 1`)).rowCount! > 0 : false;
    rows += await shortTransaction(pool, { lockTimeoutMs: opts.lockTimeoutMs ?? 1000 }, async (c) => {
      const { rows: [r] } = await c.query<{ n: string }>("SELECT greatest(reltuples, 0)::bigint AS n FROM pg_class WHERE oid = to_regclass($1)", [p.name]);
      if (keeps) {
        await c.query(`ALTER TABLE "${table}" DETACH PARTITION "${p.name}"`);
        await c.query(`INSERT INTO "${table}" SELECT t.* FROM "${p.name}" t WHERE ${opts.keep}`);
      }
      await c.query(`DROP TABLE IF EXISTS "${p.name}"`);
      return Number(r?.n ?? 0);
    });
    dropped.push(p.name);
  }
  return { dropped, rows };
}
