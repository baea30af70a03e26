// The detection settings' defaults, in one place: the environment schema (DETECTION_*) and the detector's own
// defaults (what tests, benchmarks and backtests run without an environment) both read them. Why eight days of
// history: packages/trends/src/detection/config.ts.

export const DETECTION_DEFAULTS = Object.freeze({
  bucketSeconds: 3600,
  baselineHours: 24 * 8,
  minMentionsPerHour: 20,
});
