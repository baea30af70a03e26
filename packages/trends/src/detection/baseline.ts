import { MAD_TO_SIGMA, mad, median } from "./stats.ts";

/** Window of the recent level: short enough to follow a drift, long enough that one spike is outvoted. */
export const RECENT_BUCKETS = 6;
/** Below this much history a bucket is not scored (anomalyScore 0, velocity 0). */
export const MIN_HISTORY_BUCKETS = 6;

export interface Score {
  baseline: number;
  anomalyScore: number;
}

export interface Seasonality {
  /** Typical ratio of each phase (hour of day) to the series' own level. */
  factors: number[];
  /** How many days each factor was estimated from. */
  samples: number[];
}

/**
 * Daily shape of the history, or undefined when it covers fewer than two periods. Each bucket is
 * compared with the median of the one-period window centred on it, so a drift across the history is
 * not mistaken for a daily shape, and ratios (not differences) let the daily peak grow with the topic.
 */
export function seasonality(y: readonly number[], firstPhase: number, period: number): Seasonality | undefined {
  if (period < 2 || y.length < 2 * period) return undefined;
  const half = Math.floor(period / 2);
  const byPhase: number[][] = Array.from({ length: period }, () => []);
  for (let j = half; j - half + period <= y.length; j++) {
    byPhase[(firstPhase + j) % period].push(y[j] / median(y.slice(j - half, j - half + period)));
  }
  // Every phase has >= 1 sample when history >= 2 periods.
  return { factors: byPhase.map((ratios) => median(ratios)), samples: byPhase.map((ratios) => ratios.length) };
}

/**
 * Expected count and robust z-score of `current`, given the counts of the buckets just before it
 * (oldest first). `firstPhase` is the seasonal phase of history[0]; period 0 disables seasonality.
 */
export function scoreBucket(history: readonly number[], current: number, firstPhase: number, period: number): Score {
  const n = history.length;
  if (n < MIN_HISTORY_BUCKETS) return { baseline: current, anomalyScore: 0 };

  // Work on count + 1: ratios and square roots then need no special case for silent buckets.
  const y = history.map((count) => count + 1);
  const season = seasonality(y, firstPhase, period);
  const phaseOf = (j: number) => (firstPhase + j) % period;
  const factorAt = (j: number) => (season ? season.factors[phaseOf(j)] : 1);
  const deseasonalized = y.map((v, j) => v / factorAt(j));
  // levels[j]: recent level just before bucket j (j = n is the assessed bucket).
  const levels = Array.from({ length: n + 1 }, (_, j) =>
    j === 0 ? NaN : median(deseasonalized.slice(Math.max(0, j - RECENT_BUCKETS), j)),
  );

  // Typical one-step growth over the whole history: a steady (even exponential) drift gives a constant
  // ratio, while past bursts are a minority the median ignores. Declines are not extrapolated, so a
  // topic that stops falling does not look like a burst.
  const steps = Array.from({ length: n - 1 }, (_, k) => k + 1);
  const growth = Math.max(1, median(steps.map((j) => deseasonalized[j] / levels[j])));
  const expected = (j: number) => factorAt(j) * growth * levels[j];

  // Noise relative to Poisson (sqrt of the expected count), measured robustly on the history's own
  // one-step surprises and never below 1, so a perfectly regular series (MAD 0) cannot divide by 0.
  const residuals = steps.map((j) => (y[j] - expected(j)) / Math.sqrt(expected(j)));
  const dispersion = Math.max(1, MAD_TO_SIGMA * mad(residuals));

  // A daily factor estimated from k days carries its own error (variance ~ pi/2 / k of the noise, for a
  // median); the history's residuals cannot show it because the factors were fitted on them.
  const factorError = season ? Math.PI / 2 / season.samples[phaseOf(n)] : 0;
  const baseline = Math.max(0, expected(n) - 1);
  const scale = dispersion * Math.sqrt((baseline + 1) * (1 + factorError));
  return { baseline, anomalyScore: (current - baseline) / scale };
}
