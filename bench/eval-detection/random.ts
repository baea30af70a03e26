// Deterministic samplers for the synthetic corpus: the same seed always gives the same corpus.

export type Rand = () => number;

/** mulberry32, as in tests/trends/detection.test.ts. */
export function prng(seed: number): Rand {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function gauss(rand: Rand): number {
  return Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
}

export function poisson(rand: Rand, mean: number): number {
  if (mean <= 0) return 0;
  if (mean > 100) return Math.max(0, Math.round(mean + gauss(rand) * Math.sqrt(mean)));
  const limit = Math.exp(-mean);
  let k = 0;
  for (let p = rand(); p > limit; p *= rand()) k++;
  return k;
}

/** Gamma(shape, 1) by Marsaglia-Tsang (shape < 1 boosted). */
export function gamma(rand: Rand, shape: number): number {
  if (shape < 1) return gamma(rand, shape + 1) * Math.pow(1 - rand(), 1 / shape);
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    let x: number;
    let v: number;
    do {
      x = gauss(rand);
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const u = 1 - rand();
    if (Math.log(u) < 0.5 * x * x + d - d * v + d * Math.log(v)) return d * v;
  }
}

/** Negative binomial as a gamma-Poisson mixture: mean `mean`, variance mean + mean^2 / size (size Infinity = Poisson). */
export function negativeBinomial(rand: Rand, mean: number, size: number): number {
  if (!Number.isFinite(size)) return poisson(rand, mean);
  return poisson(rand, (mean * gamma(rand, size)) / size);
}

/** Binomial(n, p): exact for small n, normal approximation for large n (the arrival thinning needs no more). */
export function binomial(rand: Rand, n: number, p: number): number {
  if (n <= 0 || p <= 0) return 0;
  if (p >= 1) return n;
  if (n > 200) return Math.min(n, Math.max(0, Math.round(n * p + gauss(rand) * Math.sqrt(n * p * (1 - p)))));
  let k = 0;
  for (let i = 0; i < n; i++) if (rand() < p) k++;
  return k;
}

export const pick = <T>(rand: Rand, items: readonly T[]): T => items[Math.floor(rand() * items.length)];
export const between = (rand: Rand, lo: number, hi: number): number => lo + rand() * (hi - lo);
export const intBetween = (rand: Rand, lo: number, hi: number): number => Math.floor(between(rand, lo, hi + 1));
