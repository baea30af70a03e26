import type { Signal } from "@trendgate/contracts";
import type { Db } from "./client.ts";
import { newId } from "./ids.ts";

// One statement per batch: store the signals (a signal already stored, same account/source/id, is skipped), make
// sure their topics exist, and add the NEW signals only into their topic's time bucket, so a re-sent batch never
// counts twice. A topic's id is derived from (account, normalised name, category), hence no lookup round trip.
// Bucket rows are upserted in key order so concurrent batches cannot deadlock on them.
const INGEST_SQL = `
WITH input AS (
  SELECT * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::float8[], $8::float8[], $9::timestamptz[], $10::text[])
    AS v(id, source, external_id, topic, category, count, sentiment, observed_at, link)
), ins AS (
  INSERT INTO signals (id, account_id, source, external_id, topic, category, count, sentiment, observed_at, link, created_at)
  SELECT id, $1, source, external_id, topic, category, count, sentiment, observed_at, link, now() FROM input
  ON CONFLICT (account_id, source, external_id) DO NOTHING
  RETURNING topic, category, count, sentiment, observed_at
), keyed AS (
  SELECT lower(topic) || '|' || category AS key, topic, category, count, sentiment, observed_at,
         'top_' || md5($1 || ':' || lower(topic) || '|' || category) AS topic_id
    FROM ins
), topics_up AS (
  INSERT INTO topics (id, account_id, key, name, category, created_at, last_seen_at)
  SELECT DISTINCT ON (topic_id) topic_id, $1, key, topic, category, now(), now() FROM keyed ORDER BY topic_id
  ON CONFLICT (account_id, key) DO UPDATE SET last_seen_at = now()
  RETURNING id
), buckets_up AS (
INSERT INTO topic_buckets (topic_id, bucket_start, count, sentiment_sum, sentiment_count)
SELECT k.topic_id, date_bin($11 * interval '1 second', k.observed_at, timestamptz '1970-01-01'), sum(k.count), coalesce(sum(k.sentiment), 0), count(k.sentiment)
  FROM keyed k JOIN topics_up t ON t.id = k.topic_id
 GROUP BY 1, 2 ORDER BY 1, 2
ON CONFLICT (topic_id, bucket_start) DO UPDATE SET
  count = topic_buckets.count + excluded.count,
  sentiment_sum = topic_buckets.sentiment_sum + excluded.sentiment_sum,
  sentiment_count = topic_buckets.sentiment_count + excluded.sentiment_count
RETURNING topic_id
)
SELECT (SELECT count(*) FROM ins) AS inserted, (SELECT count(*) FROM buckets_up) AS buckets`;

/** Stores a batch of validated signals and adds the new ones to their topics' buckets; returns how many were new. */
export async function insertSignals(db: Db, accountId: string, signals: Signal[], bucketSeconds = 3600): Promise<number> {
  if (!signals.length) return 0;
  const col = <T>(f: (s: Signal) => T) => signals.map(f);
  const { rows } = await db.$pool.query<{ inserted: string }>(INGEST_SQL, [
    accountId, col(() => newId("sig")), col((s) => s.source), col((s) => s.id), col((s) => s.topic), col((s) => s.category),
    col((s) => s.count), col((s) => s.sentiment ?? null), col((s) => s.observed_at), col((s) => s.link ?? null), bucketSeconds,
  ]);
  return Number(rows[0].inserted);
}
