import type { Severity as EventSeverity } from "@trendgate/contracts";
import { NEW_TOPIC_DISPERSION, NEW_TOPIC_EXPECTED_PER_HOUR, resolveConfig, type DetectionConfig, type Resolved } from "./config.ts";
import type { FitCache } from "./fit-cache.ts";
import { fitModel, scoreBucket, type Model } from "./model.ts";
import { bucketIndex, indexRange, sumByIndex, type Bucket } from "./series.ts";

/** An assessment's severity: an event's, or none. */
export type Severity = "none" | EventSeverity;
export type Stage = "dormant" | "emerging" | "rising" | "peaking" | "cooling";

export interface Assessment {
  /** Start of the assessed bucket. */
  bucketStart: Date;
  /** Count in that bucket (so far, for a bucket in progress). */
  current: number;
  /** Fraction of the bucket observed: 1 for a closed bucket, less for the bucket in progress. */
  observed: number;
  /** Expected count of the whole bucket: recent level x growth x hour-of-day factor. */
  baseline: number;
  /**
   * Mentions per hour above the expected rate: (projected - baseline) * 3600 / bucketSeconds, where projected is the
   * count (closed bucket), or for a bucket in progress what arrived so far plus the rest of the bucket at the expected
   * rate (never a few minutes' count scaled to the hour). Positive when the topic runs above its baseline, negative
   * below it; independent of bucket width.
   */
  velocity: number;
  /**
   * For a trend: mentions per hour above the expected rate over the window of the time scale that found it (the
   * bucket alone, or the last 3, 6 or 12 hours, with the bucket in progress as if the rest of it arrived as expected).
   * Positive. What a new trend's velocity is when its latest bucket runs under the one-bucket expectation (a ramp or a
   * level shift found by a longer window). Absent when the bucket is not a trend.
   */
  windowVelocity?: number;
  /** velocity minus the previous bucket's velocity: mentions per hour, per bucket. Positive while the excess grows. */
  acceleration: number;
  /** Highest z-score of the bucket (and of the last 3 h and 6 h) against the topic's own noise; 0 when not scored. */
  anomalyScore: number;
  severity: Severity;
  stage: Stage;
  /** severity !== "none" */
  isTrend: boolean;
}

export interface AssessOptions {
  /** Start times (ms) of buckets with no data for the whole account (an outage): missing, not zero. */
  missing?: ReadonlySet<number>;
  /** The time of the assessment; inside the assessed bucket it makes that bucket partial (elapsed / width observed). */
  now?: Date;
  /** The topic's evidence bar from feedback (EVIDENCE_BAR): every score threshold times this. 1 when nobody judged it. */
  evidenceBar?: number;
}

/** Lowest anomalyScore for each severity; below `low` (or below the volume floor) is "none". */
export const SEVERITY_THRESHOLDS = { low: 4.5, medium: 7, high: 10, critical: 20 } as const;
/** A bucket in progress is assessed once this much of it has elapsed: earlier, a handful of mentions decides. */
export const PARTIAL_MIN_SECONDS = 300;
/**
 * A bucket in progress counts as anomalous only from this score (what medium severity needs); a marginal one waits for
 * the bucket to close. Real arrivals clump within an hour far more than its hourly noise shows, and a pass every
 * minute gives a clump sixty chances: judged at the low threshold, partial hours raised alarms their closed hours did
 * not confirm.
 */
export const PARTIAL_MIN_SCORE = SEVERITY_THRESHOLDS.medium;

/** Severity of a score for a bucket projected to `rate` mentions per bucket, under a floor of `minPerBucket`. */
export function severityFor(anomalyScore: number, rate: number, minPerBucket: number): Severity {
  if (rate < minPerBucket) return "none";
  const t = SEVERITY_THRESHOLDS;
  if (anomalyScore >= t.critical) return "critical";
  if (anomalyScore >= t.high) return "high";
  if (anomalyScore >= t.medium) return "medium";
  if (anomalyScore >= t.low) return "low";
  return "none";
}

interface Core {
  current: number;
  baseline: number;
  velocity: number;
  windowVelocity?: number;
  anomalyScore: number;
  severity: Severity;
}

/**
 * A bucket of a topic too young for a model (fewer than minHistoryBuckets buckets since its first mention, at least
 * one): scored against NEW_TOPIC_EXPECTED_PER_HOUR or the topic's own median so far, whichever is higher. Undefined
 * when the topic is not young (the model is missing for another reason) or the bucket is not a trend: unscored.
 */
function youngCore(y: Float64Array, j: number, observed: number, cfg: Resolved, bar: number): Core | undefined {
  const before: number[] = [];
  for (let k = 0; k < j; k++) if (!Number.isNaN(y[k])) before.push(y[k] - 1);
  // Its first bucket is never scored: a topic is new to us when its term starts being tracked, not only when it is
  // new in the world, so only a jump from what it has carried so far counts.
  if (!before.length || before.length >= cfg.minHistoryBuckets || Number.isNaN(y[j])) return undefined;
  before.sort((a, b) => a - b);
  const own = before[(before.length - 1) >> 1];
  const expected = Math.max((NEW_TOPIC_EXPECTED_PER_HOUR * cfg.bucketSeconds) / 3600, own);
  const current = y[j] - observed;
  // A bucket in progress as the bucket it becomes with the rest at the expected rate, as for modelled topics.
  const whole = current + (1 - observed) * expected;
  const score = (whole - expected) / (NEW_TOPIC_DISPERSION * Math.sqrt(expected));
  const severity = severityFor(score / bar, whole, cfg.minPerBucket);
  if (severity === "none") return undefined;
  const velocity = ((whole - expected) * 3600) / cfg.bucketSeconds;
  return { current, baseline: expected, velocity, windowVelocity: velocity, anomalyScore: score, severity };
}

/**
 * `score: false`: the bucket is not scored (the first minutes of a bucket in progress). `bar`: the topic's evidence
 * bar; severity is judged on score / bar (the score itself is reported as is).
 */
function coreAt(model: Model | undefined, y: Float64Array, j: number, observed: number, cfg: Resolved, bar: number, score = true): Core {
  const current = Number.isNaN(y[j]) ? 0 : y[j] - observed;
  const scored = score && model && scoreBucket(model, y, j, observed);
  if (!scored) return (score && !model && youngCore(y, j, observed, cfg, bar)) || { current, baseline: current, velocity: 0, anomalyScore: 0, severity: "none" };
  // A bucket in progress counts as the bucket it becomes with the rest at the expected rate, for the volume floor and
  // the velocity alike: mentions clump within an hour, and five minutes' clump scaled to an hour published eight times
  // the rate the closed hour came to.
  const projected = current + (1 - observed) * scored.baseline;
  const severity = severityFor(scored.score / bar, projected, cfg.minPerBucket);
  return {
    current,
    baseline: scored.baseline,
    velocity: ((projected - scored.baseline) * 3600) / cfg.bucketSeconds,
    windowVelocity: severity === "none" ? undefined : (scored.excess * 3600) / cfg.bucketSeconds,
    anomalyScore: scored.score,
    severity,
  };
}

/**
 * Assesses bucket k of y (count + 1 per bucket, NaN = missing; y[k] already holds a partial bucket's count + observed),
 * with acceleration and stage from the buckets just before it, scored with the same fitted model.
 */
function assessIndex(y: Float64Array, firstBucket: number, k: number, observed: number, cfg: Resolved, bar: number, scoreTarget = true, model = fitModel(y, firstBucket, k, cfg)): Assessment {
  const c = coreAt(model, y, k, observed, cfg, bar, scoreTarget);
  const prev = k >= 1 ? coreAt(model, y, k - 1, 1, cfg, bar) : undefined;
  const prev2 = k >= 2 ? coreAt(model, y, k - 2, 1, cfg, bar) : undefined;
  const isTrend = c.severity !== "none";
  const acceleration = prev ? c.velocity - prev.velocity : 0;
  let stage: Stage;
  if (isTrend) {
    const prevAcceleration = prev && prev2 ? prev.velocity - prev2.velocity : 0;
    if (!prev || prev.severity === "none") stage = "emerging";
    else if (acceleration > 0) stage = "rising";
    // The excess just stopped growing (turning point), or the count is holding: peaking; falling while still anomalous: cooling.
    else if (prevAcceleration > 0 || c.current / observed >= prev.current) stage = "peaking";
    else stage = "cooling";
  } else {
    let recent = false;
    for (let j = k - 1; j >= Math.max(0, k - cfg.coolingBuckets) && !recent; j--) {
      recent = (j === k - 1 ? prev! : coreAt(model, y, j, 1, cfg, bar)).severity !== "none";
    }
    stage = recent ? "cooling" : "dormant";
  }
  return {
    bucketStart: new Date((firstBucket + k) * cfg.bucketSeconds * 1000),
    current: c.current, observed, baseline: c.baseline, velocity: c.velocity, windowVelocity: c.windowVelocity, acceleration,
    anomalyScore: c.anomalyScore, severity: c.severity, stage, isTrend,
  };
}

/**
 * What a detection pass acts on. `y` holds count + 1 per bucket (NaN = missing) from bucket number `firstBucket`,
 * its last element being the bucket in progress with count + observed (observed = elapsed fraction of it). The
 * bucket in progress is returned when it already shows a trend (at least PARTIAL_MIN_SECONDS in, scoring at least
 * PARTIAL_MIN_SCORE); otherwise the last
 * closed bucket, which settles the state. One model, fitted on the history before the bucket in progress, scores
 * both (a pass over thousands of topics cannot afford two fits per topic). `evidenceBar` (feedback) multiplies every
 * score threshold, PARTIAL_MIN_SCORE included. `fit`: a cache of the topic's fitted model between passes (FitCache: the
 * same assessment, without fitting an unchanged history again).
 */
export function assessNow(y: Float64Array, firstBucket: number, observed: number, config?: Partial<DetectionConfig>, evidenceBar = 1, fit?: { cache: FitCache; id: string }): Assessment {
  const cfg = resolveConfig(config);
  const k = y.length - 1;
  const model = fit ? fit.cache.model(fit.id, y, firstBucket, k, cfg) : fitModel(y, firstBucket, k, cfg);
  if (observed * cfg.bucketSeconds >= PARTIAL_MIN_SECONDS || k === 0) {
    const live = assessIndex(y, firstBucket, k, observed, cfg, evidenceBar, observed === 1 || observed * cfg.bucketSeconds >= PARTIAL_MIN_SECONDS, model);
    if (observed === 1 || k === 0 || (live.isTrend && live.anomalyScore >= PARTIAL_MIN_SCORE * evidenceBar)) return live;
  }
  return assessIndex(y, firstBucket, k - 1, 1, cfg, evidenceBar, true, model);
}

/** Dense y (count + 1, NaN where the account had an outage and the topic no data) for bucket numbers first..last. */
function denseY(sums: Map<number, number>, first: number, last: number, bucketMs: number, missing?: ReadonlySet<number>) {
  const y = new Float64Array(last - first + 1);
  for (let i = first; i <= last; i++) {
    const count = sums.get(i);
    y[i - first] = !count && missing?.has(i * bucketMs) ? NaN : (count ?? 0) + 1;
  }
  return y;
}

/**
 * Assesses the bucket containing `at`, using only the buckets before it as history (buckets after it are ignored).
 * History starts at the series' first bucket: nothing is assumed about time before it. Missing buckets count 0,
 * except those in `options.missing` (account-wide outages), which are left out. With `options.now` inside that
 * bucket, the bucket is assessed as partial (at least PARTIAL_MIN_SECONDS in, else not scored).
 */
export function assess(series: Bucket[], at: Date, config?: Partial<DetectionConfig>, options: AssessOptions = {}): Assessment {
  const cfg = resolveConfig(config);
  const bucketMs = cfg.bucketSeconds * 1000;
  const target = bucketIndex(at, bucketMs);
  const sums = sumByIndex(series.map((b) => ({ at: b.start, count: b.count })), bucketMs);
  // Enough buckets for the target's history plus the look-back that the scales, acceleration and stage need.
  const earliest = target - cfg.lookbackBuckets;
  const first = Math.min(target, Math.max(indexRange(sums)?.first ?? target, earliest));
  const y = denseY(sums, first, target, bucketMs, options.missing);
  const k = target - first;
  let observed = 1;
  const elapsed = options.now ? options.now.getTime() - target * bucketMs : bucketMs;
  if (elapsed >= 0 && elapsed < bucketMs && !Number.isNaN(y[k])) {
    observed = Math.max(elapsed, 1) / bucketMs;
    y[k] = y[k] - 1 + observed; // count + the pseudo-count's observed share
  }
  return assessIndex(y, first, k, observed, cfg, options.evidenceBar ?? 1, elapsed >= PARTIAL_MIN_SECONDS * 1000 || observed === 1);
}

/** Assesses every bucket from the series' first to its last (closed buckets), in order: the same result as assess() on each. */
export function assessSeries(series: Bucket[], config?: Partial<DetectionConfig>, options: Pick<AssessOptions, "missing" | "evidenceBar"> = {}): Assessment[] {
  const cfg = resolveConfig(config);
  const bucketMs = cfg.bucketSeconds * 1000;
  const sums = sumByIndex(series.map((b) => ({ at: b.start, count: b.count })), bucketMs);
  const range = indexRange(sums);
  if (!range) return [];
  const y = denseY(sums, range.first, range.last, bucketMs, options.missing);
  return Array.from(y, (_, k) => assessIndex(y, range.first, k, 1, cfg, options.evidenceBar ?? 1));
}
