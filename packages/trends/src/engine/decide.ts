import { severityRank, type TrendEvent } from "@trendgate/contracts";
import { COOLING_HOURS, DORMANCY_HOURS, type Assessment, type Severity, type Stage } from "../detection/index.ts";

// What one assessment changes for a topic's trend, and which event (if any) it publishes. Pure: the engine applies
// it to the trend row, the detection evaluation replays it in memory.

export type PublishedSeverity = Exclude<Severity, "none">;

/** The part of a trend row that decides events. */
export interface TrendState {
  status: "active" | "ended";
  /** The severity last published. */
  severity: PublishedSeverity;
  /** The velocity last published. */
  publishedVelocity: number;
  /** A different severity seen since `pendingSince`, not yet held long enough to publish. */
  pendingSeverity: PublishedSeverity | null;
  pendingSince: Date | null;
  /** When the last trend.velocity_changed was published. */
  velocityEventAt: Date | null;
  /**
   * Start of the last bucket assessed anomalous, in progress or closed: the trend ends DORMANCY_HOURS after it. Null
   * for a trend recorded before this was kept (it then ends on the first dormant closed bucket).
   */
  lastAnomalousBucket: Date | null;
  /**
   * Start of the bucket where a later wave of the trend began (anomalous again after COOLING_HOURS without an
   * anomalous bucket); null during the wave that opened it.
   */
  waveStart: Date | null;
  /** The highest severity published for the trend (null for a trend recorded before this was kept). */
  peakSeverity: PublishedSeverity | null;
  /** The largest excess (count over baseline in one bucket) of the current wave; null for a trend recorded before this was kept. */
  wavePeakExcess: number | null;
  /** The same for the wave before the current one (null during the first wave). */
  priorWavePeakExcess: number | null;
  /** Start of the closed bucket whose calm published trend.cooling for the current wave (null: not announced). */
  coolingSince: Date | null;
}

export interface EventRules {
  /** A new velocity event needs the velocity to move by this fraction of the published one (and >= 1 mention/h). */
  velocityEventStep: number;
  /** At most one trend.velocity_changed per trend per this many seconds. */
  velocityEventMinSeconds: number;
  /** A severity change is published only once the new severity has held for this long (hysteresis). */
  severityHoldSeconds: number;
  /** A trend ends this many hours after its last anomalous bucket (DETECTION_END_AFTER_HOURS). */
  endAfterHours: number;
}

export const DEFAULT_EVENT_RULES: EventRules = Object.freeze({ velocityEventStep: 0.5, velocityEventMinSeconds: 10800, severityHoldSeconds: 1800, endAfterHours: DORMANCY_HOURS });

export interface Decision {
  status: "active" | "ended";
  event?: TrendEvent["type"];
  state: TrendState;
  /** The stage to show: the assessment's, except "cooling" while a trend that is not anomalous now is still open. */
  stage: Stage;
  /** The velocity to show and publish: the assessment's, except for a new trend (detectionVelocity). */
  velocity: number;
}

/**
 * A new trend's velocity is never negative (a trend_detected subscription at threshold 0 receives every new trend):
 * when its latest bucket runs under the one-bucket expectation, found anomalous by a longer window, it is that
 * window's excess per hour.
 */
export const detectionVelocity = (a: Assessment) => (a.velocity >= 0 ? a.velocity : Math.max(0, a.windowVelocity ?? 0));

const COOLING_MS = COOLING_HOURS * 3_600_000;

/**
 * Whether a trend that `a` does not find anomalous is over: only a closed bucket can say so (a dip in the bucket in
 * progress is a few minutes of data), only once that bucket is dormant, and only once it starts more than
 * endAfterHours after the last bucket found anomalous. The last condition covers what a closed bucket's own stage
 * cannot see: a trend detected from the bucket in progress, while a pass falls back to the closed bucket before it.
 */
function isOver(state: TrendState, a: Assessment, rules: EventRules): boolean {
  if (a.observed !== 1 || a.stage !== "dormant") return false;
  return !state.lastAnomalousBucket || a.bucketStart.getTime() > state.lastAnomalousBucket.getTime() + rules.endAfterHours * 3_600_000;
}

/**
 * Whether a calm assessment starts the trend's cooling down: a closed bucket after its last anomalous one (not the
 * closed bucket a pass falls back to before an anomalous one in progress), the first of the current wave.
 */
const startsCooling = (state: TrendState, a: Assessment) =>
  a.observed === 1 && !state.coolingSince && !!state.lastAnomalousBucket && a.bucketStart.getTime() > state.lastAnomalousBucket.getTime();

const later = (a: Date | null, b: Date) => (a && a.getTime() >= b.getTime() ? a : b);
const higher = (a: PublishedSeverity, b: PublishedSeverity) => (severityRank(b) > severityRank(a) ? b : a);

/** A later wave is a new burst when its largest excess is this many times the wave before it's: clearly stronger (a
 * second wave as large as the first is the same news coming back). */
const LARGER_WAVE = 1.5;

/**
 * Whether a later wave of an open trend is announced as a new trend: when it is more severe than the trend ever was,
 * and the trend never got past `low` (marginal evidence, the likeliest false alarm, must not hide a real burst) or
 * the wave is two levels above it (medium -> critical); or when its largest excess (count over baseline in one
 * bucket) is over LARGER_WAVE times the largest of the wave before it: a burst clearly bigger than what the trend has
 * shown is news even at the same severity. One level above a trend that was clearly real (medium -> high) with no larger excess is what
 * the same event's echo does by chance: a subscriber must not hear of that trend twice.
 */
function laterWaveIsNew(wave: PublishedSeverity, peak: PublishedSeverity, size: number, priorWave: number | null): boolean {
  const above = severityRank(wave) - severityRank(peak);
  return above >= 2 || (above === 1 && peak === "low") || (!!priorWave && size > LARGER_WAVE * priorWave);
}

/**
 * The next state of a topic's trend after assessment `a` made at `now` (the time of the pass), or null when there is
 * nothing to record (no trend, none starting). A trend opens once per burst and lives until it is over (isOver): a
 * second wave before that continues it.
 * - trend.detected: the topic becomes a trend (none before, or the previous one ended), or a later wave of an open
 *   trend (after COOLING_HOURS quiet) outgrows the trend's peak (laterWaveIsNew): a small trend left open must not hide
 *   the real burst that follows it, while a second wave like the first continues the trend;
 * - trend.severity_changed: the severity differs from the published one and every assessment since it first differed
 *   gave that same severity for at least severityHoldSeconds (a severity that flickers publishes nothing);
 * - trend.velocity_changed: the velocity moved by velocityEventStep since the last published one, at most once per
 *   velocityEventMinSeconds per trend, from closed buckets only, and never in the same pass as another event;
 * - trend.cooling: the first closed bucket after the trend's last anomalous one is calm: the trend is cooling down and
 *   ends endAfterHours after that last anomalous bucket unless it rises again; once per wave (a flare-up of the same
 *   wave that calms again is not announced twice), never in the same pass as another event;
 * - trend.ended: the trend is over; the published severity is kept for the record.
 */
export function decide(state: TrendState | undefined, a: Assessment, rules: EventRules, now: Date): Decision | null {
  if (!a.isTrend) {
    if (!state || state.status === "ended") return null;
    const calm = { ...state, pendingSeverity: null, pendingSince: null };
    if (isOver(state, a, rules)) return { status: "ended", event: "trend.ended", state: { ...calm, status: "ended" }, stage: "dormant", velocity: a.velocity };
    const stage = a.stage === "dormant" ? "cooling" : a.stage;
    if (startsCooling(state, a)) {
      return { status: "active", event: "trend.cooling", state: { ...calm, coolingSince: a.bucketStart, publishedVelocity: a.velocity }, stage: "cooling", velocity: a.velocity };
    }
    return { status: "active", state: calm, stage, velocity: a.velocity };
  }
  // A bucket in progress is judged as if the rest of it fell short, so its severity runs low: it can raise an open
  // trend's severity but not lower it (closed buckets do), or passes alternating with the closed bucket flicker.
  const assessed = a.severity as PublishedSeverity;
  const severity = a.observed < 1 && state?.status === "active" && severityRank(assessed) < severityRank(state.severity) ? state.severity : assessed;
  const stage = a.stage;
  const velocity = a.velocity;
  const quietBefore = state?.lastAnomalousBucket && a.bucketStart.getTime() - state.lastAnomalousBucket.getTime() > COOLING_MS;
  const waveStart = quietBefore ? a.bucketStart : (state?.waveStart ?? null);
  const v = detectionVelocity(a);
  const size = Math.max(0, a.current - a.baseline);
  const priorWave = quietBefore ? (state?.wavePeakExcess ?? null) : (state?.priorWavePeakExcess ?? null);
  const wavePeak = Math.max(size, quietBefore ? 0 : (state?.wavePeakExcess ?? 0));
  if (!state || state.status === "ended" || (waveStart && laterWaveIsNew(severity, state.peakSeverity ?? state.severity, size, priorWave))) {
    return {
      status: "active", event: "trend.detected", stage, velocity: v,
      state: {
        status: "active", severity, publishedVelocity: v, pendingSeverity: null, pendingSince: null, velocityEventAt: null,
        lastAnomalousBucket: a.bucketStart, waveStart: null, peakSeverity: severity, wavePeakExcess: size, priorWavePeakExcess: null, coolingSince: null,
      },
    };
  }
  // A new wave may cool down (and be announced cooling) again; a flare-up within the wave keeps its announcement.
  const coolingSince = quietBefore ? null : state.coolingSince;
  const seen = { ...state, lastAnomalousBucket: later(state.lastAnomalousBucket, a.bucketStart), waveStart, wavePeakExcess: wavePeak, priorWavePeakExcess: priorWave, coolingSince };
  if (severity !== state.severity) {
    if (state.pendingSeverity !== severity || !state.pendingSince) {
      return { status: "active", state: { ...seen, pendingSeverity: severity, pendingSince: now }, stage, velocity };
    }
    if (now.getTime() - state.pendingSince.getTime() >= rules.severityHoldSeconds * 1000) {
      return {
        status: "active", event: "trend.severity_changed", stage, velocity,
        state: { ...seen, severity, publishedVelocity: a.velocity, pendingSeverity: null, pendingSince: null, peakSeverity: higher(state.peakSeverity ?? state.severity, severity) },
      };
    }
    return { status: "active", state: seen, stage, velocity };
  }
  const settled = { ...seen, pendingSeverity: null, pendingSince: null };
  const step = Math.max(rules.velocityEventStep * Math.abs(state.publishedVelocity), 1);
  const rested = !state.velocityEventAt || now.getTime() - state.velocityEventAt.getTime() >= rules.velocityEventMinSeconds * 1000;
  // Only closed buckets: a bucket in progress projects its velocity from a few minutes, too noisy to announce.
  if (rested && a.observed === 1 && Math.abs(a.velocity - state.publishedVelocity) >= step) {
    return { status: "active", event: "trend.velocity_changed", state: { ...settled, publishedVelocity: a.velocity, velocityEventAt: now }, stage, velocity };
  }
  return { status: "active", state: settled, stage, velocity };
}
