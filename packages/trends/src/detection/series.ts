/** One time bucket of a topic. Missing buckets in a series mean count 0. */
export interface Bucket {
  start: Date;
  count: number;
}

/** Bucket number since the Unix epoch: buckets are aligned to UTC multiples of the bucket width. */
export function bucketIndex(at: Date, bucketMs: number): number {
  const ms = at.getTime();
  if (!Number.isFinite(ms)) throw new RangeError("invalid date");
  return Math.floor(ms / bucketMs);
}

/** Sums counts per bucket number. Points with an invalid date or count are skipped: one bad row must not poison a topic. */
export function sumByIndex(points: Iterable<{ at: Date; count: number }>, bucketMs: number): Map<number, number> {
  const sums = new Map<number, number>();
  for (const { at, count } of points) {
    const ms = at.getTime();
    if (!Number.isFinite(ms) || !Number.isFinite(count)) continue;
    const i = Math.floor(ms / bucketMs);
    sums.set(i, (sums.get(i) ?? 0) + count);
  }
  return sums;
}

/** Smallest and largest bucket number present, or undefined for an empty map. */
export function indexRange(sums: Map<number, number>): { first: number; last: number } | undefined {
  let first = Infinity;
  let last = -Infinity;
  for (const i of sums.keys()) {
    first = Math.min(first, i);
    last = Math.max(last, i);
  }
  return sums.size ? { first, last } : undefined;
}

/** Counts for bucket numbers from..to inclusive, gaps as 0. */
export function denseCounts(sums: Map<number, number>, from: number, to: number): number[] {
  const counts: number[] = [];
  for (let i = from; i <= to; i++) counts.push(sums.get(i) ?? 0);
  return counts;
}

/** Sums points into aligned buckets, fills gaps with 0 and returns them sorted by start. */
export function bucketize(points: { at: Date; count: number }[], bucketSeconds: number): Bucket[] {
  if (!(Number.isFinite(bucketSeconds) && bucketSeconds > 0)) throw new RangeError("bucketSeconds must be > 0");
  const bucketMs = bucketSeconds * 1000;
  const sums = sumByIndex(points, bucketMs);
  const range = indexRange(sums);
  if (!range) return [];
  return denseCounts(sums, range.first, range.last).map((count, k) => ({
    start: new Date((range.first + k) * bucketMs),
    count,
  }));
}
