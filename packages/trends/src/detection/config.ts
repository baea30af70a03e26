export interface DetectionConfig {
  /** Bucket width in seconds; buckets are aligned to UTC multiples of it. */
  bucketSeconds: number;
  /** History used for the baseline, in buckets. Shorter history is used as far as it goes. */
  baselineBuckets: number;
  /** A bucket whose count is below this never fires, whatever its score. */
  minVolume: number;
  /** Daily seasonality period in buckets (24 for hourly buckets); used once history covers >= 2 periods. 0 disables. */
  seasonPeriodBuckets?: number;
}

/** Hourly buckets, one week of history, daily seasonality. Set seasonPeriodBuckets too when changing bucketSeconds. */
export const DEFAULT_DETECTION_CONFIG: DetectionConfig = Object.freeze({
  bucketSeconds: 3600,
  baselineBuckets: 24 * 7,
  minVolume: 20,
  seasonPeriodBuckets: 24,
});

/** Defaults for anything left out (or explicitly undefined), then validated: a bad config is a programming error. */
export function resolveConfig(config: Partial<DetectionConfig> = {}): DetectionConfig {
  const given = Object.fromEntries(Object.entries(config).filter(([, v]) => v !== undefined));
  const cfg: DetectionConfig = { ...DEFAULT_DETECTION_CONFIG, ...given };
  if (!(Number.isFinite(cfg.bucketSeconds) && cfg.bucketSeconds > 0)) {
    throw new RangeError(`bucketSeconds must be a positive number, got ${cfg.bucketSeconds}`);
  }
  if (!(Number.isInteger(cfg.baselineBuckets) && cfg.baselineBuckets >= 1)) {
    throw new RangeError(`baselineBuckets must be a positive integer, got ${cfg.baselineBuckets}`);
  }
  if (!(Number.isFinite(cfg.minVolume) && cfg.minVolume >= 0)) {
    throw new RangeError(`minVolume must be a non-negative number, got ${cfg.minVolume}`);
  }
  const period = cfg.seasonPeriodBuckets ?? 0;
  if (!(Number.isInteger(period) && period >= 0)) {
    throw new RangeError(`seasonPeriodBuckets must be a non-negative integer, got ${cfg.seasonPeriodBuckets}`);
  }
  return cfg;
}
