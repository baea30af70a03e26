/**
 * Trend detection: is a topic's latest bucket a burst, given its own recent history?
 *
 * Method. Signals are summed into fixed, UTC-aligned buckets (1 hour by default); missing buckets
 * count 0. Only the buckets before the assessed one are its history: at most `baselineBuckets` (a
 * week), fewer if the topic is younger; nothing is assumed about time before a topic's first bucket.
 * Counts are handled as count + 1, so silent buckets need no special case.
 * 1. Daily shape (once history covers two periods, i.e. two days): each hour of day gets a factor,
 *    the median over days of "bucket / median of the one-day window centred on it". Dividing by it
 *    turns the daily peak into an expected value. Ratios let the peak grow with a growing topic; a
 *    centred local median keeps a drift from being mistaken for a daily shape.
 * 2. Recent level: the median of the last 6 deseasonalized buckets. It follows a drift within a few
 *    buckets but is not moved by a single spike.
 * 3. Growth: the median, over the whole history, of one-step ratios (bucket / level before it), at
 *    least 1. A steady drift, even an exponential one, has a constant ratio, so the baseline moves
 *    with it; past bursts are a minority the median ignores. Declines are not extrapolated, so a
 *    topic that stops falling does not look like a burst.
 *    baseline = level x growth x hour-of-day factor (minus the 1 added above).
 * 4. Score: a robust z-score, anomalyScore = (current - baseline) / scale, with
 *    scale = dispersion x sqrt(baseline + 1) x sqrt(1 + pi/2k). sqrt(baseline + 1) is the Poisson
 *    noise of a count and acts as a floor, so a perfectly regular series (MAD 0) cannot turn a
 *    one-mention wobble into an alert. dispersion = max(1, 1.4826 x MAD of the history's one-step
 *    residuals in Poisson units) says how much noisier than Poisson this topic is, without past
 *    bursts inflating it. The last term covers the daily factor's own error when it was estimated
 *    from only k days.
 * 5. Severity from the score: below 5 none, 5 low, 7 medium, 10 high, 20 critical; always "none"
 *    when the bucket's count is below `minVolume` (20 by default), so tiny topics never fire on
 *    "0 to 3". With fewer than 6 buckets of history a bucket is not scored (score 0, velocity 0).
 * So a burst is a jump relative to a baseline that already carries the recent level, growth and
 * time of day, while a slow drift or a daily peak moves the baseline with it and does not fire.
 * Medians and MADs, rather than means and standard deviations, because past bursts and outages
 * would otherwise inflate the baseline and the noise estimate and hide the next burst.
 *
 * Units. velocity = (current - baseline) * 3600 / bucketSeconds: mentions per hour above the
 * expected rate (positive above baseline, negative below), so a webhook `threshold_value` of 50 on
 * velocity means "at least 50 more mentions per hour than usual", whatever the bucket width.
 * acceleration = velocity - previous bucket's velocity (mentions per hour, per bucket).
 *
 * Stage: emerging (first anomalous bucket), rising (anomalous, velocity still growing), peaking
 * (anomalous, velocity stopped growing while the count holds or has just turned), cooling (count
 * falling while still anomalous, or up to 6 buckets after the last anomalous one), dormant otherwise.
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
