import { assessNow, FitCache, resolveConfig, type DetectionConfig } from "@trendgate/trends";

// A detection pass reuses a topic's fitted model while its history is unchanged (FitCache, kept compact). That must
// never change what a pass finds: every assessment with the cache equals the one fitted afresh, on hits and misses,
// for spiky, seasonal, young and outage-broken histories, hourly and 15-minute buckets, and a late signal in a
// closed bucket is fitted again.

const HOURLY: DetectionConfig = { bucketSeconds: 3600, baselineHours: 192, minMentionsPerHour: 20, dailySeasonality: true };

/** A deterministic series of `n` buckets (count + 1, NaN = outage) of one of several shapes. */
function series(kind: number, n: number, perHour: number, seed: number): Float64Array {
  let s = seed >>> 0;
  const rand = () => ((s = Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0) / 2 ** 32;
  return Float64Array.from({ length: n }, (_, i) => {
    const hour = Math.floor(i / perHour);
    if (kind === 3 && hour >= 100 && hour < 102) return NaN; // an account-wide outage
    const daily = 1 + 0.6 * Math.sin((2 * Math.PI * (hour % 24)) / 24);
    let mean = (kind === 1 ? 15 : 120) * daily / perHour;
    if (kind === 2 && rand() < 0.04) mean *= 6; // a topic spiking now and then
    if (kind === 4 && hour % 70 === 60) mean *= 30; // a rare spike far beyond the usual: the z-score floor's case
    if (i > n - 4 * perHour && kind !== 1) mean *= 1 + (n - i) / perHour; // a rise at the end
    return Math.round(mean * (0.7 + 0.6 * rand())) + 1;
  });
}

function compare(cfg: DetectionConfig, kind: number, hours: number) {
  const c = resolveConfig(cfg);
  const perHour = 3600 / c.bucketSeconds;
  const full = series(kind, hours * perHour, perHour, 1000 + kind);
  const cache = new FitCache(100);
  let compared = 0;
  for (let end = 3 * perHour; end <= full.length; end += Math.max(1, Math.floor(perHour / 2))) {
    const span = Math.min(end, c.lookbackBuckets + 1);
    const first = 500_000 + end - span;
    for (const observed of [0.1, 0.5, 0.97, 1]) {
      const y = full.slice(end - span, end);
      if (observed < 1 && !Number.isNaN(y[y.length - 1])) y[y.length - 1] = Math.floor((y[y.length - 1] - 1) * observed) + observed;
      const fresh = assessNow(y, first, observed, cfg, 1);
      expect(assessNow(y, first, observed, cfg, 1, { cache, id: "topic" })).toEqual(fresh);
      compared++;
    }
  }
  return compared;
}

test.each([
  ["a steady", 0], ["a small", 1], ["a spiky", 2], ["an outage-broken", 3], ["a rarely but hugely spiking", 4],
])("%s topic over ten days, hourly buckets: every assessment with the cache equals the one fitted afresh", (_name, kind) => {
  expect(compare(HOURLY, kind, 240)).toBe(952); // 238 passes x 4 fractions: one fit, three reuses each
});

test("15-minute buckets, and a topic from its first hours (no model, then a young one): the same", () => {
  expect(compare({ ...HOURLY, bucketSeconds: 900 }, 2, 60)).toBe(460);
  expect(compare(HOURLY, 0, 30)).toBe(112);
});

test("a late signal in a closed bucket, or another first bucket, is fitted again; the least recently used topics go first", () => {
  const cfg = resolveConfig(HOURLY);
  const y = series(2, 193, 1, 7);
  const cache = new FitCache(2);
  const before = assessNow(y, 1000, 0.5, HOURLY, 1, { cache, id: "a" });
  const late = Float64Array.from(y);
  late[185] += 400; // mentions observed in a closed hour, stored after it closed
  const after = assessNow(late, 1000, 0.5, HOURLY, 1, { cache, id: "a" });
  expect(after).toEqual(assessNow(late, 1000, 0.5, HOURLY, 1));
  expect(after.baseline === before.baseline && after.anomalyScore === before.anomalyScore).toBe(false);
  expect(assessNow(y, 1001, 0.5, HOURLY, 1, { cache, id: "a" })).toEqual(assessNow(y, 1001, 0.5, HOURLY, 1));

  for (const id of ["b", "c"]) cache.model(id, y, 1000, y.length - 1, cfg);
  expect(cache.size).toBe(2);
});
