import { HOUR_MS, type CorpusSeries } from "./corpus.ts";

// The plain baseline: z-score of each hourly bucket against the mean and standard deviation of the 168 buckets (one
// week) before it; fires when z > 3 and the count is at least the detector's floor of 20 mentions/h. An alert is an
// onset: the first firing bucket after one that did not fire. It knows nothing of seasons, outages or history length.

export interface Alert {
  /** The bucket (series row) the alert is about. */
  row: number;
  /** When a subscriber would have received it. */
  atMs: number;
}

export const ZSCORE = { historyBuckets: 168, threshold: 3, minCount: 20, minHistory: 24 } as const;

export function zscoreReplay(series: { counts: readonly number[]; startMs: number }): { alerts: Alert[] } {
  const { counts } = series;
  const alerts: Alert[] = [];
  let firing = false;
  for (let k = 0; k < counts.length; k++) {
    const from = Math.max(0, k - ZSCORE.historyBuckets);
    const n = k - from;
    let fires = false;
    // Less than a day of history gives no meaningful standard deviation: no opinion yet.
    if (n >= ZSCORE.minHistory) {
      let sum = 0;
      let sq = 0;
      for (let i = from; i < k; i++) {
        sum += counts[i];
        sq += counts[i] * counts[i];
      }
      const mean = sum / n;
      const std = Math.sqrt(Math.max(0, sq / n - mean * mean));
      const z = std > 0 ? (counts[k] - mean) / std : counts[k] > mean ? Infinity : 0;
      fires = z > ZSCORE.threshold && counts[k] >= ZSCORE.minCount;
    }
    if (fires && !firing) alerts.push({ row: k, atMs: series.startMs + (k + 1) * HOUR_MS });
    firing = fires;
  }
  return { alerts };
}
