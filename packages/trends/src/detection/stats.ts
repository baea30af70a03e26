/** Converts a MAD into a standard-deviation-equivalent for normally distributed noise. */
export const MAD_TO_SIGMA = 1.4826;

/**
 * Median of a non-empty list (mean of the two middle values for even lengths). Sorted as a Float64Array: a native
 * numeric sort, several times faster than Array#sort with a comparator (detection calls this for every window).
 */
export function median(values: ArrayLike<number>): number {
  return quantileSorted(Float64Array.from(values).sort(), 0.5);
}

/** The q-quantile of an ascending, non-empty array, interpolated linearly between neighbours. */
export function quantileSorted(sorted: Float64Array, q: number): number {
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.min(sorted.length - 1, lo + 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

let buffer = new Float64Array(512);

/**
 * The q-quantile (linear interpolation, as quantileSorted) of values[0..n), without sorting: quickselect on a copy
 * in a buffer reused by every call, O(n). The fit needs a dozen medians per topic per pass.
 */
export function quantileOf(values: Float64Array, n: number, q: number): number {
  if (buffer.length < n) buffer = new Float64Array(n * 2);
  const a = buffer;
  a.set(values.subarray(0, n));
  const pos = (n - 1) * q;
  const lo = Math.floor(pos);
  const low = select(a, n, lo);
  if (lo === pos || lo + 1 >= n) return low;
  // After select, everything right of lo is >= a[lo]: the next order statistic is their minimum.
  let next = Infinity;
  for (let i = lo + 1; i < n; i++) if (a[i] < next) next = a[i];
  return low + (next - low) * (pos - lo);
}

/** Puts the k-th smallest of a[0..n) at a[k] (smaller left, larger right) and returns it. */
function select(a: Float64Array, n: number, k: number): number {
  let left = 0;
  let right = n - 1;
  while (right > left) {
    const mid = (left + right) >> 1;
    // median of three as the pivot, moved to a[right]
    if (a[mid] < a[left]) swap(a, mid, left);
    if (a[right] < a[left]) swap(a, right, left);
    if (a[mid] < a[right]) swap(a, mid, right);
    const pivot = a[right];
    let store = left;
    for (let i = left; i < right; i++) if (a[i] < pivot) swap(a, i, store++);
    swap(a, store, right);
    if (store === k) return a[k];
    if (store < k) left = store + 1;
    else right = store - 1;
  }
  return a[k];
}

function swap(a: Float64Array, i: number, j: number) {
  const t = a[i];
  a[i] = a[j];
  a[j] = t;
}

/** Modulo that stays non-negative for negative bucket numbers (dates before 1970). */
export function mod(n: number, m: number): number {
  return ((n % m) + m) % m;
}

/**
 * Median of a sliding window: add() the newest value, remove() the oldest, median() at any time; O(window) per
 * step instead of a sort per window.
 */
export class SlidingMedian {
  private values = new Float64Array(16);
  private n = 0;

  add(v: number) {
    if (this.n === this.values.length) {
      const grown = new Float64Array(this.n * 2);
      grown.set(this.values);
      this.values = grown;
    }
    const i = this.search(v);
    const values = this.values;
    for (let j = this.n; j > i; j--) values[j] = values[j - 1]; // a loop beats copyWithin's call on short windows
    values[i] = v;
    this.n++;
  }

  remove(v: number) {
    const i = this.search(v);
    if (i < this.n && this.values[i] === v) {
      const values = this.values;
      for (let j = i; j < this.n - 1; j++) values[j] = values[j + 1];
      this.n--;
    }
  }

  get size() {
    return this.n;
  }

  median(): number {
    const mid = this.n >> 1;
    return this.n % 2 ? this.values[mid] : (this.values[mid - 1] + this.values[mid]) / 2;
  }

  private search(v: number) {
    let lo = 0;
    let hi = this.n;
    while (lo < hi) {
      const m = (lo + hi) >> 1;
      if (this.values[m] < v) lo = m + 1;
      else hi = m;
    }
    return lo;
  }
}
