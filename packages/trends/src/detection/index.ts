/**
 * Trend detection: is a topic's latest bucket (or the bucket in progress) a burst, a ramp or a shift, given its own
 * history? Settings are in time (hours, mentions per hour), so any bucket width behaves alike.
 *
 * Method. Signals are summed into fixed, UTC-aligned buckets (1 hour by default); a topic's missing buckets count 0,
 * but buckets in which the whole account had no data (an outage: `missing`) are left out of everything. Only the
 * buckets before the assessed one are its history: at most `baselineHours` (a week and a day), less if the topic is
 * younger.
 * Counts are handled as count + 1, so silent buckets need no special case.
 * 1. Daily shape (once history covers two days, for buckets of at most an hour): each hour of day gets a factor, the
 *    median over days of "hour / median of the one-day window centred on it".
 * 2. Recent level: the median of the deseasonalized buckets in the 6 h before a bucket; it follows a drift within a
 *    few hours but is not moved by a single spike.
 * 3. Four time scales are scored (SCALES): the bucket against the last 6 h, 3 h against a day, 6 h against a day and
 *    12 h against two days, each window's sum against the level just before it. A burst shows at the bucket scale; a
 *    bump, a ramp, a plateau or a level shift in the longer sums, where a window's largest bucket counts no more above
 *    its one-bucket expectation than the window's second largest does (one spike cannot set them off; several strong
 *    hours count whole). Per scale, growth = the median over the history of "window mean / level before it" (at
 *    least 1): a steady drift moves the expectation with it.
 * 4. Score per scale: z = (actual - expected) / sqrt(d^2 x expected x (1 + estimation error) + (5 % x expected)^2),
 *    d = max(1, robust core, usual-spike tail). The core is 1.4826 x MAD of the history's own surprises (past bursts
 *    and outages do not widen it). The tail: each day's largest surprise (days older than 24 h), the second largest
 *    day taken, against the same quantile of the largest of that many normal surprises: a topic spiking on two days or
 *    more scores its usual spike near 1-2, one past burst does not widen it (eight days of history keep both of last
 *    weekend's days in that tail on either day of this one). The 5 % model error is 15 % until every hour of day has
 *    been seen on two days: a young topic's first evening peak is not news. anomalyScore = the highest z.
 *    The z-score floor (model.ts, FLOOR_Z): a bucket at least 6 standard deviations above the mean of the week before
 *    it (from 24 h of history), and at least four times the median of its daily maxima, scores at least `low` whatever the
 *    model makes of it: on real social volume the model's usual-spike tail excused spikes people label as news.
 * 5. Severity (SEVERITY_THRESHOLDS): below 4.5 none, 4.5 low, 7 medium, 10 high, 20 critical; always "none" when the
 *    bucket's rate is below `minMentionsPerHour` (20 by default). With less than 6 h of history a bucket is not scored.
 * 6. A bucket in progress (at least 5 minutes in) is scored as the closed bucket it becomes if the rest of it arrives
 *    one standard deviation short of the expected count, and counts only from PARTIAL_MIN_SCORE: mentions clump within
 *    an hour, so what arrived so far must already be a clear anomaly for a whole bucket. The volume floor judges that
 *    same whole bucket. The closed bucket is assessed again when it ends.
 *
 * Units. velocity = (projected - baseline) * 3600 / bucketSeconds: mentions per hour above the expected rate,
 * whatever the bucket width; projected = the count, or for a bucket in progress what arrived so far plus the rest of
 * the bucket at the expected rate. acceleration = velocity - previous bucket's velocity. windowVelocity (trends only):
 * the same excess over the window of the scale that fired, what a new trend found by a longer window is published with
 * when its latest bucket runs under the one-bucket expectation.
 *
 * Stage: emerging (first anomalous bucket), rising (anomalous, velocity still growing), peaking (anomalous, velocity
 * stopped growing while the count holds or has just turned), cooling (falling while still anomalous, or up to 6 h
 * after the last anomalous bucket), dormant otherwise.
 */
export { DEFAULT_DETECTION_CONFIG, detectionConfigFrom, resolveConfig, COOLING_HOURS, DORMANCY_HOURS, MIN_HISTORY_HOURS, RECENT_HOURS, SCALES, type DetectionConfig } from "./config.ts";
export { bucketize, type Bucket } from "./series.ts";
export { FitCache } from "./fit-cache.ts";
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
