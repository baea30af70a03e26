// NAB (Numenta Anomaly Benchmark) windowed scoring, standard profile, as in numenta/NAB nab/labeler.py (windows) and
// nab/sweeper.py (sweep scores). Rows are the series' buckets (index 0 = first bucket); a detection is a row index.

export interface CostProfile {
  tpWeight: number;
  fpWeight: number;
  fnWeight: number;
}

/** NAB's "standard" profile. */
export const STANDARD_PROFILE: CostProfile = Object.freeze({ tpWeight: 1, fpWeight: 0.11, fnWeight: 1 });

/** NAB's defaults: windows span 10 % of a file (shared by its anomalies); the first 15 % of a file is not scored. */
export const WINDOW_FRACTION = 0.1;
export const PROBATION_FRACTION = 0.15;

/** Inclusive row range. */
export interface Window {
  start: number;
  end: number;
}

/**
 * 2*sigmoid(-5x) - 1: +0.987 at the left edge of a window (x = -1), 0 at its right edge (x = 0), down to -1 for a
 * detection well after it (x >= 3).
 */
export function scaledSigmoid(position: number): number {
  if (position >= 3) return -1;
  return 2 / (1 + Math.exp(5 * position)) - 1;
}

const MAX_TP = scaledSigmoid(-1);

/**
 * Windows for the anomaly start rows of one series (labeler.applyWindows + checkWindows): each window is
 * floor(10 % of the length / number of anomalies) rows, centred on its anomaly, clipped to the series; the first
 * window is deleted if it starts inside the probation; then overlapping windows merge.
 */
export function labelWindows(
  length: number,
  anomalies: readonly number[],
  fraction = WINDOW_FRACTION,
  probationFraction = PROBATION_FRACTION,
): Window[] {
  if (!anomalies.length) return [];
  const size = Math.floor((fraction * length) / anomalies.length);
  const half = Math.floor(size / 2);
  const raw = [...anomalies].sort((a, b) => a - b).map((a) => ({ start: Math.max(a - half, 0), end: Math.min(a + half, length - 1) }));
  if (raw[0].start < probationLength(length, probationFraction)) raw.shift();
  const merged: Window[] = [];
  for (const w of raw) {
    const last = merged[merged.length - 1];
    if (last && w.start <= last.end) last.end = Math.max(last.end, w.end);
    else merged.push({ ...w });
  }
  return merged;
}

/** Rows before this are the detector's warm-up and are not scored (sweeper._getProbationaryLength). */
export function probationLength(length: number, fraction = PROBATION_FRACTION): number {
  return Math.min(Math.floor(fraction * length), fraction * 5000);
}

export interface SeriesScore {
  raw: number;
  /**
   * Per window: the first scored detection inside it (its row), or null for a miss, and how many detections fell in it
   * (the later ones score nothing: repeats). Windows inside probation are left out.
   */
  windows: { window: Window; detection: number | null; detections: number; score: number }[];
  /** Scored detections outside every window, with their (negative) contribution. */
  falsePositives: { row: number; score: number }[];
}

/**
 * Raw NAB score of one series. Every detection is scored, several on one row too (a subscriber receives each one).
 * Only the earliest detection in a window counts (the sweep keeps each window's maximum,
 * and the score falls with lateness); each detection outside windows costs fpWeight x scaledSigmoid of its distance
 * after the preceding window's right edge (in that window's widths), the full fpWeight when no window precedes it;
 * each window without a detection costs fnWeight.
 */
export function scoreSeries(
  length: number,
  windows: readonly Window[],
  detections: Iterable<number>,
  profile: CostProfile = STANDARD_PROFILE,
  probationFraction = PROBATION_FRACTION,
): SeriesScore {
  const probation = probationLength(length, probationFraction);
  const rows = [...detections].filter((r) => r >= probation && r < length).sort((a, b) => a - b);
  const scored = windows.filter((w) => w.end >= probation);
  const result: SeriesScore = {
    raw: 0,
    windows: scored.map((window) => ({ window, detection: null, detections: 0, score: -profile.fnWeight })),
    falsePositives: [],
  };
  for (const row of rows) {
    const inside = result.windows.find((w) => row >= w.window.start && row <= w.window.end);
    if (inside) {
      inside.detections++;
      if (inside.detection !== null) continue;
      const width = inside.window.end - inside.window.start + 1;
      inside.detection = row;
      inside.score = (scaledSigmoid(-(inside.window.end - row + 1) / width) * profile.tpWeight) / MAX_TP;
      continue;
    }
    // Closest window ending before the row (probationary windows included, as in the sweep).
    let previous: Window | undefined;
    for (const w of windows) if (w.end < row && (!previous || w.end > previous.end)) previous = w;
    let position = 3;
    if (previous) {
      const width = previous.end - previous.start + 1;
      position = width > 1 ? (row - previous.end) / (width - 1) : 3;
    }
    result.falsePositives.push({ row, score: scaledSigmoid(position) * profile.fpWeight });
  }
  result.raw =
    result.windows.reduce((sum, w) => sum + w.score, 0) + result.falsePositives.reduce((sum, fp) => sum + fp.score, 0);
  return result;
}

/**
 * NAB's normalised score over a corpus: 100 x (raw - null) / (perfect - null), where the null detector (no
 * detections) scores -fnWeight per window and the perfect one (a detection at each window's left edge) +tpWeight.
 */
export function normalisedScore(raw: number, windowCount: number, profile: CostProfile = STANDARD_PROFILE): number {
  const nullScore = -profile.fnWeight * windowCount;
  const perfect = profile.tpWeight * windowCount;
  if (perfect === nullScore) return 0;
  return (100 * (raw - nullScore)) / (perfect - nullScore);
}
