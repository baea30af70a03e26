import os from "node:os";
import type pg from "pg";

// topic_series: each topic's closed buckets as one Float32 array, so a pass reads a week of history as one row per
// topic plus the few recent buckets, instead of ~170 topic_buckets rows per topic.
//
// The trade-off: buckets observed within LATE_HOURS of now are always read from topic_buckets, so any signal that
// is at most LATE_HOURS late counts at the next pass. An older bucket comes from the cache, which is rebuilt from
// topic_buckets at least every SERIES_REBUILD_HOURS: a signal ingested more than LATE_HOURS after it was observed
// reaches the history (the baseline) only at that topic's next rebuild, within SERIES_REBUILD_HOURS.

/** Buckets with any instant within this much time of now are always read from topic_buckets. */
export const LATE_HOURS = 6;
/** A topic's cache is rebuilt from topic_buckets when older than this (sooner for some topics, see freshSql). */
export const SERIES_REBUILD_HOURS = 24;
/** A cache whose last bucket lags the closed, settled buckets by more than this is extended (kept recent reads small). */
export const SERIES_LAG_HOURS = 3;

export const lateBuckets = (bucketSeconds: number) => Math.max(1, Math.ceil((LATE_HOURS * 3600) / bucketSeconds));
export const lagBuckets = (bucketSeconds: number) => Math.max(1, Math.round((SERIES_LAG_HOURS * 3600) / bucketSeconds));

/**
 * SQL: true when topic t's cache row ts is young enough, for a pass at $now. A topic's limit is between half and all of
 * SERIES_REBUILD_HOURS, fixed per topic: topics first cached in one pass are rebuilt over many later passes, not all
 * in one slow pass a day later.
 */
export const freshSql = (now: string) =>
  `ts.built_at > ((${now}::timestamptz - make_interval(secs => ${SERIES_REBUILD_HOURS * 3600} * (1 - (abs(hashtext(t.id || ':series')) % 1024) / 2048.0))) AT TIME ZONE 'UTC')`;

const littleEndian = os.endianness() === "LE";

/** The Float32 little-endian counts of a cache row as an array (a view when aligned, which pg's Buffers mostly are not). */
export function decodeCounts(buf: Buffer): Float32Array {
  const n = buf.length >> 2;
  if (littleEndian) {
    if (buf.byteOffset % 4 === 0) return new Float32Array(buf.buffer, buf.byteOffset, n);
    const out = new Float32Array(n);
    new Uint8Array(out.buffer).set(buf.subarray(0, n * 4));
    return out;
  }
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = buf.readFloatLE(i * 4);
  return out;
}

export interface SeriesWrite {
  topicId: string;
  firstBucket: number;
  /** count + 1 per bucket from firstBucket, as a pass holds it; the first `length` are stored. */
  y: Float64Array;
  length: number;
  /** Null: keep the row's built_at (an extension, not a rebuild). */
  builtAt: Date | null;
}

/**
 * Writes the counts of y[0 .. length) as Float32 LE at `at` of out; false when one would not come back exactly (a
 * count beyond 2^24, or fractional): such a topic is not cached and is read in full each pass.
 */
function encodeCounts(y: Float64Array, length: number, out: DataView, at: number): boolean {
  for (let i = 0; i < length; i++) {
    const c = y[i] - 1;
    if (Math.fround(c) !== c || c + 1 !== y[i]) return false;
    out.setFloat32(at + i * 4, c, true);
  }
  return true;
}

/**
 * Upserts cache rows in one statement, in topic order (concurrent passes over overlapping shards lock alike). All
 * counts go as one bytea parameter (sent binary), cut per row in SQL: a bytea[] parameter is sent as hex text.
 */
export async function writeSeries(client: pg.PoolClient, bucketSeconds: number, throughBucket: number, writes: SeriesWrite[]) {
  const sorted = [...writes].sort((a, b) => (a.topicId < b.topicId ? -1 : a.topicId > b.topicId ? 1 : 0));
  const blob = Buffer.allocUnsafe(sorted.reduce((n, w) => n + w.length * 4, 0));
  const view = new DataView(blob.buffer, blob.byteOffset, blob.length);
  const rows: { w: SeriesWrite; at: number }[] = [];
  let at = 0;
  for (const w of sorted) {
    if (!encodeCounts(w.y, w.length, view, at)) continue;
    rows.push({ w, at });
    at += w.length * 4;
  }
  if (!rows.length) return 0;
  await client.query(
    `INSERT INTO topic_series (topic_id, bucket_seconds, first_bucket, counts, through_bucket, built_at)
     SELECT q.topic_id, $2, q.first_bucket, substring($7::bytea FROM q.at + 1 FOR q.len), $3, coalesce(q.built_at AT TIME ZONE 'UTC', ts.built_at)
       FROM unnest($1::text[], $4::int[], $5::int[], $6::int[], $8::timestamptz[]) q(topic_id, first_bucket, at, len, built_at)
       LEFT JOIN topic_series ts ON ts.topic_id = q.topic_id
      WHERE EXISTS (SELECT 1 FROM topics t WHERE t.id = q.topic_id)
     ON CONFLICT (topic_id) DO UPDATE SET bucket_seconds = excluded.bucket_seconds, first_bucket = excluded.first_bucket,
       counts = excluded.counts, through_bucket = excluded.through_bucket, built_at = excluded.built_at`,
    [rows.map((r) => r.w.topicId), bucketSeconds, throughBucket, rows.map((r) => r.w.firstBucket), rows.map((r) => r.at),
      rows.map((r) => r.w.length * 4), blob.subarray(0, at), rows.map((r) => r.w.builtAt?.toISOString() ?? null)],
  );
  return rows.length;
}
