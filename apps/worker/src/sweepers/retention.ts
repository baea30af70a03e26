import type { Config } from "@trendgate/config";
import { batchLimit, deleteExpiredBatch, dropPartitionsBefore, ensurePartitions, RETENTION_RULES, type RetentionPolicy } from "@trendgate/db";
import type { Logger } from "@trendgate/logger";
import type pg from "pg";

const DAY_MS = 86_400_000;
/** Signals and buckets are kept at least this long beyond the detection window (late signals, a slow pass). */
export const DETECTION_MARGIN_MS = DAY_MS;
/** Expired report exports are deleted this long after expires_at (a download that just started can finish). */
export const EXPIRED_EXPORT_GRACE_MS = 3_600_000;
/** A pause between batches: leaves the disk and WAL writer to ingestion for a moment. */
const PAUSE_MS = 5;

/** The retention of each kind of row from the configuration; never inside the detection window (plus a margin). */
export function retentionPolicy(c: Config): RetentionPolicy {
  const floor = c.DETECTION_BASELINE_HOURS * 3_600_000 + DETECTION_MARGIN_MS;
  const days = (d: number, min = 0) => (d === 0 ? 0 : Math.max(d * DAY_MS, min));
  return {
    signalsMs: days(c.RETENTION_SIGNALS_DAYS, floor),
    bucketsMs: days(c.RETENTION_BUCKETS_DAYS, floor),
    deliveriesMs: days(c.RETENTION_DELIVERIES_DAYS),
    eventsMs: days(c.RETENTION_EVENTS_DAYS),
    expiredExportsMs: EXPIRED_EXPORT_GRACE_MS,
  };
}

export interface RetentionPassOptions {
  policy: RetentionPolicy;
  batchSize: number;
  /** The pass starts no new batch after this long; the next pass goes on where it stopped. */
  budgetMs: number;
  logger?: Logger;
  /** Checked between batches: true stops the pass (worker shutdown). */
  stopped?: () => boolean;
  now?: Date;
}

/**
 * One retention pass. First the partitioned tables' day partitions are made ahead (ensurePartitions). Then, for each
 * table: a partitioned one drops its whole days past the cutoff (the rows `where` spares moved to its default partition); then batches of at most batchSize old rows (of a
 * partitioned table, of its default partition only) until none are left or the budget is spent. A drop or batch that
 * fails (lock_timeout behind a DDL lock, statement_timeout) ends that table's share of the pass; the others still run,
 * and the next pass retries. Returns rows deleted per table (a dropped partition's as its row estimate).
 */
export async function runRetentionPass(pool: pg.Pool, o: RetentionPassOptions): Promise<Record<string, number>> {
  const started = Date.now();
  const now = o.now ?? new Date();
  const deleted: Record<string, number> = {};
  const over = () => Date.now() - started >= o.budgetMs || !!o.stopped?.();
  await ensurePartitions(pool, now).catch((err) => o.logger?.warn({ err: String(err) }, "day partitions not made ahead; the next pass retries"));
  for (const rule of RETENTION_RULES) {
    const keepMs = o.policy[rule.keep];
    if (!keepMs || over()) continue;
    const cutoff = new Date(now.getTime() - keepMs);
    let n = 0;
    try {
      if (rule.partitioned) {
        const drop = await dropPartitionsBefore(pool, rule.table, cutoff, { keep: rule.where ? `NOT (${rule.where})` : undefined });
        if (drop.dropped.length) o.logger?.info({ table: rule.table, partitions: drop.dropped }, "retention: day partitions dropped");
        n += drop.rows;
      }
      const rows = rule.partitioned ? { ...rule, table: `${rule.table}_default` } : rule;
      for (;;) {
        const limit = batchLimit(rows, o.batchSize);
        const got = await deleteExpiredBatch(pool, rows, cutoff, limit);
        n += got;
        if (got < limit || over()) break;
        await new Promise((r) => setTimeout(r, PAUSE_MS));
      }
    } catch (err) {
      o.logger?.warn({ table: rule.table, err: String(err) }, "retention batch failed; the next pass retries");
    }
    if (n) deleted[rule.table] = n;
  }
  return deleted;
}
