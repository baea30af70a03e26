/** Converts a MAD into a standard-deviation-equivalent for normally distributed noise. */
export const MAD_TO_SIGMA = 1.4826;

/**
 * Median of a non-empty list (mean of the two middle values for even lengths). Sorted as a Float64Array: a native
 * numeric sort, several times faster than Array#sort with a comparator (detection calls this for every rolling window).
 */
export function median(values: readonly number[]): number {
  const sorted = Float64Array.from(values).sort();
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Median absolute deviation around `center` (the median by default). */
export function mad(values: readonly number[], center = median(values)): number {
  return median(values.map((v) => Math.abs(v - center)));
}

/** Modulo that stays non-negative for negative bucket numbers (dates before 1970). */
export function mod(n: number, m: number): number {
  return ((n % m) + m) % m;
}
