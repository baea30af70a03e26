import { RECENT_BUCKETS, scoreBucket } from "./baseline.ts";
import { resolveConfig, type DetectionConfig } from "./config.ts";
import { bucketIndex, denseCounts, indexRange, sumByIndex, type Bucket } from "./series.ts";
import { mod } from "./stats.ts";

export type Severity = "none" | "low" | "medium" | "high" | "critical";
export type Stage = "dormant" | "emerging" | "rising" | "peaking" | "cooling";

export interface Assessment {
  /** Start of the assessed bucket. */
  bucketStart: Date;
  /** Count in that bucket. */
  current: number;
  /** Robust expected count for that bucket: recent level x growth x hour-of-day factor. */
  baseline: number;
  /**
   * Mentions per hour above the expected rate: (current - baseline) * 3600 / bucketSeconds.
   * Positive when the topic runs above its baseline, negative below it; independent of bucket width.
   */
  velocity: number;
  /** velocity minus the previous bucket's velocity: mentions per hour, per bucket. Positive while the excess grows. */
  acceleration: number;
  /** Robust z-score of current against baseline; 0 until MIN_HISTORY_BUCKETS of history exist. */
  anomalyScore: number;
  severity: Severity;
  stage: Stage;
  /** severity !== "none" */
  isTrend: boolean;
}

/** Lowest anomalyScore for each severity; below `low` (or below minVolume) is "none". */
export const SEVERITY_THRESHOLDS = { low: 5, medium: 7, high: 10, critical: 20 } as const;
/** A topic counts as cooling for this many buckets after its last anomalous one. */
export const COOLING_BUCKETS = RECENT_BUCKETS;

export function severityFor(anomalyScore: number, current: number, minVolume: number): Severity {
  if (current < minVolume) return "none";
  const t = SEVERITY_THRESHOLDS;
  if (anomalyScore >= t.critical) return "critical";
  if (anomalyScore >= t.high) return "high";
  if (anomalyScore >= t.medium) return "medium";
  if (anomalyScore >= t.low) return "low";
  return "none";
}

type Core = Omit<Assessment, "acceleration" | "stage">;

/** Scores bucket k of a dense count array whose element 0 is bucket number `first`. */
function coreAt(counts: readonly number[], first: number, k: number, cfg: DetectionConfig): Core {
  const history = counts.slice(Math.max(0, k - cfg.baselineBuckets), k);
  const period = cfg.seasonPeriodBuckets ?? 0;
  const firstPhase = period ? mod(first + k - history.length, period) : 0;
  const current = counts[k];
  const { baseline, anomalyScore } = scoreBucket(history, current, firstPhase, period);
  const severity = severityFor(anomalyScore, current, cfg.minVolume);
  return {
    bucketStart: new Date((first + k) * cfg.bucketSeconds * 1000),
    current,
    baseline,
    velocity: ((current - baseline) * 3600) / cfg.bucketSeconds,
    anomalyScore,
    severity,
    isTrend: severity !== "none",
  };
}

/** Adds acceleration and stage to cores[k], looking back at most COOLING_BUCKETS buckets. */
function complete(cores: readonly Core[], k: number): Assessment {
  const [c, prev, prev2] = [cores[k], cores[k - 1], cores[k - 2]];
  const acceleration = prev ? c.velocity - prev.velocity : 0;
  let stage: Stage;
  if (c.isTrend) {
    const prevAcceleration = prev && prev2 ? prev.velocity - prev2.velocity : 0;
    if (!prev?.isTrend) stage = "emerging";
    else if (acceleration > 0) stage = "rising";
    // The excess just stopped growing (turning point), or the count is holding: peaking; falling while still anomalous: cooling.
    else if (prevAcceleration > 0 || c.current >= prev.current) stage = "peaking";
    else stage = "cooling";
  } else {
    const recent = cores.slice(Math.max(0, k - COOLING_BUCKETS), k);
    stage = recent.some((r) => r.isTrend) ? "cooling" : "dormant";
  }
  const { bucketStart, current, baseline, velocity, anomalyScore, severity, isTrend } = c;
  return { bucketStart, current, baseline, velocity, acceleration, anomalyScore, severity, stage, isTrend };
}

/**
 * Assesses the bucket containing `at`, using only the buckets before it as history (buckets after it
 * are ignored). History starts at the series' first bucket: nothing is assumed about time before it.
 */
export function assess(series: Bucket[], at: Date, config?: Partial<DetectionConfig>): Assessment {
  const cfg = resolveConfig(config);
  const bucketMs = cfg.bucketSeconds * 1000;
  const target = bucketIndex(at, bucketMs);
  const sums = sumByIndex(series.map((b) => ({ at: b.start, count: b.count })), bucketMs);
  // Enough buckets for the target's history plus the look-back that acceleration and stage need.
  const earliest = target - cfg.baselineBuckets - COOLING_BUCKETS;
  const first = Math.min(target, Math.max(indexRange(sums)?.first ?? target, earliest));
  const counts = denseCounts(sums, first, target);
  const from = Math.max(0, counts.length - 1 - COOLING_BUCKETS);
  const cores = counts.slice(from).map((_, k) => coreAt(counts, first, from + k, cfg));
  return complete(cores, cores.length - 1);
}

/** Assesses every bucket from the series' first to its last (gaps as 0), in order: the same result as assess() on each. */
export function assessSeries(series: Bucket[], config?: Partial<DetectionConfig>): Assessment[] {
  const cfg = resolveConfig(config);
  const sums = sumByIndex(series.map((b) => ({ at: b.start, count: b.count })), cfg.bucketSeconds * 1000);
  const range = indexRange(sums);
  if (!range) return [];
  const counts = denseCounts(sums, range.first, range.last);
  const cores = counts.map((_, k) => coreAt(counts, range.first, k, cfg));
  return cores.map((_, k) => complete(cores, k));
}
