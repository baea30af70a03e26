/** Redis stream ids are `<ms>-<seq>`; `<ms>` alone means `<ms>-0` (as XRANGE reads it). */
export const STREAM_ID = /^\d{1,20}(-\d{1,20})?$/;

/** Orders two stream ids numerically (they are not safely comparable as strings: `10-0` > `9-0`). */
export function compareStreamIds(a: string, b: string): number {
  const [am, as = "0"] = a.split("-");
  const [bm, bs = "0"] = b.split("-");
  const ms = cmp(am, bm);
  return ms !== 0 ? ms : cmp(as, bs);
}

// Digit strings without leading zeros compare by length, then lexically; avoids Number precision limits.
const cmp = (x: string, y: string) => {
  x = x.replace(/^0+(?=\d)/, "");
  y = y.replace(/^0+(?=\d)/, "");
  return x.length !== y.length ? x.length - y.length : x < y ? -1 : x > y ? 1 : 0;
};
