/**
 * Trend detection: is a topic's latest bucket (or the bucket in progress) a burst, a ramp or a shift, given its own
 * history? Settings are in time (hours, mentions per hour), so any bucket width behaves alike.
 *
 * Method. Signals are summed into fixed, UTC-aligned buckets (1 hour by default); a topic's missing buckets count 0,
 * but buckets in which the whole account had no data (an outage: `missing`) are left out of everything. Only the
 * buckets before the assessed one are its history: at most `baselineHours` (a week), less if the topic is younger.
 * Counts are handled as count + 1, so silent buckets need no special case.
 * 1. Daily shape (once history covers two days, for buckets of at most an hour): each hour of day gets a factor, the
 *    median over days of "hour / median of the one-day window centred on it".
 * 2. Recent level: the median of the deseasonalized buckets in the 6 h before a bucket; it follows a drift within a
 *    few hours but is not moved by a single spike.
 * 3. Three time scales are scored: the bucket alone, the last 3 h and the last 6 h, each as the sum of the window
 *    against the level just before the window. A burst shows at the bucket scale; a ramp, a plateau or a level shift
 *    shows in the longer sums before the recent level catches up with it.
 *    Per scale, growth = the median over the history of "window mean / level before it" (at least 1): a steady
 *    drift, even an exponential one, moves the expectation with it; declines are not extrapolated.
 * 4. Score per scale: z = (actual - expected) / (dispersion x sqrt(expected x (1 + pi/2n))). sqrt(expected) is the
 *    Poisson noise of a count. dispersion = max(1, robust core, usual-spike tail): the core is 1.4826 x MAD of the
 *    history's own surprises (past bursts and outages do not widen it); the tail is the 98th percentile of those
 *    surprises (history older than 24 h, once 48 h of it exist) divided by its normal value 2.054, so a topic whose
 *    normal includes near-daily spikes scores its usual spike near 2 and only an unusual one fires. The last term
 *    covers the daily factor's own error when estimated from only n days. anomalyScore = the highest z of the scales.
 * 5. Severity: below 5 none, 5 low, 7 medium, 10 high, 20 critical; always "none" when the bucket's rate is below
 *    `minMentionsPerHour` (20 by default). With less than 6 h of history a bucket is not scored.
 * 6. A bucket in progress (`now` inside it, at least 5 minutes in) is scored as the closed bucket it becomes if the
 *    rest of it arrives one standard deviation short of the expected count: mentions do not arrive at a steady rate
 *    within a bucket, so what arrived so far must already be an anomaly for a whole bucket. The volume floor judges
 *    that same whole bucket. The closed bucket is assessed again when it ends.
 *
 * Units. velocity = (current / observed - baseline) * 3600 / bucketSeconds: mentions per hour above the expected
 * rate, whatever the bucket width. acceleration = velocity - previous bucket's velocity. windowVelocity (trends only):
 * the same excess over the window of the scale that fired, what a new trend found by a longer window is published with
 * when its latest bucket runs under the one-bucket expectation.
 *
 * Stage: emerging (first anomalous bucket), rising (anomalous, velocity still growing), peaking (anomalous, velocity
 * stopped growing while the count holds or has just turned), cooling (falling while still anomalous, or up to 6 h
 * after the last anomalous bucket), dormant otherwise.
 */
export { DEFAULT_DETECTION_CONFIG, resolveConfig, COOLING_HOURS, DORMANCY_HOURS, MIN_HISTORY_HOURS, RECENT_HOURS, SCALES, type DetectionConfig } from "./config.ts";
export { bucketize, type Bucket } from "./series.ts";
export {
  assess,
  assessNow,
  assessSeries,
  severityFor,
  PARTIAL_MIN_SECONDS,
  SEVERITY_THRESHOLDS,
  type AssessOptions,
  type Assessment,
  type Severity,
  type Stage,
} from "./assess.ts";
