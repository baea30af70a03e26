import type { Db, Prisma } from "@trendgate/db";
import type { Drivers } from "../drivers/drivers.ts";
import { driversSince, loadDrivers } from "../drivers/load.ts";

// What a briefing page shows, read for the account a verified link names. Nothing is read from another account:
// the trend is looked up by (id, account), and everything else hangs off that trend's topic.

/**
 * What the page shows of the trend: the row as the last detection pass wrote it (`baseline`: expected mentions per
 * bucket; `current`: mentions in the assessed bucket, of which `observed` had elapsed; `bucketStart`: the bucket last
 * assessed; `detectedAt`: the instant of detection).
 */
const TREND_FIELDS = {
  id: true, name: true, category: true, status: true, severity: true, stage: true, velocity: true, acceleration: true,
  baseline: true, current: true, anomalyScore: true, peakVelocity: true, sentiment: true, detectedAt: true, bucketStart: true, observed: true,
} as const satisfies Prisma.TrendSelect;
export type BriefingTrend = Prisma.TrendGetPayload<{ select: typeof TREND_FIELDS }>;

export interface BriefingExample {
  source: string;
  count: number;
  sentiment: number | null;
  observedAt: Date;
  link: string;
}

export interface BriefingData {
  trend: BriefingTrend;
  /** One point per bucket, oldest first, ending with the assessed bucket; buckets without signals count 0. */
  series: { start: Date; count: number }[];
  /** Recent signals of the topic that carry a link, newest (then largest) first. */
  examples: BriefingExample[];
  /** Why it is trending: terms, sources, posts and sentiment since its detection against the week before. */
  drivers: Drivers;
  bucketSeconds: number;
}

export interface BriefingLoadOptions {
  bucketSeconds: number;
  /** Buckets on the chart (and how far back examples are looked for). */
  seriesBuckets?: number;
  maxExamples?: number;
}

export const BRIEFING_SERIES_BUCKETS = 72;
export const BRIEFING_MAX_EXAMPLES = 5;

/**
 * The briefing of trend `trendId` of account `accountId`, or null when there is none to show: no such account, no
 * such trend in that account, or the link was issued before the account revoked its links. The caller cannot tell
 * which (nor can the reader of the page).
 */
export async function loadBriefing(
  db: Db, link: { accountId: string; trendId: string; issuedAt: Date }, o: BriefingLoadOptions, now = new Date(),
): Promise<BriefingData | null> {
  const [account, row] = await Promise.all([
    db.account.findUnique({ where: { id: link.accountId }, select: { briefingLinksRevokedBefore: true } }),
    db.trend.findFirst({ where: { id: link.trendId, accountId: link.accountId }, select: { ...TREND_FIELDS, topicId: true, topic: { select: { key: true } } } }),
  ]);
  if (!account || !row) return null;
  const revokedBefore = account.briefingLinksRevokedBefore;
  if (revokedBefore && link.issuedAt.getTime() < revokedBefore.getTime()) return null;

  const bucketMs = o.bucketSeconds * 1000;
  const n = o.seriesBuckets ?? BRIEFING_SERIES_BUCKETS;
  const end = row.bucketStart.getTime();
  const from = new Date(end - (n - 1) * bucketMs);
  const [buckets, examples, drivers] = await Promise.all([
    db.topicBucket.findMany({ where: { topicId: row.topicId, bucketStart: { gte: from, lte: row.bucketStart } }, select: { bucketStart: true, count: true } }),
    // Signals reach a topic by lower(topic) || '|' || category (packages/db/src/signals.ts), so the same key finds them.
    db.$pool.query<{ source: string; count: number; sentiment: number | null; observed_at: Date; link: string }>(
      `SELECT source, count, sentiment, observed_at, link FROM signals
        WHERE account_id = $1 AND lower(topic) || '|' || category = $2 AND link ~* '^https?://'
          AND observed_at >= $3 AND observed_at <= $4
        ORDER BY observed_at DESC, count DESC, id LIMIT $5`,
      [link.accountId, row.topic.key, from, now, o.maxExamples ?? BRIEFING_MAX_EXAMPLES]),
    loadDrivers(db, { accountId: link.accountId, name: row.name, category: row.category }, driversSince(row, bucketMs), now),
  ]);
  const counts = new Map(buckets.map((b) => [b.bucketStart.getTime(), b.count]));
  const series = Array.from({ length: n }, (_, i) => {
    const start = from.getTime() + i * bucketMs;
    return { start: new Date(start), count: counts.get(start) ?? 0 };
  });

  const { topicId: _topicId, topic: _topic, ...trend } = row;
  return {
    trend,
    series,
    examples: examples.rows.map((r) => ({ source: r.source, count: Number(r.count), sentiment: r.sentiment, observedAt: r.observed_at, link: r.link })),
    drivers,
    bucketSeconds: o.bucketSeconds,
  };
}
