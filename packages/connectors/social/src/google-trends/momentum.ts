/** One period of a term's interest over time, as the client reads it from the provider. */
export interface TrendPoint {
  /** Start of the period. */
  time: Date;
  /** Relative interest, consistently scaled across requests (comparable between terms and calls). */
  searchInterest: number;
  /** The same series scaled within this response. */
  scaledSearchInterest: number | null;
  /** The current period, not finished: its value will still change. */
  isPartial: boolean;
}

export type MomentumVerdict = "confirmed" | "refuted" | "inconclusive";

export interface MomentumRule {
  recentDays: number;
  baselineDays: number;
  /** Recent mean at least this multiple of the baseline mean confirms. Default 1.5. */
  confirmRatio?: number;
  /** Recent mean at most this multiple of the baseline mean refutes. Default 1.1. */
  refuteRatio?: number;
  /** Fewer complete points than this in either window is inconclusive. Default 3. */
  minPointsPerWindow?: number;
}

export interface MomentumResult {
  verdict: MomentumVerdict;
  /** recentMean / baselineMean; Infinity when the baseline is 0 and recent interest is not; null when not computable. */
  ratio: number | null;
  recentMean: number | null;
  baselineMean: number | null;
  /** The complete points the verdict was computed from (baseline and recent windows), oldest first. */
  points: TrendPoint[];
  /** One sentence for people: why this verdict. */
  reason: string;
}

const DAY = 86_400_000;
const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);

/**
 * Does search interest back a trend detected elsewhere? The rule:
 * - Partial points (the current, unfinished period, still to be revised) are never used.
 * - Windows end at the newest complete point T, not at "now": Trends data stops about two days back, and anchoring
 *   at now would leave the recent window short. recent = points with time in (T - recentDays, T];
 *   baseline = points with time in (T - recentDays - baselineDays, T - recentDays].
 * - ratio = mean(recent) / mean(baseline), on searchInterest (consistently scaled, so any factor is comparable).
 * - confirmed when ratio >= confirmRatio (1.5: interest grew by half or more);
 *   refuted when ratio <= refuteRatio (1.1: interest did not really grow: flat, or falling);
 *   inconclusive in between, when either window has fewer than minPointsPerWindow points (3), or when both
 *   windows are all zeros (too little search volume for Trends to report).
 * - A zero baseline with recent interest counts as confirmed (ratio Infinity): the term rose out of the range
 *   Trends reports as 0.
 */
export function assessMomentum(all: TrendPoint[], rule: MomentumRule): MomentumResult {
  const confirm = rule.confirmRatio ?? 1.5;
  const refute = rule.refuteRatio ?? 1.1;
  const minPoints = rule.minPointsPerWindow ?? 3;
  if (!(confirm > refute)) throw new RangeError("confirmRatio must be greater than refuteRatio");

  const complete = all.filter((p) => !p.isPartial).sort((a, b) => a.time.getTime() - b.time.getTime());
  const anchor = complete.at(-1)?.time.getTime() ?? 0;
  const split = anchor - rule.recentDays * DAY;
  const from = split - rule.baselineDays * DAY;
  const recent = complete.filter((p) => p.time.getTime() > split);
  const baseline = complete.filter((p) => p.time.getTime() > from && p.time.getTime() <= split);
  const recentMean = mean(recent.map((p) => p.searchInterest));
  const baselineMean = mean(baseline.map((p) => p.searchInterest));
  const points = [...baseline, ...recent];
  const result = (verdict: MomentumVerdict, ratio: number | null, reason: string): MomentumResult => ({ verdict, ratio, recentMean, baselineMean, points, reason });

  if (recent.length < minPoints || baseline.length < minPoints) {
    return result("inconclusive", null, `too few complete points: ${recent.length} recent and ${baseline.length} baseline, ${minPoints} needed in each`);
  }
  if (baselineMean === 0) {
    return recentMean! > 0
      ? result("confirmed", Infinity, "search interest rose from zero")
      : result("inconclusive", null, "no measurable search interest in either window");
  }
  const ratio = recentMean! / baselineMean!;
  const r = ratio.toFixed(2);
  if (ratio >= confirm) return result("confirmed", ratio, `recent interest is ${r}x the baseline (>= ${confirm}x confirms)`);
  if (ratio <= refute) return result("refuted", ratio, `recent interest is ${r}x the baseline (<= ${refute}x refutes)`);
  return result("inconclusive", ratio, `recent interest is ${r}x the baseline, between ${refute}x and ${confirm}x`);
}
