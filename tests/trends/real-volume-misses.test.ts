import { assessSeries, type Assessment, type Bucket } from "../../packages/trends/src/detection/index.ts";
import { decide, DEFAULT_EVENT_RULES, type TrendState } from "../../packages/trends/src/engine/decide.ts";
import { overdispersed, prng } from "../helpers/synthetic.ts";

// The three kinds of labelled burst the detector missed on real social volume (tweets per hour about a company), each
// as a small synthetic topic built from how the miss looked: what a trend_detected subscriber receives.

const HOUR = 3_600_000;
const T0 = Date.UTC(2024, 0, 1); // a Monday, midnight UTC

const series = (counts: number[]): Bucket[] => counts.map((count, i) => ({ start: new Date(T0 + i * HOUR), count }));
/** Every event decide() publishes over closed hourly buckets, as "hour type". */
const events = (as: Assessment[]) => {
  let state: TrendState | undefined;
  return as.flatMap((a, i) => {
    const d = decide(state, a, DEFAULT_EVENT_RULES, new Date(a.bucketStart.getTime() + HOUR));
    state = d?.state ?? state;
    return d?.event ? [`${i} ${d.event}`] : [];
  });
};
const detectedAt = (as: Assessment[]) => events(as).filter((e) => e.endsWith("trend.detected")).map((e) => Number(e.split(" ")[0]));
const daily = (h: number) => 1 + 0.5 * Math.sin(((h % 24) - 8) / 24 * 2 * Math.PI); // peak at 14:00 UTC

/** Hourly means at `base` with a daily rhythm, and one-hour spikes at hour -> size. */
function topic(hours: number, base: number, spikes: Record<number, number>): number[] {
  return Array.from({ length: hours }, (_, h) => spikes[h] ?? base * daily(h));
}

describe("a young topic (its first week, before the model has eight days of history)", () => {
  // The term starts being tracked on day 0; now and then it has an hour of a few hundred (a quote, a link shared).
  // The burst: an hour of ~1,200 over ~10/h on day 5.6, or ~1,000 over ~30/h on day 6.7.
  it.each<{ base: number; at: number; size: number; earlier: Record<number, number> }>([
    { base: 10, at: 5 * 24 + 14, size: 1214, earlier: { 98: 265, 106: 730, 120: 630 } },
    { base: 30, at: 6 * 24 + 16, size: 1007, earlier: { 60: 420, 110: 800, 130: 600 } },
    { base: 3, at: 5 * 24 + 12, size: 34, earlier: {} },
  ])("a burst of $size over ~$base/h in its hour $at (days 5-7) is announced", ({ base, at, size, earlier }) => {
    const counts = overdispersed(11, topic(at + 12, base, { ...earlier, [at]: size }));
    expect(detectedAt(assessSeries(series(counts)))).toContain(at);
  });
});

describe("a topic that spikes now and then", () => {
  /** On a share of the days, one spike at a random daytime hour, of lo to hi mentions. */
  const dailySpikes = (seed: number, days: number, lo: number, hi: number, share = 1) => {
    const rand = prng(seed);
    const spikes: Record<number, number> = {};
    for (let d = 0; d < days; d++) if (rand() >= 1 - share) spikes[d * 24 + 8 + Math.floor(rand() * 12)] = lo + Math.round(rand() * (hi - lo));
    return spikes;
  };

  it("a spike five times its base and several times its usual daily peak is announced (~730 over ~130/h)", () => {
    // Eight days of ~130/h whose largest hour each day is 48-308; then an hour of 732.
    const at = 8 * 24 + 15;
    const counts = overdispersed(12, topic(at + 12, 110, { ...dailySpikes(5, 8, 150, 308), [at]: 732 }));
    expect(detectedAt(assessSeries(series(counts)))).toContain(at);
  });

  it("a spike twice its largest recent one, on a topic spiking 5-10x on about half its days, is announced", () => {
    // ~30/h with an hour of 150-300 on about half of eight days: the usual-spike tail learnt them, and excused ~620.
    const at = 8 * 24 + 15;
    const counts = overdispersed(12, topic(at + 12, 30, { ...dailySpikes(5, 8, 150, 300, 0.5), [at]: 732 }));
    expect(detectedAt(assessSeries(series(counts)))).toContain(at);
  });

  it("control: its usual spikes stay quiet", () => {
    // The same topic without the big one: each day's spike is at most 2.4x its base and within its week's spread.
    const counts = overdispersed(12, topic(12 * 24, 110, dailySpikes(5, 12, 150, 308)));
    expect(detectedAt(assessSeries(series(counts))).filter((h) => h >= 3 * 24)).toEqual([]);
  });
});

describe("a weak trend open the evening before", () => {
  // ~30/h; a marginal rise at 21:00 one evening opens a weak trend; the next evening brings the real burst (74-81/h
  // for three hours). Kept open for 24 h, the weak trend swallowed it: the burst arrived as a velocity change.
  const day = 9;
  const weak = day * 24 + 21;
  const burst = (day + 1) * 24 + 19;
  const means = topic((day + 2) * 24, 30, {});
  means[weak] = 80;
  means[burst] = 81;
  means[burst + 1] = 77;
  means[burst + 2] = 74;
  const counts = overdispersed(14, means, 60);

  it("the weak rise is a trend of its own (the premise)", () => {
    expect(detectedAt(assessSeries(series(counts)))).toContain(weak);
  });

  it("the burst the next evening is announced as a new trend, once", () => {
    const found = detectedAt(assessSeries(series(counts)));
    expect(found.filter((h) => h >= burst && h < burst + 6)).toHaveLength(1);
  });
});

describe("a young topic's first Monday", () => {
  // A company's volume: ~65/h on weekdays, twice that in US working hours (13:00-22:00 UTC), a quarter of it at
  // weekends. Tracked from a Thursday evening, the topic has seen one weekday and one weekend by Monday: too little to
  // fit a drift and a weekly rhythm apart, and taken as no rhythm, Monday's return to its weekday level looked like
  // news against the weekend's level: a false alarm on the first Monday of every newly tracked term.
  const thursdayEvening = 3 * 24 + 21; // T0 is a Monday
  const weekday = (h: number) => (h % 24 >= 13 && h % 24 < 22 ? 130 : 65);
  const means = Array.from({ length: 6 * 24 + 2 }, (_, i) => {
    const h = thursdayEvening + i;
    return weekday(h) * (Math.floor(h / 24) % 7 >= 5 ? 0.25 : 1);
  });
  const monday = 7 * 24 - thursdayEvening; // Monday 00:00 as an index of the series
  const detected = (seed: number, m = means) => {
    const start = T0 + thursdayEvening * HOUR;
    return detectedAt(assessSeries(overdispersed(seed, m, 40).map((count, i) => ({ start: new Date(start + i * HOUR), count }))));
  };

  it("Monday's return to the weekday level raises no trend on most topics (ten draws)", () => {
    // Without the weekend learnt from one weekday, every draw alerted in Monday's first hours.
    const alarmed = [21, 22, 23, 24, 25, 26, 27, 28, 29, 30].filter((seed) => detected(seed).some((i) => i >= monday && i < monday + 12));
    expect(alarmed.length).toBeLessThanOrEqual(3);
  });

  it("control: a real burst that Monday is still announced", () => {
    const burstAt = monday + 15;
    expect(detected(21, means.map((m, i) => (i === burstAt ? 600 : m)))).toContain(burstAt);
  });
});
