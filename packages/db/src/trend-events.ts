import type { TrendEvent } from "@trendgate/contracts";
import type pg from "pg";
import { bucketNumberSql } from "./bucket-sql.ts";
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

/** A stored trend event as the backtest replays it: the event, when it was published, and its trend's topic. */
export interface StoredTrendEvent {
  id: string;
  event: TrendEvent;
  publishedAt: Date;
  topicId: string | null;
}

/**
 * One page of the account's trend events after `after` in (created_at, id) order, oldest first: what backtests replay,
 * a page at a time (keyset on trend_events_account_id_created_at_id_idx), so that a long history is never one result
 * in memory nor one connection held throughout. The first page of those published at or after `since`: after
 * `{ publishedAt: since, id: "" }`.
 */
export async function trendEventsPage(db: Db, accountId: string, after: { publishedAt: Date; id: string }, limit: number): Promise<StoredTrendEvent[]> {
  const { rows } = await db.$pool.query<{ id: string; payload: TrendEvent; created_at: Date; topic_id: string | null }>({
    name: "tg_trend_events_page",
    text: `SELECT e.id, e.payload, e.created_at, t.topic_id FROM trend_events e LEFT JOIN trends t ON t.id = e.trend_id
            WHERE e.account_id = $1 AND (e.created_at, e.id) > ($2, $3) ORDER BY e.created_at, e.id LIMIT $4`,
    values: [accountId, after.publishedAt, after.id, limit],
  });
  return rows.map((r) => ({ id: r.id, event: r.payload, publishedAt: r.created_at, topicId: r.topic_id }));
}

/**
 * Topics' mention counts per bucket between two instants (the buckets starting in that span), for re-assessing them
 * at past instants: per (topic, range) asked, in the order asked, each bucket's number (epoch seconds / bucketSeconds)
 * and its count, with the topic's evidence bar. One string per range: aggregating in SQL and parsing one string was a third
 * of the time of a row (or an array element) per bucket, measured with 3,000 ranges of a week.
 */
export async function topicCountsBetween(db: Db, ranges: { topicId: string; from: Date; to: Date }[], bucketSeconds: number): Promise<{ buckets: number[]; counts: number[]; evidenceBar: number }[]> {
  if (!ranges.length) return [];
  const { rows } = await db.$pool.query<{ s: string | null; bar: number | null }>({
    name: "tg_topic_counts_between",
    text: `SELECT (SELECT string_agg(${bucketNumberSql("b.bucket_start", "$4")}::text || ':' || b.count::text, ',')
                     FROM topic_buckets b
                    WHERE b.topic_id = r.topic_id AND b.bucket_start >= (r.f AT TIME ZONE 'UTC') AND b.bucket_start <= (r.t AT TIME ZONE 'UTC')) AS s,
                  (SELECT evidence_bar FROM topics WHERE id = r.topic_id) AS bar
             FROM unnest($1::text[], $2::timestamptz[], $3::timestamptz[]) WITH ORDINALITY AS r(topic_id, f, t, i) ORDER BY r.i`,
    values: [ranges.map((r) => r.topicId), ranges.map((r) => r.from.toISOString()), ranges.map((r) => r.to.toISOString()), bucketSeconds],
  });
  return rows.map((r) => {
    const buckets: number[] = [];
    const counts: number[] = [];
    for (const pair of r.s ? r.s.split(",") : []) {
      const colon = pair.indexOf(":");
      buckets.push(Number(pair.slice(0, colon)));
      counts.push(Number(pair.slice(colon + 1)));
    }
    return { buckets, counts, evidenceBar: r.bar ?? 1 };
  });
}
