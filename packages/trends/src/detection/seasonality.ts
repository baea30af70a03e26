import { mod, quantileOf, SlidingMedian } from "./stats.ts";

/** Hour-of-day shape of a history. */
export interface DailyShape {
  /** Typical ratio of each hour of day (UTC) to the series' own level; 1 where nothing is known. */
  factors: Float64Array;
  /** How many days each factor was estimated from. */
  samples: Int32Array;
  /** Level on Saturdays and Sundays (UTC) relative to weekdays; 1 until the history holds a weekend and a weekday. */
  weekend: number;
}

/** Saturday or Sunday (UTC) for an hour number since the epoch (1970-01-01 was a Thursday). */
export const isWeekendHour = (hour: number) => { const day = mod(Math.floor(hour / 24) + 4, 7); return day === 0 || day === 6; };

/**
 * Daily shape of y[from..to) (bucket values, NaN = missing), or undefined when it covers fewer than two days.
 * Buckets are first averaged per hour, so the shape is per hour of day whatever the bucket width. Each hour is
 * compared with the median of the one-day window centred on it, so a drift across the history is not mistaken for a
 * daily shape, and ratios (not differences) let the daily peak grow with the topic; a factor is the median over days.
 */
export function dailyShape(y: Float64Array, from: number, to: number, firstBucket: number, bucketsPerHour: number): DailyShape | undefined {
  if (!bucketsPerHour) return undefined;
  // (Plain loops, no closures: this runs for every topic of every pass.)
  const h0 = Math.floor((firstBucket + from) / bucketsPerHour);
  const hours = Math.floor((firstBucket + to - 1) / bucketsPerHour) - h0 + 1;
  if (hours < 48) return undefined;
  const hourly = new Float64Array(hours);
  const n = new Int32Array(hours);
  for (let j = from; j < to; j++) {
    if (Number.isNaN(y[j])) continue;
    const t = Math.floor((firstBucket + j) / bucketsPerHour) - h0;
    hourly[t] += y[j];
    n[t]++;
  }
  for (let t = 0; t < hours; t++) hourly[t] = n[t] ? hourly[t] / n[t] : NaN;

  // ratios of each phase, grouped: phase p's ratios at byPhase[p * days .. p * days + count[p])
  const days = Math.ceil(hours / 24) + 1;
  const byPhase = new Float64Array(24 * days);
  const count = new Int32Array(24);
  const window = new SlidingMedian();
  for (let t = 0; t < 24; t++) if (!Number.isNaN(hourly[t])) window.add(hourly[t]);
  // Window [t - 12, t + 12) around hour t.
  for (let t = 12; t + 12 <= hours; t++) {
    if (t > 12) {
      if (!Number.isNaN(hourly[t - 13])) window.remove(hourly[t - 13]);
      if (!Number.isNaN(hourly[t + 11])) window.add(hourly[t + 11]);
    }
    if (Number.isNaN(hourly[t]) || !window.size) continue;
    const phase = mod(h0 + t, 24);
    byPhase[phase * days + count[phase]++] = hourly[t] / window.median();
  }
  const factors = new Float64Array(24).fill(1);
  for (let phase = 0; phase < 24; phase++) {
    const k = count[phase];
    // The lower median: with an even number of days a single spike day must not pull the factor halfway up.
    if (k) factors[phase] = byPhase.subarray(phase * days, phase * days + k).sort()[(k - 1) >> 1];
  }
  return { factors, samples: count, weekend: weekendFactor(hourly, h0, factors) };
}

/**
 * Weekend level against weekdays, on the hours with the daily shape taken out: a least-squares fit of the log of each
 * day's median on (1, day, is-weekend), so a growing or shrinking topic (the day term) is not mistaken for a weekly
 * rhythm, and medians keep a trend on one day from making one. Days with fewer than 12 hours of data are left out.
 * With about a week of history there is one weekend to learn from, hence only this two-level rhythm.
 */
function weekendFactor(hourly: Float64Array, h0: number, factors: Float64Array): number {
  // Each calendar day's deseasonalized hours, then its median.
  const points: number[][] = [];
  const values = new Float64Array(24);
  let weekends = 0;
  for (let t = 0; t < hourly.length; ) {
    const day = Math.floor((h0 + t) / 24);
    let k = 0;
    for (; t < hourly.length && Math.floor((h0 + t) / 24) === day; t++) {
      if (!Number.isNaN(hourly[t])) values[k++] = hourly[t] / factors[mod(h0 + t, 24)];
    }
    if (k < 12) continue;
    const weekend = isWeekendHour(day * 24) ? 1 : 0;
    weekends += weekend;
    points.push([day, weekend, Math.log(quantileOf(values, k, 0.5))]);
  }
  const weekdays = points.length - weekends;
  if (weekends < 1 || weekdays < 1) return 1;
  if (weekdays < 3) {
    // Too few weekdays to tell a drift from the weekly rhythm: the weekend's mean against the weekdays' mean.
    let a = 0;
    let b = 0;
    for (const [, w, y] of points) if (w) a += y; else b += y;
    return clampWeekend(a / weekends - b / weekdays);
  }
  // Normal equations of y = a + b day + c weekend.
  const t0 = points[0][0];
  const m = [[0, 0, 0], [0, 0, 0], [0, 0, 0]];
  const r = [0, 0, 0];
  for (const [day, w, y] of points) {
    const x = [1, day - t0, w];
    for (let i = 0; i < 3; i++) {
      r[i] += x[i] * y;
      for (let j = 0; j < 3; j++) m[i][j] += x[i] * x[j];
    }
  }
  const c = solve3(m, r)?.[2];
  return c === undefined ? 1 : clampWeekend(c);
}

const clampWeekend = (logRatio: number) => (Math.abs(logRatio) < 1e-6 ? 1 : Math.min(3, Math.max(0.3, Math.exp(logRatio))));

/** Solves a 3x3 linear system by Cramer's rule; undefined when singular. */
function solve3(m: number[][], r: number[]): number[] | undefined {
  const det = (a: number[][]) => a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) + a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
  const d = det(m);
  if (Math.abs(d) < 1e-9) return undefined;
  return [0, 1, 2].map((k) => det(m.map((row, i) => row.map((v, j) => (j === k ? r[i] : v)))) / d);
}
