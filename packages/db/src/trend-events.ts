import type { TrendEvent } from "@trendgate/contracts";
import type { Db } from "./client.ts";

/** The durable copy of a trend event, written before it is queued. Re-inserting the same id is a no-op. */
export async function insertTrendEvent(db: Db, e: TrendEvent): Promise<boolean> {
  const r = await db.trendEventRecord.createMany({
    data: [{ id: e.id, accountId: e.account_id, type: e.type, trendId: e.trend_id, payload: e as object }],
    skipDuplicates: true,
  });
  return r.count > 0;
}

export async function markTrendEventDispatched(db: Db, id: string) {
  await db.trendEventRecord.updateMany({ where: { id, dispatchedAt: null }, data: { dispatchedAt: new Date() } });
}

/** Events published but never matched (their job was lost): for the sweeper. */
export async function findUndispatchedTrendEvents(db: Db, olderThanSeconds: number, limit: number) {
  return db.trendEventRecord.findMany({
    where: { dispatchedAt: null, createdAt: { lte: new Date(Date.now() - olderThanSeconds * 1000) } },
    orderBy: { createdAt: "asc" },
    take: limit,
  });
}
