import {
  assess,
  assessSeries,
  bucketize,
  DEFAULT_DETECTION_CONFIG,
  MIN_HISTORY_HOURS,
  severityFor,
  type Assessment,
  type Bucket,
  type Severity,
} from "../../packages/trends/src/detection/index.ts";
import { noisy, prng } from "../helpers/synthetic.ts";

// ---- synthetic series ------------------------------------------------------------------------

const HOUR = 3_600_000;
const T0 = Date.UTC(2024, 0, 1); // midnight UTC, so bucket i is hour-of-day i % 24
const WEEK = 24 * 7;

const hourly = (counts: number[]): Bucket[] => counts.map((count, i) => ({ start: new Date(T0 + i * HOUR), count }));
const fill = (n: number, value: number) => Array<number>(n).fill(value);
const firing = (as: Assessment[]) => as.flatMap((a, i) => (a.isTrend ? [i] : []));
/** Buckets where the severity goes from none to something: what a subscriber gets notified about. */
const onsets = (as: Assessment[]) => as.flatMap((a, i) => (a.isTrend && !as[i - 1]?.isTrend ? [i] : []));
const RANK: Severity[] = ["none", "low", "medium", "high", "critical"];

/** A daily shape: quiet base with a sharp afternoon peak (x6 at 14:00 UTC). */
const daily = (i: number) => 50 + 250 * Math.exp(-((((i % 24) - 14) / 2) ** 2));

// ---- tests -----------------------------------------------------------------------------------

describe("bucketize", () => {
  it("sums points into aligned buckets, fills gaps with 0 and sorts", () => {
    const at = (h: number, m: number) => new Date(T0 + h * HOUR + m * 60_000);
    const buckets = bucketize(
      [
        { at: at(3, 20), count: 4 },
        { at: at(0, 10), count: 2 },
        { at: at(0, 50), count: 5 },
      ],
      3600,
    );
    expect(buckets).toEqual([
      { start: new Date(T0), count: 7 },
      { start: new Date(T0 + HOUR), count: 0 },
      { start: new Date(T0 + 2 * HOUR), count: 0 },
      { start: new Date(T0 + 3 * HOUR), count: 4 },
    ]);
    expect(bucketize([], 3600)).toEqual([]);
  });
});

describe("flat series", () => {
  it("never fires on a perfectly flat series (MAD = 0 is guarded)", () => {
    const as = assessSeries(hourly(fill(3 * WEEK, 100)));
    expect(firing(as)).toEqual([]);
    for (const a of as) {
      expect(a.anomalyScore).toBe(0);
      expect(a.baseline).toBeCloseTo(100, 9);
    }
  });

  it.each([1, 2, 3, 4, 5])("never fires on a flat series with Poisson noise (seed %i)", (seed) => {
    expect(firing(assessSeries(hourly(noisy(seed, fill(2 * WEEK, 100)))))).toEqual([]);
    expect(firing(assessSeries(hourly(noisy(seed, fill(2 * WEEK, 30)))))).toEqual([]);
  });

  it("never fires on a flat series with small uniform noise (+-5 %)", () => {
    const rand = prng(42);
    const counts = Array.from({ length: 2 * WEEK }, () => Math.round(200 * (0.95 + 0.1 * rand())));
    expect(firing(assessSeries(hourly(counts)))).toEqual([]);
  });
});

describe("bursts", () => {
  const burstAt = WEEK + 30;

  it("a step fires, first at exactly the step bucket, and notifies once", () => {
    const counts = noisy(7, [...fill(burstAt, 100), ...fill(48, 400)]);
    const as = assessSeries(hourly(counts));
    expect(firing(as)[0]).toBe(burstAt);
    expect(onsets(as)).toEqual([burstAt]);
    expect(as[burstAt].stage).toBe("emerging");
  });

  it("a short burst fires at the burst bucket only once, then goes quiet", () => {
    const counts = noisy(8, [...fill(burstAt, 100), 450, 500, 380, ...fill(48, 100)]);
    const as = assessSeries(hourly(counts));
    expect(onsets(as)).toEqual([burstAt]);
    expect(firing(as).every((i) => i >= burstAt && i < burstAt + 3)).toBe(true);
  });

  it("assess(at) matches assessSeries and ignores buckets after `at`", () => {
    const counts = noisy(9, [...fill(burstAt, 100), ...fill(5, 400), ...fill(24, 100)]);
    const series = hourly(counts);
    const all = assessSeries(series);
    for (const i of [0, 3, MIN_HISTORY_HOURS, 50, burstAt - 1, burstAt, burstAt + 1, burstAt + 4, counts.length - 1]) {
      const at = new Date(T0 + i * HOUR + 17 * 60_000); // any instant inside bucket i
      expect(assess(series, at)).toEqual(all[i]);
      expect(assess(series.slice(0, i + 1), at)).toEqual(all[i]);
    }
  });

  it("a topic too young for a model is judged as a new topic: its first hour never fires, a jump from what it carried does", () => {
    const as = assessSeries(hourly([100, 100, 100, 5000, 100, 100]));
    expect(onsets(as)).toEqual([3]);
    expect(as[3]).toMatchObject({ severity: "critical", baseline: 100, velocity: 4900 });
    expect(as.filter((_, i) => i !== 3).map((a) => a.anomalyScore)).toEqual(fill(5, 0));
    // A term that starts being tracked arrives at its usual volume: its first hour is not a trend, nor is staying there.
    expect(firing(assessSeries(hourly([5000, 5100, 4900, 5000, 5050, 5000])))).toEqual([]);
    // A quiet new topic jumping to 200/h within its first hours is a trend (medium: 3x Poisson noise around 50/h).
    const quiet = assessSeries(hourly([12, 20, 15, 210, 230]));
    expect(quiet[3]).toMatchObject({ severity: "medium", isTrend: true });
    expect(quiet[2].isTrend).toBe(false);
  });

  it("copes with history shorter than baselineHours", () => {
    const as = assessSeries(hourly(noisy(10, [...fill(30, 100), 400])));
    expect(DEFAULT_DETECTION_CONFIG.baselineHours).toBeGreaterThan(30);
    expect(onsets(as)).toEqual([30]);
  });
});

describe("slow drift", () => {
  it.each([1, 2, 3])("an exponential +1 %/bucket drift never fires (seed %i)", (seed) => {
    const counts = noisy(seed, Array.from({ length: 400 }, (_, i) => 100 * 1.01 ** i));
    expect(firing(assessSeries(hourly(counts)))).toEqual([]);
  });

  it("a linear drift (+1 % of the start per bucket) never fires, even noise-free at high volume", () => {
    expect(firing(assessSeries(hourly(Array.from({ length: 400 }, (_, i) => 100 + i))))).toEqual([]);
    const big = Array.from({ length: 1200 }, (_, i) => Math.round(1000 * 1.01 ** i)); // to ~150 000/hour
    expect(firing(assessSeries(hourly(big)))).toEqual([]);
  });

  it("a burst on top of the drift still fires at the burst bucket", () => {
    const means = Array.from({ length: 400 }, (_, i) => 100 * 1.01 ** i);
    means[300] *= 3;
    expect(onsets(assessSeries(hourly(noisy(4, means))))).toEqual([300]);
  });
});

describe("daily seasonality", () => {
  const DAYS = 10;
  const seasonal = (seed: number) => noisy(seed, Array.from({ length: DAYS * 24 }, (_, i) => daily(i)));

  it.each([1, 2, 3])("does not fire at the daily peaks once two days of history exist (seed %i)", (seed) => {
    const as = assessSeries(hourly(seasonal(seed)));
    expect(firing(as).filter((i) => i >= 48)).toEqual([]);
  });

  it("control: without seasonality the same daily peaks do fire", () => {
    const as = assessSeries(hourly(seasonal(1)), { dailySeasonality: false });
    expect(firing(as).filter((i) => i >= 48 && i % 24 === 14).length).toBeGreaterThan(0);
  });

  it("a real burst on top of the daily pattern fires, at the peak hour and at a quiet hour", () => {
    const peakBurst = 8 * 24 + 14;
    const quietBurst = 9 * 24 + 3;
    const counts = seasonal(5);
    counts[peakBurst] *= 3;
    counts[quietBurst] += 250;
    const as = assessSeries(hourly(counts));
    expect(onsets(as).filter((i) => i >= 48)).toEqual([peakBurst, quietBurst]);
  });

  it("a growing topic's growing daily peak does not fire", () => {
    const counts = noisy(6, Array.from({ length: DAYS * 24 }, (_, i) => daily(i) * 1.005 ** i));
    expect(firing(assessSeries(hourly(counts))).filter((i) => i >= 48)).toEqual([]);
  });
});

describe("gaps", () => {
  const dense = noisy(11, [...fill(WEEK, 100), 500, ...fill(10, 100)]);
  const missing = new Set([5, 6, 7, 40, 100, WEEK + 3]);
  dense.forEach((_, i) => missing.has(i) && (dense[i] = 0));
  const sparse = hourly(dense).filter((_, i) => !missing.has(i));

  it("counts missing buckets as zero: same result as explicit zeros", () => {
    expect(assessSeries(sparse)).toEqual(assessSeries(hourly(dense)));
    expect(assessSeries(sparse)).toHaveLength(dense.length);
  });

  it("assessing a missing bucket is not a crash and reports count 0", () => {
    const a = assess(sparse, new Date(T0 + (WEEK + 3) * HOUR));
    expect(a.current).toBe(0);
    expect(a.bucketStart).toEqual(new Date(T0 + (WEEK + 3) * HOUR));
    expect(a.isTrend).toBe(false);
    expect(assess([], new Date(T0)).isTrend).toBe(false);
  });
});

describe("minimum-volume floor", () => {
  it("a jump from 0 to 3 does not fire", () => {
    const as = assessSeries(hourly([...fill(48, 0), 3]));
    expect(as[48].severity).toBe("none");
    expect(firing(as)).toEqual([]);
  });

  it("a highly anomalous bucket below minVolume never fires, and fires once the floor is lowered", () => {
    const counts = [...fill(WEEK, 0), 15];
    const last = assessSeries(hourly(counts)).at(-1)!;
    expect(last.anomalyScore).toBeGreaterThan(10); // "high" on the score alone
    expect(last.severity).toBe("none");
    expect(assessSeries(hourly(counts), { minMentionsPerHour: 10 }).at(-1)!.isTrend).toBe(true);
  });
});

describe("severity, velocity and acceleration", () => {
  const history = fill(2 * WEEK, 100);

  it("maps the score to severity with the documented thresholds and the volume floor", () => {
    const cases: [number, Severity][] = [
      [-50, "none"], [4.49, "none"], [4.5, "low"], [6.99, "low"], [7, "medium"],
      [9.99, "medium"], [10, "high"], [19.99, "high"], [20, "critical"], [500, "critical"],
    ];
    for (const [score, severity] of cases) expect(severityFor(score, 100, 20)).toBe(severity);
    expect(severityFor(50, 19, 20)).toBe("none");
  });

  it("severity grows with burst size and reaches high for a large burst", () => {
    const severities = [120, 170, 195, 240, 420, 1000].map((c) => assessSeries(hourly([...history, c])).at(-1)!.severity);
    expect(severities).toEqual(["none", "low", "medium", "high", "critical", "critical"]);
    for (const seed of [1, 2, 3]) {
      const last = assessSeries(hourly([...noisy(seed, history), 300])).at(-1)!;
      expect(RANK.indexOf(last.severity)).toBeGreaterThanOrEqual(RANK.indexOf("high"));
    }
  });

  it("velocity is mentions per hour above baseline, whatever the bucket width", () => {
    expect(assessSeries(hourly([...history, 250])).at(-1)).toMatchObject({ baseline: 100, velocity: 150 });
    const quarter = (counts: number[]) => counts.map((count, i) => ({ start: new Date(T0 + i * 900_000), count }));
    const a = assessSeries(quarter([...fill(4 * 48, 25), 75]), { bucketSeconds: 900 }).at(-1)!;
    expect(a).toMatchObject({ baseline: 25, velocity: 200 }); // 50 extra per 15 minutes = 200 per hour
  });

  it("velocity and acceleration are positive while growing, acceleration negative when it turns", () => {
    const as = assessSeries(hourly([...history, 180, 300, 500, 650, 450, 300, 60]));
    const [g1, g2, g3, g4, turn] = as.slice(history.length);
    for (const a of [g1, g2, g3, g4]) {
      expect(a.velocity).toBeGreaterThan(0);
      expect(a.acceleration).toBeGreaterThan(0);
    }
    expect(turn.velocity).toBeGreaterThan(0);
    expect(turn.acceleration).toBeLessThan(0);
    expect(as.at(-1)!.velocity).toBeLessThan(0); // below its baseline
  });
});

describe("stage lifecycle", () => {
  const burst = [180, 300, 500, 650, 450, 300, 200, 150, 120, ...fill(12, 100)];
  const compress = (stages: string[]) => stages.filter((s, i) => s !== stages[i - 1]);

  it("goes dormant -> emerging -> rising -> peaking -> cooling -> dormant on a burst that decays", () => {
    const as = assessSeries(hourly([...fill(WEEK, 100), ...burst]));
    expect(compress(as.map((a) => a.stage))).toEqual(["dormant", "emerging", "rising", "peaking", "cooling", "dormant"]);
    expect(as[WEEK].stage).toBe("emerging");
  });

  it.each([1, 2, 3])("keeps that order with noise (seed %i)", (seed) => {
    const as = assessSeries(hourly(noisy(seed, [...fill(WEEK, 100), ...burst])));
    const stages = compress(as.slice(WEEK - 1).map((a) => a.stage));
    expect(stages[0]).toBe("dormant");
    expect(["emerging", "rising"]).toContain(stages[1]);
    const peak = stages.indexOf("peaking");
    const cooling = stages.indexOf("cooling");
    expect(peak).toBeGreaterThan(1);
    expect(cooling).toBeGreaterThan(peak);
    expect(stages.slice(1, peak).every((s) => s === "emerging" || s === "rising")).toBe(true);
    expect(stages.at(-1)).toBe("dormant");
  });
});

describe("config", () => {
  it("rejects an invalid config", () => {
    expect(() => assessSeries(hourly([1]), { bucketSeconds: 0 })).toThrow(RangeError);
    expect(() => assessSeries(hourly([1]), { baselineHours: -1 })).toThrow(RangeError);
    expect(() => assess(hourly([1]), new Date(NaN))).toThrow(RangeError);
  });
});
