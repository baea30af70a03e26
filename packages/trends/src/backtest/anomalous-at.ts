import { setImmediate as nextTurn } from "node:timers/promises";
import { topicCountsBetween, type Db } from "@trendgate/db";
import { assessNow, resolveConfig, type DetectionConfig } from "../detection/index.ts";

// "Would a detection pass at this past instant have found the topic anomalous?", answered from the stored buckets with
// the detector itself: what a backtest needs to replay a trigger window.

export interface AnomalyCheck {
  topicId: string;
  at: Date;
}

/**
 * Checks read per query, and queries in flight: the next chunks are read (by other Postgres backends) while the
 * detector assesses this one. A check's week of buckets is scattered over ~170 pages of topic_buckets: reading is
 * most of the time (8,750 checks: ~3.3 s read one chunk at a time, ~1.3 s to assess). A chunk's answer is parsed in
 * one stretch of the event loop (the driver's rows, then their bucket lists), which other requests wait behind, so it
 * stays small (250 checks: about half a megabyte).
 */
const CHUNK = 250;
const AHEAD = 3;
/**
 * The longest stretch assessments hold the event loop before other requests get a turn: a read already answered
 * resumes at once, so the awaits between chunks alone would let one backtest hold the loop for a whole chunk or more.
 * By time, not by count: one assessment takes 0.2 ms on a quiet topic and several on a busy one, or on a loaded machine.
 */
const SLICE_MS = 2;

/**
 * For each check, whether assessNow at `at` (the topic's week before, read as the shard read builds it) finds a trend,
 * with the topic's evidence bar. A stored bucket holds the whole bucket's count: the bucket in progress at `at` is
 * taken pro rata (mentions arriving evenly), where a live pass saw what had arrived by then.
 */
/** Marks a read awaited later as handled now: a failure waiting its turn must not count as unhandled. */
function quiet<T>(p: Promise<T>): Promise<T> {
  p.catch(() => {});
  return p;
}

export async function anomalousAt(db: Db, checks: AnomalyCheck[], config: Partial<DetectionConfig>): Promise<boolean[]> {
  const cfg = resolveConfig(config);
  const bucketMs = cfg.bucketSeconds * 1000;
  const read = (part: AnomalyCheck[]) => topicCountsBetween(db, part.map((c) => {
    const current = Math.floor(c.at.getTime() / bucketMs);
    return { topicId: c.topicId, from: new Date((current - cfg.lookbackBuckets) * bucketMs), to: new Date(current * bucketMs) };
  }), cfg.bucketSeconds);
  const out: boolean[] = [];
  const reads: Promise<Awaited<ReturnType<typeof read>>>[] = [];
  const ahead = (start: number) => { if (start < checks.length) reads.push(quiet(read(checks.slice(start, start + CHUNK)))); };
  for (let k = 0; k < AHEAD; k++) ahead(k * CHUNK);
  let sliceStart = performance.now();
  for (let start = 0, i = 0; start < checks.length; start += CHUNK, i++) {
    const series = await reads[i];
    ahead(start + AHEAD * CHUNK);
    for (let k = 0; k < series.length; k++) {
      if (performance.now() - sliceStart > SLICE_MS) {
        await nextTurn();
        sliceStart = performance.now();
      }
      const { buckets, counts, evidenceBar } = series[k];
      const at = checks[start + k].at.getTime();
      const current = Math.floor(at / bucketMs);
      const observed = Math.max(1, at - current * bucketMs) / bucketMs;
      const n = cfg.lookbackBuckets;
      const y = new Float64Array(n + 1).fill(1);
      for (let j = 0; j < buckets.length; j++) y[buckets[j] - (current - n)] += counts[j];
      y[n] = (y[n] - 1) * observed + observed;
      y.fill(NaN, 0, buckets.length ? buckets[0] - (current - n) : n); // nothing before the topic's first mention in the window
      out.push(assessNow(y, current - n, observed, cfg, evidenceBar).isTrend);
    }
  }
  return out;
}
