import type pg from "pg";
import { bucketNumberSql } from "@trendgate/db";
import type { Resolved } from "../detection/config.ts";
import { PARTIAL_MIN_SECONDS } from "../detection/index.ts";
import { median } from "../detection/stats.ts";
import type { PublishedSeverity, TrendState } from "./decide.ts";
import { freshSql, lagBuckets, lateBuckets, decodeCounts, writeSeries, type SeriesWrite } from "./series-cache.ts";

// Reads what one detection pass over a shard needs, in two statements: the topics whose state can change, with their
// trend rows and cached series (series-cache.ts), then the buckets the cache does not hold (all of them for a topic
// without a usable cache) as one dense array each. A third statement refreshes the caches that need it.

/** A bucket in which every topic read had no mention, while together they expect at least this many, is an outage. */
const OUTAGE_MIN_EXPECTED = 10;

export interface Candidate {
  id: string;
  name: string;
  category: string;
  trend: (TrendState & { id: string; peakVelocity: number; detectedAt: Date; lastAnomalousAt: Date | null; endedAt: Date | null }) | undefined;
  /** count + 1 per bucket from `first` to the bucket in progress (NaN = outage). */
  y: Float64Array;
  /** Mean sentiment of the last closed bucket and the bucket in progress, null without any. */
  sentiment: number | null;
  /** Feedback's factor on the score thresholds (1: nobody judged the topic). */
  evidenceBar: number;
}

export interface ShardSeries {
  /** Bucket number of y[0]; the last element of every y is the bucket in progress. */
  first: number;
  current: number;
  /** Elapsed fraction of the bucket in progress. */
  observed: number;
  candidates: Candidate[];
  /** Bucket numbers judged an outage. */
  outages: number[];
}

/**
 * SQL: one bucket of row `tb` as "offset:count", plus ":sentiment_sum:sentiment_count" for the last closed bucket and
 * the bucket in progress (the topic's sentiment). Parameters: the bucket width, y[0]'s bucket number, the start of the
 * last closed bucket.
 */
const bucketText = (tb: string, seconds: string, first: string, last1: string) =>
  `(${bucketNumberSql(`${tb}.bucket_start`, seconds)} - ${first})::text || ':' || ${tb}.count::text ||
   CASE WHEN ${tb}.bucket_start >= (${last1}::timestamptz AT TIME ZONE 'UTC') THEN ':' || ${tb}.sentiment_sum::text || ':' || ${tb}.sentiment_count::text ELSE '' END`;

/**
 * Reads bucketText entries, joined by ",", into y (count + 1 at each offset) and sentiment, without a string per entry.
 * In any order: the sentiment sums at most two buckets, and a + b is b + a in floating point too.
 */
function parseBuckets(text: string, y: Float64Array, sentiment: { sum: number; count: number }) {
  let i = 0;
  while (i < text.length) {
    let comma = text.indexOf(",", i);
    if (comma < 0) comma = text.length;
    const colon = text.indexOf(":", i);
    let end = text.indexOf(":", colon + 1);
    if (end < 0 || end > comma) end = comma;
    y[Number(text.slice(i, colon))] = Number(text.slice(colon + 1, end)) + 1;
    if (end < comma) {
      const colon2 = text.indexOf(":", end + 1);
      sentiment.sum += Number(text.slice(end + 1, colon2));
      sentiment.count += Number(text.slice(colon2 + 1, comma));
    }
    i = comma + 1;
  }
}

const iso = (bucket: number, bucketSeconds: number) => new Date(bucket * bucketSeconds * 1000).toISOString();

/**
 * Candidates: the shard's topics with an active trend (it may end), and those seen since the last closed bucket began
 * whose last closed bucket, or the bucket in progress projected to its end, reaches the volume floor; any other topic
 * cannot become a trend in this pass and is not read at all. Seen since the closed bucket began, not since the current
 * one: a burst hour followed by silence is judged when it closes, not when the topic's next mention comes.
 */
export async function readShard(client: pg.PoolClient, accountId: string, now: Date, cfg: Resolved, shard: { index: number; count: number }): Promise<ShardSeries> {
  const b = cfg.bucketSeconds;
  const current = Math.floor(now.getTime() / (b * 1000));
  const observed = Math.max(1, now.getTime() - current * b * 1000) / (b * 1000);
  const first = current - cfg.lookbackBuckets;
  const partialFloor = observed * b >= PARTIAL_MIN_SECONDS ? cfg.minPerBucket * observed : Infinity;
  const late = lateBuckets(b);
  const settled = current - late - 1; // the last bucket a cache may hold: no instant of it is within LATE_HOURS
  // The EXISTS is one index range over both buckets: two OR-ed equality probes plan as a BitmapOr per topic, slower
  // (0.04 against 0.013 ms per topic measured, 10,000 topics).
  // A topic with a usable cache gets, in the same row, its buckets after the cache (and those within LATE_HOURS, read
  // again: late signals land there): the index pages the EXISTS probe just read hold them. ts.* is NULL otherwise.
  const { rows: topics } = await client.query<{
    id: string; name: string; category: string; evidence_bar: number; trend_id: string | null; status: "active" | "ended" | null; severity: PublishedSeverity | null;
    published_velocity: number | null; pending_severity: PublishedSeverity | null; pending_since: Date | null; velocity_event_at: Date | null;
    peak_velocity: number | null; detected_at: Date | null; last_anomalous_bucket: Date | null; wave_start: Date | null; peak_severity: PublishedSeverity | null; wave_peak_excess: number | null; prior_wave_peak_excess: number | null; cooling_since: Date | null; last_anomalous_at: Date | null; ended_at: Date | null; series_first: number | null; series_through: number | null; series: Buffer | null;
    recent: string | null;
  }>(
    `SELECT t.id, t.name, t.category, t.evidence_bar, tr.id AS trend_id, tr.status, tr.severity, tr.published_velocity, tr.pending_severity,
            tr.pending_since, tr.velocity_event_at, tr.peak_velocity, tr.detected_at, tr.last_anomalous_bucket, tr.wave_start, tr.peak_severity, tr.wave_peak_excess, tr.prior_wave_peak_excess, tr.cooling_since, tr.last_anomalous_at, tr.ended_at, ts.first_bucket AS series_first,
            ts.through_bucket AS series_through, ts.counts AS series,
            CASE WHEN ts.topic_id IS NOT NULL THEN (
              SELECT string_agg(${bucketText("tb", "$8", "$9", "$5")}, ',') FROM topic_buckets tb
               WHERE tb.topic_id = t.id AND tb.bucket_start <= ($4::timestamptz AT TIME ZONE 'UTC')
                 AND tb.bucket_start >= (to_timestamp(least(ts.through_bucket + 1, $10)::float8 * $8) AT TIME ZONE 'UTC')) END AS recent
       FROM topics t LEFT JOIN trends tr ON tr.topic_id = t.id
       LEFT JOIN topic_series ts ON ts.topic_id = t.id AND ts.bucket_seconds = $8 AND ts.first_bucket <= $9 AND ts.through_bucket >= $9
             AND ${freshSql("$11")}
      WHERE t.account_id = $1 AND ($3 = 1 OR mod(abs(hashtext(t.id)), $3) = $2)
        AND (tr.status = 'active' OR (t.last_seen_at >= ($5::timestamptz AT TIME ZONE 'UTC') AND EXISTS (
              SELECT 1 FROM topic_buckets tb
               WHERE tb.topic_id = t.id AND tb.bucket_start >= ($5::timestamptz AT TIME ZONE 'UTC') AND tb.bucket_start <= ($4::timestamptz AT TIME ZONE 'UTC')
                 AND tb.count >= CASE tb.bucket_start WHEN ($5::timestamptz AT TIME ZONE 'UTC') THEN $6::float8 WHEN ($4::timestamptz AT TIME ZONE 'UTC') THEN $7::float8 END)))`,
    [accountId, shard.index, shard.count, iso(current, b), iso(current - 1, b), cfg.minPerBucket, Number.isFinite(partialFloor) ? partialFloor : 1e300,
      b, first, current - late, now.toISOString()],
  );
  const len = current - first + 1;
  const candidates: Candidate[] = topics.map((t) => ({
    id: t.id, name: t.name, category: t.category,
    trend: t.trend_id ? {
      id: t.trend_id, status: t.status!, severity: t.severity!, publishedVelocity: t.published_velocity!, pendingSeverity: t.pending_severity,
      pendingSince: t.pending_since, velocityEventAt: t.velocity_event_at, peakVelocity: t.peak_velocity!, detectedAt: t.detected_at!,
      lastAnomalousBucket: t.last_anomalous_bucket, waveStart: t.wave_start, peakSeverity: t.peak_severity,
      wavePeakExcess: t.wave_peak_excess, priorWavePeakExcess: t.prior_wave_peak_excess, coolingSince: t.cooling_since,
      lastAnomalousAt: t.last_anomalous_at, endedAt: t.ended_at,
    } : undefined,
    y: new Float64Array(len).fill(1),
    sentiment: null,
    evidenceBar: t.evidence_bar,
  }));
  if (!candidates.length) return { first, current, observed, candidates, outages: [] };

  // Cached topics: the cache up to the first bucket read, then the buckets read.
  const cold: number[] = [];
  const since = new Int32Array(candidates.length).fill(first);
  const sentiment = { sum: 0, count: 0 };
  for (let k = 0; k < candidates.length; k++) {
    const { series, series_first: sf, series_through: st, recent } = topics[k];
    if (!series) { cold.push(k); continue; }
    const c = candidates[k];
    since[k] = Math.min(st! + 1, current - late);
    const counts = decodeCounts(series);
    for (let bucket = first; bucket < since[k]; bucket++) c.y[bucket - first] = counts[bucket - sf!] + 1;
    sentiment.sum = sentiment.count = 0;
    if (recent) parseBuckets(recent, c.y, sentiment);
    if (sentiment.count > 0) c.sentiment = sentiment.sum / sentiment.count;
  }

  // The others in full. One row per topic, its buckets as one "offset:count,offset:count" string: 1.7 M rows of
  // (topic id, date, count) for 10,000 topics x a week cost more in parsing and garbage than all the statistics.
  if (cold.length) {
    const index = new Map(cold.map((k) => [candidates[k].id, k]));
    const { rows } = await client.query<[string, string]>({
      text: `SELECT topic_id, string_agg(${bucketText("topic_buckets", "$2", "$5", "$6")}, ',')
               FROM topic_buckets
              WHERE topic_id = ANY($1::text[]) AND bucket_start >= ($3::timestamptz AT TIME ZONE 'UTC') AND bucket_start <= ($4::timestamptz AT TIME ZONE 'UTC')
              GROUP BY topic_id`,
      values: [cold.map((k) => candidates[k].id), b, iso(first, b), iso(current, b), first, iso(current - 1, b)],
      rowMode: "array",
    });
    for (const [topicId, buckets] of rows) {
      const c = candidates[index.get(topicId)!];
      sentiment.sum = sentiment.count = 0;
      parseBuckets(buckets, c.y, sentiment);
      if (sentiment.count > 0) c.sentiment = sentiment.sum / sentiment.count;
    }
  }

  // Caches to write: the topics read in full (a rebuild), and those whose cache lags the settled buckets enough to
  // make the next reads long. Only settled buckets are stored: never the bucket in progress, nor one within LATE_HOURS.
  const writes: SeriesWrite[] = [];
  const cacheLen = settled - first + 1;
  if (cacheLen > 0) {
    for (let k = 0; k < candidates.length; k++) {
      const rebuilt = since[k] === first;
      if (rebuilt || since[k] - 1 < settled - lagBuckets(b)) {
        writes.push({ topicId: candidates[k].id, firstBucket: first, y: candidates[k].y, length: cacheLen, builtAt: rebuilt ? now : null });
      }
    }
    if (writes.length) await writeSeries(client, b, settled, writes);
  }

  const totals = new Float64Array(len);
  for (const c of candidates) {
    for (let i = 0; i < len; i++) totals[i] += c.y[i] - 1;
    c.y[len - 1] += observed - 1; // the pseudo-count's observed share of the bucket in progress
  }

  // Account-wide gaps: no topic had a mention where together they expect many. Missing data, not silence: left out
  // of the history, so neither the gap nor the recovery after it looks like a change. The bucket in progress is not
  // judged (an empty start is normal).
  const outages: number[] = [];
  const start = totals.findIndex((t) => t > 0);
  if (start >= 0 && start < len - 1 && median(totals.subarray(start, len - 1)) >= OUTAGE_MIN_EXPECTED) {
    for (let i = start; i < len - 1; i++) {
      if (totals[i] > 0) continue;
      outages.push(first + i);
      for (const c of candidates) c.y[i] = NaN;
    }
  }
  // Nothing is assumed about time before a topic's first mention: those buckets are missing, not silent (a topic
  // born yesterday has a day of history, not six days of zeros and a jump).
  for (const c of candidates) {
    const born = c.y.findIndex((v) => v > 1);
    c.y.fill(NaN, 0, born < 0 ? len - 1 : born);
  }
  return { first, current, observed, candidates, outages };
}
