import type { Db, Tx } from "./client.ts";
import type { Prisma, Trend } from "./generated/client.ts";

// Reads of the trends table: the API's listings, and services that act on current trends (ads plans).

export type TrendRow = Trend;

/** Trends in `category` or below it (categoryWithin in contracts, as a query). */
const within = (category: string): Prisma.TrendWhereInput => ({ OR: [{ category }, { category: { startsWith: `${category}/` } }] });

/** The account's active trends in `category` or below it, at one of `stages`, fastest first. */
export const activeTrendsInCategory = (db: Db | Tx, q: { accountId: string; category: string; stages: readonly string[]; take: number }) =>
  db.trend.findMany({
    where: { accountId: q.accountId, status: "active", stage: { in: [...q.stages] }, ...within(q.category) },
    orderBy: { velocity: "desc" }, take: q.take,
  });

/** What GET /api/trends filters on; a field left out does not filter. */
export interface TrendFilter {
  accountId: string;
  /** One status; undefined for all. */
  status?: string;
  /** This category or any below it. */
  category?: string;
  severities?: string[];
  stages?: string[];
  /** Assessed in a bucket starting at or after. */
  since?: Date;
  /** Detected at or before. */
  until?: Date;
}

/** recent: detection time; velocity: speed. Both newest (largest) first, ties by id. */
export type TrendSort = "recent" | "velocity";
const SORT_COLUMN = { recent: "detectedAt", velocity: "velocity" } as const;

/**
 * A page of trends in `sort` order, after the (sort value, id) of the previous page's last row when given.
 * Fetches `take` rows: ask for one more than the page to know whether a next page exists.
 */
export function listTrends(db: Db, f: TrendFilter, sort: TrendSort, after: { value: Date | number; id: string } | null, take: number) {
  const where: Prisma.TrendWhereInput = {
    accountId: f.accountId,
    ...(f.status !== undefined ? { status: f.status } : {}),
    ...(f.category ? within(f.category) : {}),
    ...(f.severities?.length ? { severity: { in: f.severities } } : {}),
    ...(f.stages?.length ? { stage: { in: f.stages } } : {}),
    ...(f.since ? { bucketStart: { gte: f.since } } : {}),
    ...(f.until ? { detectedAt: { lte: f.until } } : {}),
  };
  const key = SORT_COLUMN[sort];
  return db.trend.findMany({
    where: after ? { AND: [where, { OR: [{ [key]: { lt: after.value } }, { [key]: after.value, id: { lt: after.id } }] }] } : where,
    orderBy: [{ [key]: "desc" }, { id: "desc" }],
    take,
  });
}

/** One of the account's trends, or null. */
export const findAccountTrend = (db: Db, accountId: string, id: string) => db.trend.findFirst({ where: { id, accountId } });

/** The topic's newest `max` buckets, oldest first. */
export async function topicBucketSeries(db: Db, topicId: string, max: number) {
  const rows = await db.topicBucket.findMany({ where: { topicId }, orderBy: { bucketStart: "desc" }, take: max });
  return rows.reverse();
}

/** The account's active trends, fastest first. */
export const activeTrendsByVelocity = (db: Db, accountId: string, take: number) =>
  db.trend.findMany({ where: { accountId, status: "active" }, orderBy: [{ velocity: "desc" }], take });

/** What recommendations need to know of an account's outbound setup: its connections and active webhook count. */
export async function accountSetupRows(db: Db, accountId: string) {
  const [connections, activeWebhooks] = await Promise.all([
    db.connection.findMany({ where: { accountId }, select: { kind: true, provider: true, status: true, selection: true } }),
    db.webhookSubscription.count({ where: { accountId, status: "active" } }),
  ]);
  return { connections: connections.map((c) => ({ ...c, selection: (c.selection ?? {}) as Record<string, unknown> })), activeWebhooks };
}

/** Whether a detection pass found the trend anomalous, and it is still open, at or after `at` (trigger windows). */
export async function trendAnomalousSince(db: Db, trendId: string | null, at: Date): Promise<boolean> {
  const t = trendId ? await db.trend.findUnique({ where: { id: trendId }, select: { status: true, lastAnomalousAt: true } }) : null;
  return !!t && t.status === "active" && !!t.lastAnomalousAt && t.lastAnomalousAt >= at;
}
