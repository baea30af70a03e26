import type { TrendEvent } from "@trendgate/contracts";
import type pg from "pg";
import type { Db } from "./client.ts";

/**
 * The durable copies of trend events, written before they are queued. Returns the ids that were new: an event id
 * seen before is skipped, which is what makes publishing exactly-once per id. `client` runs it inside the caller's transaction (the
 * detection pass writes its events with the trend rows they describe).
 */
export async function insertTrendEvents(db: Db, events: TrendEvent[], client: pg.Pool | pg.PoolClient = db.$pool): Promise<Set<string>> {
  if (!events.length) return new Set();
  const { rows } = await client.query<{ id: string }>(
    `INSERT INTO trend_events (id, account_id, type, trend_id, payload, created_at)
     SELECT * , now() FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::jsonb[])
     ON CONFLICT (id) DO NOTHING RETURNING id`,
    [events.map((e) => e.id), events.map((e) => e.account_id), events.map((e) => e.type), events.map((e) => e.trend_id), events.map((e) => JSON.stringify(e))],
  );
  return new Set(rows.map((r) => r.id));
}

export async function markTrendEventsDispatched(db: Db, ids: string[]) {
  await db.$pool.query(`UPDATE trend_events SET dispatched_at = now() WHERE id = ANY($1::text[]) AND dispatched_at IS NULL`, [ids]);
}

/** Events published but never matched (their job was lost): for the sweeper. */
export async function findUndispatchedTrendEvents(db: Db, olderThanSeconds: number, limit: number) {
  return db.trendEventRecord.findMany({
    where: { dispatchedAt: null, createdAt: { lte: new Date(Date.now() - olderThanSeconds * 1000) } },
    orderBy: { createdAt: "asc" },
    take: limit,
  });
}
