// Synthetic mention counts for the detection tests: deterministic (the same seed always gives the same series).
import { prng } from "../../bench/eval-detection/random.ts";

export { prng };

/** Poisson-distributed count: the natural noise of a count of mentions (normal approximation above 500). */
export function poisson(rand: () => number, mean: number): number {
  if (mean > 500) {
    const gauss = Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
    return Math.max(0, Math.round(mean + gauss * Math.sqrt(mean)));
  }
  const limit = Math.exp(-mean);
  let k = 0;
  for (let p = rand(); p > limit; p *= rand()) k++;
  return k;
}

/** Poisson counts around the given means. */
export const noisy = (seed: number, means: number[]) => {
  const rand = prng(seed);
  return means.map((m) => poisson(rand, m));
};

/** Gamma(shape k, scale 1/k) by Marsaglia-Tsang: mean 1, the mixing variable of a negative binomial. */
function gammaUnit(rand: () => number, k: number): number {
  const d = k - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    const z = Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
    const v = (1 + c * z) ** 3;
    if (v > 0 && Math.log(1 - rand()) < 0.5 * z * z + d - d * v + d * Math.log(v)) return (d * v) / k;
  }
}

/** Negative binomial counts (variance mean + mean^2 / size): real mention counts are burstier than Poisson. */
export const overdispersed = (seed: number, means: number[], size = 20) => {
  const rand = prng(seed);
  return means.map((m) => poisson(rand, m * gammaUnit(rand, size)));
};
