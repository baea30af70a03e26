import { between, intBetween, negativeBinomial, pick, prng, type Rand } from "./random.ts";
import { overdispersedSlots } from "./arrivals.ts";
import type { ReplayTopic } from "./production.ts";

// The labelled synthetic corpus: hourly mention counts of ~60 topics of one account over six weeks, built from the
// situations the detector has to get right. Labelled (a trend a subscriber wants to hear about): bursts, slow ramps,
// 1.5x plateaus, 2x bumps, level shifts. Not labelled (normal for the topic): near-daily spikes, daily and weekly
// rhythm, overdispersed noise, slow drift, and the account-wide outage (every topic at 0 for 2 h, then back).

export const HOUR_MS = 3_600_000;
/** A Monday, 00:00 UTC: corpus hour h is hour-of-day h % 24, weekday floor(h / 24) % 7 (0 = Monday). */
export const CORPUS_START_MS = Date.UTC(2026, 8, 28);
/** Six weeks. */
export const CORPUS_HOURS = 6 * 168;
/** The account-wide gap: no mention of any topic was collected in these corpus hours. */
export const OUTAGE = { from: 30 * 24 + 14, hours: 2 } as const; // a Wednesday, 14:00-16:00 UTC

export type AnomalyKind = "burst" | "ramp" | "plateau" | "bump" | "level-shift";
export type SeriesKind =
  | "clean"
  | "ramp"
  | "plateau"
  | "bump"
  | "level-shift"
  | "spiky-normal"
  | "drift"
  | "seasonal"
  | "overdispersed"
  | "low-volume"
  | "high-volume"
  | "short-history"
  | "quiet";

export interface LabelledAnomaly {
  kind: AnomalyKind;
  /** Row (bucket index within the series) where the anomaly starts. */
  row: number;
  startMs: number;
}

export interface CorpusSeries {
  name: string;
  kind: SeriesKind;
  /** Start of row 0. */
  startMs: number;
  /** Hourly counts, row i covers [startMs + i h, startMs + (i + 1) h). */
  counts: number[];
  anomalies: LabelledAnomaly[];
  /** Bucket starts (ms) of the account-wide gap, as the detector's `missing` option takes them. */
  missing: ReadonlySet<number>;
  /** Seed for anything derived from this series later (arrival times in live replay). */
  seed: number;
}

interface AnomalySpec {
  kind: AnomalyKind;
  /** Peak multiplier of the expected count. */
  factor: number;
  /** Hours at the peak level (plateau, bump). */
  hours?: number;
}

interface SeriesSpec {
  kind: SeriesKind;
  level: number;
  /** Daily amplitude: the expected count swings by x(1 +- dailyAmp) around the level, peaking at peakHour UTC. */
  dailyAmp: number;
  peakHour: number;
  /** Weekend factor is 1 - weekendDip. */
  weekendDip: number;
  /** Negative binomial size (Infinity = Poisson); smaller = more overdispersed. */
  size: number;
  anomalies: AnomalySpec[];
  spikes?: boolean;
  /** Hours of +1 %/h organic growth (then the topic stays at the new level). */
  driftHours?: number;
  /** Short history only: the account-wide outage falls inside the day or two before the anomaly. */
  overOutage?: boolean;
}

/** Multiplier that anomaly `a` applies t hours after its start (1 = none). */
function anomalyFactor(a: AnomalySpec, t: number): number {
  if (t < 0) return 1;
  const extra = a.factor - 1;
  switch (a.kind) {
    case "burst": {
      // Rises within an hour, then decays over ~6 h.
      const shape = [0.55, 1, 0.6, 0.35, 0.2, 0.1, 0.05];
      return t < shape.length ? 1 + extra * shape[t] : 1;
    }
    case "ramp": {
      // Linear rise over 6 h (58 -> 281 for factor 4.8), 4 h at the peak, linear fall over 6 h.
      if (t < 6) return 1 + (extra * (t + 1)) / 6;
      if (t < 10) return a.factor;
      if (t < 16) return 1 + (extra * (16 - t)) / 7;
      return 1;
    }
    case "plateau":
    case "bump":
      return t < (a.hours ?? 4) ? a.factor : 1;
    case "level-shift":
      return a.factor;
  }
}

/** How long an anomaly visibly lasts (placement keeps this clear of the series' end and of other anomalies). */
function anomalyHours(a: AnomalySpec): number {
  return { burst: 7, ramp: 16, plateau: a.hours ?? 12, bump: a.hours ?? 4, "level-shift": 48 }[a.kind];
}

const burst = (factor: number): AnomalySpec => ({ kind: "burst", factor });
const ramp = (factor = 4.8): AnomalySpec => ({ kind: "ramp", factor });
const plateau = (hours: number): AnomalySpec => ({ kind: "plateau", factor: 1.5, hours });
const bump = (hours: number): AnomalySpec => ({ kind: "bump", factor: 2, hours });
const shift = (factor: number): AnomalySpec => ({ kind: "level-shift", factor });

/** The catalogue: each entry one topic. Levels and shapes vary so no single threshold fits all. */
function catalogue(rand: Rand): SeriesSpec[] {
  const base = (kind: SeriesKind, level: number, anomalies: AnomalySpec[], extra: Partial<SeriesSpec> = {}): SeriesSpec => ({
    kind,
    level,
    dailyAmp: between(rand, 0.2, 0.5),
    peakHour: intBetween(rand, 10, 20),
    weekendDip: between(rand, 0, 0.3),
    size: between(rand, 15, 40),
    anomalies,
    ...extra,
  });
  const specs: SeriesSpec[] = [];
  // Clear bursts at ordinary volumes.
  for (const [level, f] of [[40, 5], [80, 4], [120, 3.5], [200, 3], [60, 6], [150, 4]] as const) specs.push(base("clean", level, [burst(f)]));
  // Slow ramps (58 -> 281 over 6 h and similar); one topic ramps twice.
  for (const level of [58, 45, 90, 70]) specs.push(base("ramp", level, [ramp(between(rand, 3.5, 5))]));
  specs.push(base("ramp", 60, [ramp(4.8), ramp(4)]));
  // Plateaus at 1.5x the usual level for half a day to a day.
  for (const [level, h] of [[150, 12], [300, 24], [80, 18], [500, 16], [220, 20]] as const) specs.push(base("plateau", level, [plateau(h)]));
  // 2x for a few hours.
  for (const [level, h] of [[100, 4], [250, 3], [60, 5], [400, 4], [150, 3]] as const) specs.push(base("bump", level, [bump(h)]));
  // Level shifts that last.
  for (const [level, f] of [[50, 3], [120, 2], [300, 2], [80, 2.5]] as const) specs.push(base("level-shift", level, [shift(f)]));
  // Normal includes near-daily spikes of 600-1,000 over a base of 10-50; half of these topics also have a real trend.
  for (const [level, anomalies] of [[12, []], [30, []], [50, []], [25, [ramp(5)]], [40, [shift(3)]], [20, [plateau(24)]]] as const) {
    specs.push(base("spiky-normal", level, [...anomalies], { spikes: true }));
  }
  // Slow organic growth at +1 %/h for 3-7 days.
  for (const [level, hours] of [[40, 72], [100, 120], [200, 168], [60, 96]] as const) specs.push(base("drift", level, [], { driftHours: hours }));
  // Strong daily and weekly rhythm.
  for (const [level, anomalies] of [[100, []], [300, []], [80, [burst(4)]], [200, [bump(4)]]] as const) {
    specs.push(base("seasonal", level, [...anomalies], { dailyAmp: between(rand, 0.7, 0.9), weekendDip: between(rand, 0.4, 0.6) }));
  }
  // Heavily overdispersed counts (variance up to mean + mean^2 / 3).
  for (const [level, anomalies] of [[60, []], [150, []], [100, [burst(5)]], [80, [shift(2.5)]]] as const) {
    specs.push(base("overdispersed", level, [...anomalies], { size: between(rand, 3, 8) }));
  }
  // Low volume (~5-30/h): bursts must reach the floor to count.
  for (const [level, anomalies] of [[5, []], [10, []], [15, [burst(8)]], [8, [burst(12)]], [25, [bump(5)]]] as const) {
    specs.push(base("low-volume", level, [...anomalies]));
  }
  // High volume (1,000+/h): Poisson noise is relatively tiny, overdispersion is not.
  for (const [level, anomalies] of [[1200, []], [3000, []], [1500, [plateau(16)]], [2000, [burst(2.5)]]] as const) {
    specs.push(base("high-volume", level, [...anomalies], { size: between(rand, 60, 150) }));
  }
  // Short history: the topic appears a day or two before its anomaly.
  for (const a of [burst(5), ramp(4.5), bump(4), shift(2.5), plateau(18)]) specs.push(base("short-history", intBetween(rand, 40, 150), [a]));
  // ... and one whose short history contains the outage.
  specs.push(base("short-history", 70, [burst(4)], { overOutage: true }));
  // Nothing happens: pure false-alarm controls.
  for (const level of [30, 90, 250]) specs.push(base("quiet", level, []));
  return specs;
}

const inOutageZone = (hour: number, margin: number) => hour > OUTAGE.from - margin && hour < OUTAGE.from + OUTAGE.hours + margin;

/** Anomaly start hours (corpus time) for one series: past the warm-up, clear of the outage, the end and each other. */
function place(rand: Rand, spec: SeriesSpec, from: number, to: number): number[] {
  const starts: number[] = [];
  for (const a of spec.anomalies) {
    for (let attempt = 0; ; attempt++) {
      if (attempt > 10_000) throw new Error(`cannot place ${a.kind} in ${spec.kind}`);
      const earliest = from + Math.max(96, Math.ceil(0.2 * (to - from)));
      const h = intBetween(rand, earliest, to - anomalyHours(a) - 60);
      // The outage must stay outside the anomaly's scoring window (up to +-50 h) and its visible span.
      if (inOutageZone(h, 80) || inOutageZone(h + anomalyHours(a), 30)) continue;
      if (starts.some((s) => Math.abs(s - h) < 150)) continue;
      starts.push(h);
      break;
    }
  }
  return starts;
}

export function buildCorpus(seed = 20261124): CorpusSeries[] {
  const rand = prng(seed);
  const specs = catalogue(rand);
  const missing = new Set(Array.from({ length: OUTAGE.hours }, (_, i) => CORPUS_START_MS + (OUTAGE.from + i) * HOUR_MS));
  const counters = new Map<SeriesKind, number>();
  return specs.map((spec, index) => {
    const seriesSeed = (seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0;
    const r = prng(seriesSeed);
    let from: number;
    let to: number;
    let starts: number[];
    if (spec.kind === "short-history") {
      // History starts 24-48 h before the anomaly; the short series stays clear of the outage.
      let h: number;
      if (spec.overOutage) h = OUTAGE.from + OUTAGE.hours + intBetween(r, 18, 24);
      else do h = intBetween(r, 200, CORPUS_HOURS - 96);
      while (inOutageZone(h, 120));
      starts = [h];
      from = h - intBetween(r, spec.overOutage ? 40 : 24, 48);
      to = h + intBetween(r, 72, 96);
    } else {
      // Three to six weeks of history, all ending at the corpus' end.
      from = pick(r, [0, 0, 168, 336, 504]);
      to = CORPUS_HOURS;
      starts = place(r, spec, from, to);
    }
    const spikeHour = intBetween(r, 8, 20);
    const driftStart = spec.driftHours ? intBetween(r, from + 200, to - spec.driftHours - 24) : 0;
    const counts: number[] = [];
    for (let h = from; h < to; h++) {
      if (h >= OUTAGE.from && h < OUTAGE.from + OUTAGE.hours) {
        counts.push(0);
        continue;
      }
      const hod = h % 24;
      const weekend = Math.floor(h / 24) % 7 >= 5;
      let mean = spec.level * (1 + spec.dailyAmp * Math.cos((2 * Math.PI * (hod - spec.peakHour)) / 24));
      if (weekend) mean *= 1 - spec.weekendDip;
      if (spec.driftHours) mean *= Math.pow(1.01, Math.min(Math.max(h - driftStart, 0), spec.driftHours));
      spec.anomalies.forEach((a, i) => (mean *= anomalyFactor(a, h - starts[i])));
      let count = negativeBinomial(r, mean, spec.size);
      // A near-daily spike (6 days in 7), around the same time of day: this topic's normal.
      if (spec.spikes && hod === spikeHour + (((Math.floor(h / 24) * 7 + 3) % 5) - 2) && r() < 0.86) {
        count += intBetween(r, 600, 1000);
      }
      counts.push(count);
    }
    const n = (counters.get(spec.kind) ?? 0) + 1;
    counters.set(spec.kind, n);
    const startMs = CORPUS_START_MS + from * HOUR_MS;
    return {
      name: `${spec.kind}-${n}`,
      kind: spec.kind,
      startMs,
      counts,
      anomalies: spec.anomalies
        .map((a, i) => ({ kind: a.kind, row: starts[i] - from, startMs: CORPUS_START_MS + starts[i] * HOUR_MS }))
        .sort((x, y) => x.row - y.row),
      missing,
      seed: seriesSeed,
    };
  });
}

/** The series as the production replay takes it: its hours split into 5-minute arrivals (overdispersed, seeded). */
export function replayTopicOf(series: CorpusSeries): ReplayTopic {
  return { startMs: series.startMs, counts: series.counts, slots: overdispersedSlots(series.counts, series.seed), missing: series.missing, category: series.kind };
}
