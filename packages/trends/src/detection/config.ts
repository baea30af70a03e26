import { DETECTION_DEFAULTS } from "@trendgate/config";

// Detection settings are expressed in time (hours, mentions per hour), never in buckets, so that any bucket width
// behaves the same: eight days of history are eight days whether buckets are 5 minutes or an hour.

export interface DetectionConfig {
  /** Bucket width in seconds; buckets are aligned to UTC multiples of it. */
  bucketSeconds: number;
  /**
   * History used for the baseline, in hours: a week and a day by default. A topic's usual spikes are learnt on history
   * older than a day, so with eight days a weekly habit (Saturday and Sunday evenings) has both of last weekend's days
   * in it on either day of this one. Shorter history is used as far as it goes.
   */
  baselineHours: number;
  /** A bucket whose rate (projected to an hour) is below this never fires, whatever its score. */
  minMentionsPerHour: number;
  /** Learn an hour-of-day shape once the history covers two days (buckets of at most an hour that divide it). */
  dailySeasonality: boolean;
}

export const DEFAULT_DETECTION_CONFIG: DetectionConfig = Object.freeze({ ...DETECTION_DEFAULTS, dailySeasonality: true });

/** The recent level is the median of this much time before a bucket: follows a drift, outvotes one spike. */
export const RECENT_HOURS = 6;
/** Below this much history a bucket is not scored (anomalyScore 0, velocity 0). */
export const MIN_HISTORY_HOURS = 6;
/**
 * A topic younger than MIN_HISTORY_HOURS has no model yet. It is judged against what a new topic is expected to carry:
 * this rate, or its own median so far when higher, with noise this many times Poisson's. A topic born at 145
 * mentions an hour after a first hour under 50 scores `low`, at about 200 `medium`, 260 `high`, 470 `critical`. Its
 * first bucket is not scored (a term that starts being tracked arrives at its usual volume), and one that stays at a
 * level does not fire (its own median takes over).
 */
export const NEW_TOPIC_EXPECTED_PER_HOUR = 50;
export const NEW_TOPIC_DISPERSION = 3;
/** A topic counts as cooling for this long after its last anomalous bucket. */
export const COOLING_HOURS = 6;
/**
 * A trend ends this long after its last anomalous bucket. A news event comes back the same day: that second wave
 * continues the trend a subscriber already has. Longer (24 h) let a weak trend opened one evening swallow the burst
 * of the next one; on real social volume a burst the next day is usually news of its own.
 */
export const DORMANCY_HOURS = 12;
/**
 * The time scales scored: a window (the last bucket, or the last N hours) against the level (median) of the hours
 * before it. The bucket against the last 6 h catches a burst; 3 h against a day a bump or a ramp (a level shorter
 * than a day is a median of few buckets over part of the daily shape: its error alone was most of a 3 h window's
 * noise); 6 h against a day and 12 h against two days a plateau or a level shift, which a short level would follow
 * before it scores. `window: 0` = one bucket.
 */
export const SCALES = [
  { windowHours: 0, levelHours: RECENT_HOURS },
  { windowHours: 3, levelHours: 24 },
  { windowHours: 6, levelHours: 24 },
  { windowHours: 12, levelHours: 48 },
] as const;
/** The z-score floor compares a bucket with the mean and spread of this much history before it, once it has FLOOR_MIN_HOURS. */
export const FLOOR_HOURS = 168;
export const FLOOR_MIN_HOURS = 24;
/** "How spiky is this topic normally" is learnt once the history covers this much time. */
export const TAIL_MIN_HOURS = 48;

/** The config in buckets, as the statistics use it. */
export interface Resolved extends DetectionConfig {
  historyBuckets: number;
  /** Buckets an assessment reads before the assessed one (its history: the look-back of stage and scales lies inside it). */
  lookbackBuckets: number;
  recentBuckets: number;
  minHistoryBuckets: number;
  coolingBuckets: number;
  tailMinBuckets: number;
  floorBuckets: number;
  floorMinBuckets: number;
  /** 24 hours in buckets (the floor's daily maxima). */
  dayBuckets: number;
  /** The scales in buckets: the one-bucket scale first; duplicates (long buckets) removed. */
  scales: { m: number; level: number }[];
  /** minMentionsPerHour per bucket. */
  minPerBucket: number;
  /** Buckets per hour when the daily shape is usable (bucket width divides an hour), else 0. */
  bucketsPerHour: number;
}

const buckets = (hours: number, bucketSeconds: number, min: number) => Math.max(min, Math.round((hours * 3600) / bucketSeconds));

const resolved = new WeakMap<object, Resolved>();

/**
 * Defaults for anything left out (or explicitly undefined), then validated: a bad config is a programming error.
 * Resolved once per config object (a pass assesses thousands of topics with one).
 */
export function resolveConfig(config: Partial<DetectionConfig> = DEFAULT_DETECTION_CONFIG): Resolved {
  let r = resolved.get(config);
  if (!r) resolved.set(config, (r = resolve(config)));
  return r;
}

function resolve(config: Partial<DetectionConfig>): Resolved {
  const given = Object.fromEntries(Object.entries(config).filter(([, v]) => v !== undefined));
  const cfg: DetectionConfig = { ...DEFAULT_DETECTION_CONFIG, ...given };
  if (!(Number.isFinite(cfg.bucketSeconds) && cfg.bucketSeconds > 0)) {
    throw new RangeError(`bucketSeconds must be a positive number, got ${cfg.bucketSeconds}`);
  }
  if (!(Number.isFinite(cfg.baselineHours) && cfg.baselineHours > 0)) {
    throw new RangeError(`baselineHours must be a positive number, got ${cfg.baselineHours}`);
  }
  if (!(Number.isFinite(cfg.minMentionsPerHour) && cfg.minMentionsPerHour >= 0)) {
    throw new RangeError(`minMentionsPerHour must be a non-negative number, got ${cfg.minMentionsPerHour}`);
  }
  const b = cfg.bucketSeconds;
  const recentBuckets = buckets(RECENT_HOURS, b, 3);
  const scales: Resolved["scales"] = [];
  for (const sc of SCALES) {
    const m = sc.windowHours ? buckets(sc.windowHours, b, 1) : 1;
    const level = buckets(sc.levelHours, b, 3);
    if (!scales.some((x) => x.m === m && x.level === level)) scales.push({ m, level });
  }
  return {
    ...cfg,
    historyBuckets: buckets(cfg.baselineHours, b, 1),
    lookbackBuckets: buckets(cfg.baselineHours, b, 1),
    recentBuckets,
    minHistoryBuckets: buckets(MIN_HISTORY_HOURS, b, recentBuckets),
    coolingBuckets: buckets(COOLING_HOURS, b, 1),
    tailMinBuckets: buckets(TAIL_MIN_HOURS, b, 1),
    floorBuckets: buckets(FLOOR_HOURS, b, 2),
    floorMinBuckets: buckets(FLOOR_MIN_HOURS, b, 2),
    dayBuckets: buckets(24, b, 1),
    scales,
    minPerBucket: (cfg.minMentionsPerHour * b) / 3600,
    bucketsPerHour: cfg.dailySeasonality && b <= 3600 && 3600 % b === 0 ? 3600 / b : 0,
  };
}

/** The detection config the service runs with, from its environment settings (the worker's passes and backtests alike). */
export const detectionConfigFrom = (c: { DETECTION_BUCKET_SECONDS: number; DETECTION_BASELINE_HOURS: number; DETECTION_MIN_MENTIONS_PER_HOUR: number }): DetectionConfig => ({
  bucketSeconds: c.DETECTION_BUCKET_SECONDS,
  baselineHours: c.DETECTION_BASELINE_HOURS,
  minMentionsPerHour: c.DETECTION_MIN_MENTIONS_PER_HOUR,
  dailySeasonality: true,
});
