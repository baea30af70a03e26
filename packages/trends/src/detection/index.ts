/**
 * Trend detection: is a topic's latest bucket a burst, given its own recent history?
 *
 * Method. Signals are summed into fixed, UTC-aligned buckets (1 hour by default); missing buckets
 * count 0. For the bucket being assessed, only the buckets before it are history (at most
 * `baselineBuckets`, a week by default; a shorter history is used as far as it goes, and nothing is
 * assumed about time before a topic's first bucket).
 * 1. Seasonality: once history covers two periods (two days), each hour of day gets an offset, the
 *    median of its deviations from a centred one-day median. Subtracting it makes a daily peak an
 *    expected value instead of a burst. Deviations from a local median (not from the overall mean)
 *    keep a drift from being mistaken for a daily shape.
 * 2. Baseline: the median of the last 6 deseasonalized buckets (the recent level), plus the recent
 *    growth drift (median of the last 6 one-step surprises, growth only), plus the hour's offset.
 *    A median ignores a single spike; a short window lets the baseline follow a slow drift, so
 *    drifts never fire, while a burst is a jump relative to that recent baseline.
 * 3. Score: a robust z-score, (current - baseline) / scale, where scale is 1.4826 x the MAD of the
 *    history's own one-step surprises, floored at sqrt(baseline) (Poisson noise of a count) so a
 *    perfectly regular series (MAD 0) cannot turn a one-mention wobble into an alert.
 * 4. Severity from the score (none < 4 <= low < 6 <= medium < 10 <= high < 20 <= critical), but
 *    always "none" when the bucket's count is below `minVolume` (20 by default), so tiny topics never
 *    fire on "0 to 3". Below 6 buckets of history the score is 0.
 * Medians and MADs rather than means and standard deviations, because past bursts and outages would
 * otherwise inflate the baseline and the noise estimate and hide the next burst.
 *
 * Units. velocity = (current - baseline) * 3600 / bucketSeconds: mentions per hour above the
 * expected rate (positive above baseline, negative below), so a webhook `threshold_value` of 50 on
 * velocity means "at least 50 more mentions per hour than usual", whatever the bucket width.
 * acceleration = velocity - previous bucket's velocity (mentions per hour, per bucket).
 *
 * Stage: emerging (first anomalous bucket), rising (anomalous, velocity still growing), peaking
 * (anomalous, velocity stopped growing, count holding or just turned), cooling (count falling while
 * anomalous, or within 6 buckets after the last anomalous one), dormant (otherwise).
 */
export { DEFAULT_DETECTION_CONFIG, resolveConfig, type DetectionConfig } from "./config.ts";
export { bucketize, type Bucket } from "./series.ts";
export { MIN_HISTORY_BUCKETS, RECENT_BUCKETS } from "./baseline.ts";
export {
  assess,
  assessSeries,
  severityFor,
  COOLING_BUCKETS,
  SEVERITY_THRESHOLDS,
  type Assessment,
  type Severity,
  type Stage,
} from "./assess.ts";
