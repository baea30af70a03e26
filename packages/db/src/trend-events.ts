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
  const { rows } = await client.query<{ id: string }>({
    name: "tg_insert_trend_events",
    text: `INSERT INTO trend_events (id, account_id, type, trend_id, payload, created_at)
     SELECT * , now() FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::jsonb[])
     ON CONFLICT (id) DO NOTHING RETURNING id`,
    values: [events.map((e) => e.id), events.map((e) => e.account_id), events.map((e) => e.type), events.map((e) => e.trend_id), events.map((e) => JSON.stringify(e))],
  });
  return new Set(rows.map((r) => r.id));
}

export async function markTrendEventsDispatched(db: Db, ids: string[]) {
  await db.$pool.query({ name: "tg_mark_trend_events_dispatched", text: `UPDATE trend_events SET dispatched_at = now() WHERE id = ANY($1::text[]) AND dispatched_at IS NULL`, values: [ids] });
}

/**
 * Events published but never matched (their job was lost): for the sweeper. Keyset-paged (oldest first, after
 * `after`), so that events that stay unmatched (a batch whose fan-out keeps failing) never hide the ones behind them.
 */
export async function findUndispatchedTrendEvents(db: Db, olderThanSeconds: number, limit: number, after: { createdAt: Date; id: string } | null = null) {
  return db.trendEventRecord.findMany({
    where: {
      dispatchedAt: null, createdAt: { lte: new Date(Date.now() - olderThanSeconds * 1000) },
      ...(after ? { OR: [{ createdAt: { gt: after.createdAt } }, { createdAt: after.createdAt, id: { gt: after.id } }] } : {}),
    },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    take: limit,
  });
}
