import { assess, assessNow, assessSeries, type Assessment, type Bucket } from "../../packages/trends/src/detection/index.ts";
import { decide, DEFAULT_EVENT_RULES, type TrendState } from "../../packages/trends/src/engine/decide.ts";
import { noisy, overdispersed, prng } from "../helpers/synthetic.ts";

// The failure modes the previous detector had on real social volume, one synthetic case each: a series
// with that shape, what a subscriber should see, and where it helps, the control showing the case is not trivial.

const HOUR = 3_600_000;
const T0 = Date.UTC(2024, 0, 1); // a Monday, midnight UTC

const series = (counts: number[], bucketMs = HOUR): Bucket[] => counts.map((count, i) => ({ start: new Date(T0 + i * bucketMs), count }));
/** Buckets with a trend.detected event when decide() is replayed over the assessments (what a subscriber receives). */
const detections = (as: Assessment[]) => {
  let state: TrendState | undefined;
  return as.flatMap((a, i) => {
    const d = decide(state, a, DEFAULT_EVENT_RULES, new Date(a.bucketStart.getTime() + HOUR));
    state = d?.state ?? state;
    return d?.event === "trend.detected" ? [i] : [];
  });
};
/** Per bucket: whether a trend is open after decide() saw it. */
const active = (as: Assessment[]) => {
  let state: TrendState | undefined;
  return as.map((a) => {
    state = decide(state, a, DEFAULT_EVENT_RULES, new Date(a.bucketStart.getTime() + HOUR))?.state ?? state;
    return state?.status === "active";
  });
};
const onsets = (as: Assessment[]) => as.flatMap((a, i) => (a.isTrend && !as[i - 1]?.isTrend ? [i] : []));
const daily = (h: number) => 1 + 0.6 * Math.sin(((h % 24) - 8) / 24 * 2 * Math.PI); // smooth daily rhythm, peak at 14:00

describe("a topic whose normal includes spikes", () => {
  // Near-daily single-hour spikes of 600-1,000 over a baseline of 10-50: the previous detector fired on almost all.
  const days = 14;
  const means = Array.from({ length: days * 24 }, (_, h) => 30 * daily(h));
  const rand = prng(3);
  const spikes: number[] = [];
  for (let d = 0; d < days; d++) if (d % 7 !== 3) spikes.push(d * 24 + 9 + Math.floor(rand() * 8)); // 6 days a week, a different hour each day
  for (const s of spikes) means[s] = 600 + 400 * rand();

  it("stops alerting on its usual spikes once it has three days of history", () => {
    const as = assessSeries(series(noisy(4, means)));
    expect(onsets(as).filter((i) => i >= 72)).toEqual([]);
  });

  it("still alerts on a spike far beyond its usual ones", () => {
    const big = [...means];
    big[12 * 24 + 20] = 8000;
    const as = assessSeries(series(noisy(4, big)));
    expect(onsets(as).filter((i) => i >= 72)).toEqual([12 * 24 + 20]);
  });
});

describe("a small topic spiking every two or three days, at sizes that vary", () => {
  // A ~15/h topic with a one-hour spike of 80-250 every 2-3 days, at any hour: two spikes in its week of history,
  // and the next one larger than the smaller of them. Judged against the second-largest day alone, it fired.
  const hours = 21 * 24;
  const means = Array.from({ length: hours }, (_, h) => 15 * daily(h));
  const spikes = [60, 125, 180, 245, 300, 370, 425];
  const sizes = [120, 90, 160, 110, 150, 100, 140];
  spikes.forEach((h, i) => (means[h] = sizes[i]));
  const at = 470; // next spike: larger than one of the two in its tail history (425: 140, 370: 100), not than the largest
  const withSpike = (size: number) => {
    const m = [...means];
    m[at] = size;
    return assessSeries(series(noisy(7, m)));
  };

  it("a rise to four times its base, within its week's spread, does not alert", () => {
    const as = withSpike(60);
    expect(as[at].severity).toBe("none");
  });

  it("its next spike, ten times its base, alerts though no larger than its largest recent one", () => {
    // Six standard deviations above its week and over four times its usual day's peak: the z-score floor. On real social
    // volume such spikes on a topic that spikes every few days are labelled news as often as not; a plain z-score
    // catches them, and the detector must not lose to it.
    const as = withSpike(145);
    expect(as[at].isTrend).toBe(true);
  });

  it("a spike several times its largest recent one still alerts", () => {
    const as = withSpike(900);
    expect(as[at].isTrend).toBe(true);
  });
});

describe("a topic with a weekly habit: Saturday and Sunday evenings at twice the usual rate", () => {
  // Three weeks of ~150/h with a daily rhythm; every weekend evening (19:00-22:00 UTC) runs at 2x. Usual spikes are
  // learnt on history older than a day, so with a week of history Sunday's evening had only one of last weekend's
  // days behind it to learn from; with a week and a day (the default) it has both.
  const hours = 21 * 24;
  const isWeekendEvening = (h: number) => Math.floor(h / 24) % 7 >= 5 && h % 24 >= 19 && h % 24 < 22;
  const means = Array.from({ length: hours }, (_, h) => 150 * daily(h) * (isWeekendEvening(h) ? 2 : 1));
  const seeds = [1, 2, 3, 4, 5, 6];
  /** Alarms raised on weekend evenings (to 23:00) of the second and third weekends, over the six topics. */
  const habitAlarms = (config?: { baselineHours: number }) =>
    seeds.flatMap((seed) => onsets(assessSeries(series(overdispersed(seed, means, 40)), config)))
      .filter((i) => i >= 8 * 24 && Math.floor(i / 24) % 7 >= 5 && i % 24 >= 19).length;

  it("raises half the alarms a week of history raised (measured 9 against 19 over six topics)", () => {
    const week = habitAlarms({ baselineHours: 168 });
    const defaults = habitAlarms();
    expect(week).toBeGreaterThanOrEqual(15);
    expect(defaults).toBeLessThanOrEqual(week / 2);
  });
});

describe("a young topic rising through its first evening peaks", () => {
  // Born at midnight, ~80/h with a strong daily rhythm (x0.5 to x1.5, peak at 20:00 UTC), overdispersed. Until every
  // hour of day has been seen on two days its level cannot tell the evening rise from news: with the 5 % model error
  // of a known shape, six such topics raised 9 alarms in their first three days; with 15 % until the shape is known, 4.
  const means = Array.from({ length: 72 }, (_, h) => 80 * (1 + 0.5 * Math.cos(((h % 24) - 20) / 24 * 2 * Math.PI)));
  const seeds = [1, 2, 3, 4, 5, 6];

  it("raises few alarms in its first three days", () => {
    const alarms = seeds.flatMap((seed) => onsets(assessSeries(series(overdispersed(seed, means, 25)))));
    expect(alarms.length).toBeLessThanOrEqual(4);
  });

  it("still reports a 4x burst in its second day on every topic", () => {
    const burst = [...means];
    burst[40] *= 4;
    burst[41] *= 2;
    for (const seed of seeds) expect(onsets(assessSeries(series(overdispersed(seed, burst, 25))))).toContain(40);
  });
});

describe("slow ramps, plateaus and bumps", () => {
  const base = (n: number, level: number) => Array.from({ length: n }, (_, h) => level * daily(h));

  it.each([5, 6])("a rise from 58 to 281 over 6 h fires during the rise (seed %i)", (seed) => {
    const start = 10 * 24 + 6;
    const means = base(start + 30, 58);
    for (let i = 0; i < 6; i++) means[start + i] = 58 + ((281 - 58) * (i + 1)) / 6;
    for (let i = start + 6; i < means.length; i++) means[i] = 281;
    // From a day before the rise: on seed 5 the topic's third day holds a 3 h excursion of +59 % at its daily peak,
    // which a 3 h window against the day before reports (the evaluation weighs such alarms against the ramps found).
    const first = onsets(assessSeries(series(overdispersed(seed, means)))).filter((i) => i >= start - 24)[0];
    expect(first).toBeGreaterThanOrEqual(start);
    expect(first).toBeLessThan(start + 6);
  });

  it.each([1, 2, 3])("a plateau 1.5x the usual level fires within 6 h (seed %i)", (seed) => {
    const start = 10 * 24 + 3;
    const means = base(start + 24, 200).map((m, i) => (i >= start ? m * 1.5 : m));
    const fired = onsets(assessSeries(series(noisy(seed, means)))).filter((i) => i >= 96);
    expect(fired[0]).toBeGreaterThanOrEqual(start);
    expect(fired[0]).toBeLessThan(start + 6);
  });

  it.each([7, 8, 9])("a 2x bump for 4 hours is announced once: one trend open through it (seed %i)", (seed) => {
    const start = 9 * 24 + 17;
    const means = base(start + 24, 150).map((m, i) => (i >= start && i < start + 4 ? m * 2 : m));
    const as = assessSeries(series(overdispersed(seed, means, 40)));
    // A trend detected up to 6 h before the bump is still open when it comes (seed 8: an alarm 4 h before), and the
    // bump continues it rather than opening a second one.
    const fired = detections(as).filter((i) => i >= start - 6);
    expect(fired).toHaveLength(1);
    expect(fired[0] - start).toBeLessThan(4);
    expect(active(as).slice(Math.max(start, fired[0]), start + 4).every(Boolean)).toBe(true);
  });
});

describe("account-wide outages are missing data, not silence", () => {
  const gap = [8 * 24 + 9, 8 * 24 + 10, 8 * 24 + 11]; // 3 h during the morning rise
  const counts = noisy(8, Array.from({ length: 10 * 24 }, (_, h) => 120 * daily(h)));
  for (const g of gap) counts[g] = 0;
  const missing = new Set(gap.map((g) => T0 + g * HOUR));

  it("neither the gap nor the recovery after it alerts", () => {
    const as = assessSeries(series(counts), undefined, { missing });
    expect(onsets(as).filter((i) => i >= 48)).toEqual([]);
    expect(as[gap[0]].isTrend).toBe(false);
  });

  it("control: taken as silence, the recovery after the gap looks like a burst", () => {
    expect(onsets(assessSeries(series(counts))).filter((i) => i > gap[2]).length).toBeGreaterThan(0);
  });

  it("a burst right after the gap still fires", () => {
    const burst = [...counts];
    burst[gap[2] + 1] *= 4;
    expect(onsets(assessSeries(series(burst), undefined, { missing })).filter((i) => i >= 48)).toEqual([gap[2] + 1]);
  });
});

describe("settings in time: any bucket width behaves", () => {
  const FIVE_MIN = 300_000;
  const perHour = 12;
  // A low-volume topic: 20 mentions an hour (under 2 per 5 minutes) with a daily rhythm, 9 days of 5-minute buckets.
  // A floor of 20 mentions per bucket (what the setting meant before) would silence it at this width whatever it did.
  const hours = 9 * 24;
  const means = Array.from({ length: hours * perHour }, (_, i) => (20 * daily(Math.floor(i / perHour))) / perHour);

  it("5-minute buckets: a quiet low-volume topic never fires, and a one-hour burst to 5x does within the hour", () => {
    const quiet = assessSeries(series(noisy(9, means), FIVE_MIN), { bucketSeconds: 300 });
    expect(onsets(quiet).filter((i) => i >= 48 * perHour)).toEqual([]);
    const start = (8 * 24 + 15) * perHour;
    const burst = means.map((m, i) => (i >= start && i < start + perHour ? m * 5 : m));
    const fired = onsets(assessSeries(series(noisy(9, burst), FIVE_MIN), { bucketSeconds: 300 })).filter((i) => i >= 48 * perHour);
    expect(fired.length).toBeGreaterThanOrEqual(1);
    expect(fired[0]).toBeGreaterThanOrEqual(start);
    expect(fired[0]).toBeLessThan(start + perHour);
  });
});

describe("the bucket in progress", () => {
  const history = noisy(10, Array.from({ length: 8 * 24 }, (_, h) => 100 * daily(h)));
  const start = T0 + history.length * HOUR; // 00:00 UTC of day 8
  /** y for assessNow: count + 1 per closed bucket, then the bucket in progress with `partial` mentions after `minutes`. */
  const live = (partial: number, minutes: number) => {
    const y = Float64Array.from([...history.map((c) => c + 1), partial + minutes / 60]);
    return assessNow(y, T0 / HOUR, minutes / 60);
  };

  it("a burst to 4x at :05 is reported by :35 of the same hour, a 10x one by :15 (documented latency at ~50/h)", () => {
    const rate = 100 * daily(history.length); // the expected hourly rate now (48/h at this hour)
    const burstCount = (factor: number, minutes: number) => Math.round((rate * 5) / 60 + (factor * rate * (minutes - 5)) / 60);
    const at35 = live(burstCount(4, 35), 35);
    expect(at35).toMatchObject({ isTrend: true, bucketStart: new Date(start) });
    expect(at35.observed).toBeCloseTo(35 / 60, 9);
    expect(live(burstCount(10, 15), 15)).toMatchObject({ isTrend: true, bucketStart: new Date(start) });
    // A marginal partial hour (the 4x burst ten minutes in: a low score) waits for more of the hour.
    const at15 = live(burstCount(4, 15), 15);
    expect(at15.isTrend || at15.bucketStart.getTime() === start).toBe(false);
  });

  it("a normal partial hour does not fire, and the pass then acts on the last closed bucket", () => {
    const normal = live(Math.round((100 * daily(history.length) * 30) / 60), 30);
    expect(normal.isTrend).toBe(false);
    expect(normal.bucketStart.getTime()).toBe(start - HOUR);
    expect(normal.observed).toBe(1);
  });

  it("the first minutes of a bucket are not scored, whatever arrived", () => {
    const early = assess(series([...history, 400]), new Date(start), undefined, { now: new Date(start + 2 * 60_000) });
    expect(early.anomalyScore).toBe(0);
    expect(early.isTrend).toBe(false);
  });
});

describe("fewer, better events", () => {
  const at = (minutes: number) => new Date(T0 + minutes * 60_000);
  const trend = (severity: Assessment["severity"], velocity = 100): Assessment => ({
    bucketStart: at(0), current: 200, observed: 1, baseline: 100, velocity, acceleration: 0, anomalyScore: 8,
    severity, stage: "rising", isTrend: severity !== "none",
  });
  const run = (steps: [number, Assessment][]) => {
    let state: TrendState | undefined;
    const events: string[] = [];
    for (const [minute, a] of steps) {
      const d = decide(state, a, DEFAULT_EVENT_RULES, at(minute));
      if (d?.event) events.push(`${minute}:${d.event}:${d.state.severity}`);
      state = d?.state ?? state;
    }
    return events;
  };

  it("a severity that flickers publishes no change; one that holds for 30 minutes does", () => {
    const flicker = run([[0, trend("medium")], [10, trend("high")], [20, trend("medium")], [30, trend("high")], [40, trend("medium")], [50, trend("high")]]);
    expect(flicker).toEqual(["0:trend.detected:medium"]);
    const held = run([[0, trend("medium")], [10, trend("high")], [25, trend("high")], [40, trend("high")], [41, trend("high")]]);
    expect(held).toEqual(["0:trend.detected:medium", "40:trend.severity_changed:high"]);
  });

  it("the hour in progress can raise a trend's severity but not lower it: only closed hours lower it", () => {
    // A partial hour is judged as if the rest of it fell short, so it reads lower than the closed hours around it.
    // Before: passes alternating between the two published high -> medium -> high within a burst.
    const partial = (severity: Assessment["severity"]) => ({ ...trend(severity), observed: 0.4 });
    const lowered = run([[0, trend("high")], [10, partial("medium")], [25, partial("medium")], [45, partial("medium")], [60, trend("high")]]);
    expect(lowered).toEqual(["0:trend.detected:high"]);
    const raised = run([[0, trend("medium")], [10, partial("high")], [25, partial("high")], [45, partial("high")]]);
    expect(raised).toEqual(["0:trend.detected:medium", "45:trend.severity_changed:high"]);
    const closedLower = run([[0, trend("high")], [60, trend("medium")], [120, trend("medium")]]);
    expect(closedLower).toEqual(["0:trend.detected:high", "120:trend.severity_changed:medium"]);
  });

  it("velocity events: a 50 % move, at most one per trend per 3 hours, however much the velocity moves", () => {
    const steps: [number, Assessment][] = [[0, trend("medium", 100)]];
    for (let m = 5; m <= 400; m += 5) steps.push([m, trend("medium", 100 + m * 10)]);
    const velocity = run(steps).filter((e) => e.includes("velocity"));
    expect(velocity.map((e) => Number(e.split(":")[0]))).toEqual([5, 185, 365]);
  });
});
