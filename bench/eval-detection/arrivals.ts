import { binomial, gamma, prng, type Rand } from "./random.ts";

// When each hour's mentions arrive within the hour. Real arrivals are clumped: over hours of at least 100 mentions
// the variance/mean of a topic's 5-minute counts has a median of about 1.8-3.7, and a tail (p90 ~5-35) from hours
// in which one post drew a crowd. An even split (binomial thinning) gives about 1, which makes a partly elapsed hour
// look far more reliable than it is. Here each hour is split over its slots by gamma-distributed weights (a
// gamma-Poisson mixture conditioned on the hour's total), with the concentration chosen per topic so that the
// median variance/mean at the topic's typical hourly volume is the target drawn for it.

/** Arrival slots per hour: production ingestion polls every 5 minutes. */
export const SLOT_MINUTES = 5;
export const SLOTS_PER_HOUR = 60 / SLOT_MINUTES;
/**
 * The range of the expected variance/mean at a topic's typical volume the topics are given (uniform). Realised
 * medians come out ~0.2 above it (hours above the typical volume are more dispersed): 1.8-3.7 per topic.
 */
export const TARGET_RATIO = { min: 1.6, max: 3.3 } as const;
/** Share of hours whose arrivals are much more clumped, and how much (concentration divided by this). */
const CLUMPED_HOURS = 0.1;
const CLUMPED_FACTOR = 10;
/** The statistics consider hours of at least this many mentions. */
export const DISPERSION_MIN_COUNT = 100;

/**
 * Dirichlet-multinomial concentration (sum of the slot weights' shapes) giving an expected variance/mean of `ratio`
 * for an hour of n mentions over K slots: ratio = (1 - 1/K)(n + A)/(1 + A).
 */
export function concentrationFor(ratio: number, n: number, slots = SLOTS_PER_HOUR): number {
  const q = 1 - 1 / slots;
  if (ratio <= q || q * n <= ratio) return 1e6; // so few mentions that any split is Poisson-like
  return Math.min(1e6, Math.max(0.5, (q * n - ratio) / (ratio - q)));
}

/** Splits `count` over `slots` slots by gamma(shape) weights: a multinomial by successive binomials. */
function split(rand: Rand, count: number, shape: number, slots: number): number[] {
  const w = Array.from({ length: slots }, () => gamma(rand, shape));
  const out: number[] = [];
  let left = count;
  let rest = w.reduce((s, x) => s + x, 0);
  for (let j = 0; j < slots; j++) {
    const k = j === slots - 1 ? left : rest > 0 ? binomial(rand, left, w[j] / rest) : 0;
    out.push(k);
    left -= k;
    rest -= w[j];
  }
  return out;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[s.length >> 1] : (s[(s.length >> 1) - 1] + s[s.length >> 1]) / 2) : NaN;
};

/**
 * Mentions per 5-minute slot of each hour of `counts` (each row sums to its hour), deterministic for `seed`.
 * `ratio` (default drawn from TARGET_RATIO) is the median variance/mean aimed at, at the topic's typical volume.
 */
export function overdispersedSlots(counts: readonly number[], seed: number, ratio?: number): number[][] {
  const rand = prng(seed ^ 0x5107);
  const target = ratio ?? TARGET_RATIO.min + rand() * (TARGET_RATIO.max - TARGET_RATIO.min);
  const busy = counts.filter((c) => c >= DISPERSION_MIN_COUNT);
  const typical = median(busy.length ? busy : counts.filter((c) => c > 0)) || 1;
  const a = concentrationFor(target, typical);
  return counts.map((count) => {
    const clumped = rand() < CLUMPED_HOURS;
    return split(rand, count, (clumped ? a / CLUMPED_FACTOR : a) / SLOTS_PER_HOUR, SLOTS_PER_HOUR);
  });
}

/** Sample variance/mean of one hour's slot counts. */
export function dispersionOf(slots: readonly number[]): number {
  const n = slots.length;
  const mean = slots.reduce((s, x) => s + x, 0) / n;
  if (mean <= 0) return NaN;
  const variance = slots.reduce((s, x) => s + (x - mean) ** 2, 0) / (n - 1);
  return variance / mean;
}

/** Median and 90th percentile of variance/mean over the hours of at least DISPERSION_MIN_COUNT mentions; null without any. */
export function dispersionSummary(slots: readonly (readonly number[])[]): { median: number; p90: number; hours: number } | null {
  const ratios = slots.filter((s) => s.reduce((a, x) => a + x, 0) >= DISPERSION_MIN_COUNT).map(dispersionOf).sort((a, b) => a - b);
  if (!ratios.length) return null;
  return { median: median(ratios), p90: ratios[Math.min(ratios.length - 1, Math.floor(0.9 * ratios.length))], hours: ratios.length };
}
