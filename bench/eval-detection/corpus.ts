import { between, intBetween, negativeBinomial, pick, prng, type Rand } from "./random.ts";
import { overdispersedSlots } from "./arrivals.ts";
import type { ReplayTopic } from "./production.ts";

// The labelled synthetic corpus: hourly mention counts of ~60 topics of one account over six weeks, built from the
// situations the detector has to get right. Labelled (a trend a subscriber wants to hear about): bursts, slow ramps,
// 1.5x plateaus, 2x bumps, level shifts. Not labelled (normal for the topic): near-daily spikes, daily and weekly
// rhythm, overdispersed noise, slow drift, and the account-wide outage (every topic at 0 for 2 h, then back).
// Then what real data showed the first corpus lacked. Labelled: slow ramps on a high-volume topic during its usual
// daily rise (450 -> 1,560/h over 7 h), a burst with a second wave within 24 h (one trend), a 4x surge on a topic with
// a spiky history. Normal: weekend-evening bumps of 1.5-2.3x, low-volume rises hovering at the 20/h floor, one-hour
// spikes every 1-3 days on a small topic, growing topics in their first week. Then what real labelled volume (NAB
// realTweets, real-volume/) showed: labelled, a one-hour spike several times a spiky topic's usual ones, and a burst in
// a topic's first week; a small topic's recurring spikes sized as real small topics' daily peaks are.

export const HOUR_MS = 3_600_000;
/** A Monday, 00:00 UTC: corpus hour h is hour-of-day h % 24, weekday floor(h / 24) % 7 (0 = Monday). */
export const CORPUS_START_MS = Date.UTC(2026, 8, 28);
/** Six weeks. */
export const CORPUS_HOURS = 6 * 168;
/** The account-wide gap: no mention of any topic was collected in these corpus hours. */
export const OUTAGE = { from: 30 * 24 + 14, hours: 2 } as const; // a Wednesday, 14:00-16:00 UTC

export type AnomalyKind = "burst" | "ramp" | "plateau" | "bump" | "level-shift" | "daily-ramp" | "second-wave" | "surge" | "spike";
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
  | "quiet"
  | "daily-rise-ramp"
  | "weekend-evening"
  | "floor-hover"
  | "recurring-spike"
  | "second-wave"
  | "first-week"
  | "spiky-surge"
  | "spike-beyond"
  | "young-burst";

export interface LabelledAnomaly {
  kind: AnomalyKind;
  /** Row (bucket index within the series) where the anomaly starts. */
  row: number;
  startMs: number;
  /** How long it visibly lasts, in hours (a level shift: 48). */
  hours: number;
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
  /** second-wave: hours from the first burst to the second, and the second's peak multiplier. */
  gap?: number;
  secondFactor?: number;
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
  /** Anomalies start at this hour of day (UTC). */
  startHourOfDay?: number;
  /** Normal: most Saturday and Sunday evenings, 2-4 h from 18-20:00 UTC at 1.5-2.3x. */
  weekendEvenings?: boolean;
  /** Normal: every 1-2 days a 3-8 h rise of 1.7-2.2x (a ~10/h topic then hovers at the 20/h floor). */
  floorRises?: boolean;
  /** Normal: a one-hour spike of min-max times the level in extra mentions every 1-3 days, at any hour. */
  recurringSpikes?: { min: number; max: number };
  /** Irregular one-hour spikes of 3-5x on about half the days (a spiky history). */
  irregularSpikes?: boolean;
  /** A new topic: the series is its first `hours`, growing by `perHour` (a factor) from its first hour. */
  firstWeek?: { hours: number; perHour: number };
}

/** Multiplier that anomaly `a` applies t hours after its start (1 = none). */
function anomalyFactor(a: AnomalySpec, t: number): number {
  if (t < 0) return 1;
  const extra = a.factor - 1;
  switch (a.kind) {
    case "burst":
      return 1 + extra * burstShape(t);
    case "second-wave":
      return 1 + extra * burstShape(t) + ((a.secondFactor ?? a.factor) - 1) * burstShape(t - (a.gap ?? 12));
    case "daily-ramp":
      // Linear rise over 7 h, 3 h at the peak, linear fall over 6 h.
      if (t < 7) return 1 + (extra * (t + 1)) / 7;
      if (t < 10) return a.factor;
      if (t < 16) return 1 + (extra * (16 - t)) / 7;
      return 1;
    case "surge":
      // Up within two hours, 8 h at the peak, down over 3 h.
      if (t < 2) return 1 + extra * (t + 1) * 0.5;
      if (t < 10) return a.factor;
      if (t < 13) return 1 + (extra * (13 - t)) / 4;
      return 1;
    case "ramp": {
      // Linear rise over 6 h (58 -> 281 for factor 4.8), 4 h at the peak, linear fall over 6 h.
      if (t < 6) return 1 + (extra * (t + 1)) / 6;
      if (t < 10) return a.factor;
      if (t < 16) return 1 + (extra * (16 - t)) / 7;
      return 1;
    }
    case "spike":
      return t === 0 ? a.factor : 1;
    case "plateau":
    case "bump":
      return t < (a.hours ?? 4) ? a.factor : 1;
    case "level-shift":
      return a.factor;
  }
}

/** A burst: rises within an hour, then decays over ~6 h. */
function burstShape(t: number): number {
  const shape = [0.55, 1, 0.6, 0.35, 0.2, 0.1, 0.05];
  return t >= 0 && t < shape.length ? shape[t] : 0;
}

/** How long an anomaly visibly lasts (placement keeps this clear of the series' end and of other anomalies). */
function anomalyHours(a: AnomalySpec): number {
  const hours: Record<AnomalyKind, number> = {
    burst: 7, ramp: 16, plateau: a.hours ?? 12, bump: a.hours ?? 4, "level-shift": 48, "daily-ramp": 16, "second-wave": (a.gap ?? 12) + 7, surge: 13, spike: 1,
  };
  return hours[a.kind];
}

const burst = (factor: number): AnomalySpec => ({ kind: "burst", factor });
const ramp = (factor = 4.8): AnomalySpec => ({ kind: "ramp", factor });
const plateau = (hours: number): AnomalySpec => ({ kind: "plateau", factor: 1.5, hours });
const bump = (hours: number): AnomalySpec => ({ kind: "bump", factor: 2, hours });
const shift = (factor: number): AnomalySpec => ({ kind: "level-shift", factor });
const spike = (factor: number): AnomalySpec => ({ kind: "spike", factor });

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

  // Slow ramps on a high-volume topic during its usual daily rise: 450 -> 1,560/h over 7 h from the daily trough
  // (07:00), where the usual rise reaches ~700/h.
  for (const level of [643, 900]) {
    specs.push(base("daily-rise-ramp", level, [{ kind: "daily-ramp", factor: 2.25 }], { dailyAmp: 0.3, peakHour: 19, size: between(rand, 60, 120), startHourOfDay: 7 }));
  }
  // Weekend evenings at 1.5-2.3x: this topic's normal.
  for (const level of [60, 150, 400]) specs.push(base("weekend-evening", level, [], { weekendEvenings: true }));
  // A ~10/h topic rising to the 20/h floor for hours every day or two: normal.
  for (const level of [9, 11, 13]) specs.push(base("floor-hover", level, [], { floorRises: true }));
  // A small topic with a one-hour spike every 1-3 days: normal. Sized as real small topics' daily peaks run (NAB
  // realTweets, CRM, FB, IBM: a day's largest hour is 2.2-4.5x its median hour, p25-p90): 2.5-5x the level. Spikes of
  // 5-17x every few days (80-250 over 15-30, as this corpus had them) come on 4-9 % of those topics' days, and are
  // what people label there.
  for (const level of [15, 22, 30]) specs.push(base("recurring-spike", level, [], { recurringSpikes: { min: 1.5, max: 4 } }));
  // A burst and its second wave 6-20 h later: one trend.
  for (const [level, f] of [[50, 5], [120, 4], [250, 3.5]] as const) {
    specs.push(base("second-wave", level, [{ kind: "second-wave", factor: f, secondFactor: 1 + (f - 1) * between(rand, 0.6, 1), gap: intBetween(rand, 6, 20) }]));
  }
  // New topics growing through their first week (x4 to x17 over it); one also has a real burst.
  for (const [level, perHour, anomalies] of [[25, 1.01, []], [40, 1.008, []], [15, 1.017, []], [30, 1.012, [burst(5)]]] as const) {
    specs.push(base("first-week", level, [...anomalies], { firstWeek: { hours: intBetween(rand, 168, 200), perHour } }));
  }
  // A spiky history (3-5x for an hour on about half the days), then a 4x surge for hours: a real trend.
  for (const level of [40, 100, 200]) specs.push(base("spiky-surge", level, [{ kind: "surge", factor: 4 }], { irregularSpikes: true }));
  // What real volume labels on spiky topics: a one-hour spike several times the topic's own usual spikes (NAB
  // realTweets: labelled spikes run 2-38x the median of the week's daily peaks, median ~5x; unlabelled days' peaks
  // exceed twice it on 13 % of days). Over 3-5x spikes on half the days, and over near-daily spikes of 600-1,000.
  for (const [level, f] of [[20, 16], [35, 12], [60, 18]] as const) specs.push(base("spike-beyond", level, [spike(f)], { irregularSpikes: true }));
  specs.push(base("spike-beyond", 25, [spike(120)], { spikes: true }));
  // A topic's first week: a burst 4-6 days after its first mention (real ones: 18-68x its median hour).
  for (const [level, f] of [[10, 25], [30, 12], [60, 6]] as const) {
    specs.push(base("young-burst", level, [burst(f)], { firstWeek: { hours: intBetween(rand, 168, 200), perHour: 1.005 } }));
  }
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
      let h = intBetween(rand, earliest, to - anomalyHours(a) - 60);
      if (spec.startHourOfDay !== undefined) h += (spec.startHourOfDay - (h % 24) + 24) % 24;
      // The outage must stay outside the anomaly's scoring window (up to +-50 h) and its visible span.
      if (inOutageZone(h, 80) || inOutageZone(h + anomalyHours(a), 30)) continue;
      if (starts.some((s) => Math.abs(s - h) < 150)) continue;
      starts.push(h);
      break;
    }
  }
  return starts;
}

/**
 * The recurring normal episodes of a series (weekend evenings, rises to the floor, recurring or irregular spikes), by
 * corpus hour: a multiplier of the expected count, or extra mentions. Draws nothing for a series without any.
 */
function normalEpisodes(r: Rand, spec: SeriesSpec, from: number, to: number) {
  const factor = new Map<number, number>();
  const extra = new Map<number, number>();
  const span = (start: number, hours: number, f: number) => {
    for (let h = start; h < Math.min(start + hours, to); h++) factor.set(h, (factor.get(h) ?? 1) * f);
  };
  if (spec.weekendEvenings) {
    for (let day = Math.floor(from / 24); day * 24 < to; day++) {
      if (day % 7 < 5) continue;
      const start = day * 24 + intBetween(r, 18, 20);
      const hours = intBetween(r, 2, 4);
      const f = between(r, 1.5, 2.3);
      if (r() < 0.85) span(start, hours, f);
    }
  }
  if (spec.floorRises) {
    for (let h = from + intBetween(r, 12, 36); h < to; h += intBetween(r, 24, 48)) span(h, intBetween(r, 3, 8), between(r, 1.7, 2.2));
  }
  if (spec.recurringSpikes) {
    for (let h = from + intBetween(r, 0, 48); h < to; h += intBetween(r, 24, 72)) extra.set(h, Math.round(spec.level * between(r, spec.recurringSpikes.min, spec.recurringSpikes.max)));
  }
  if (spec.irregularSpikes) {
    for (let day = Math.ceil(from / 24); day * 24 < to; day++) {
      const h = day * 24 + intBetween(r, 0, 23);
      const f = between(r, 3, 5);
      if (r() < 0.5) span(h, 1, f);
    }
  }
  return { factor, extra };
}

/**
 * The corpus' seed. EVAL_SEED draws another corpus from the same catalogue (other noise, placements and episodes): a
 * detector change that helps one draw only is fitted to that draw's noise.
 */
export const CORPUS_SEED = Number(process.env.EVAL_SEED) || 20261124;

export function buildCorpus(seed = CORPUS_SEED): CorpusSeries[] {
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
    } else if (spec.firstWeek) {
      // The topic's first week or so, clear of the outage; an anomaly in its second half.
      do from = intBetween(r, 250, CORPUS_HOURS - spec.firstWeek.hours);
      while (inOutageZone(from, 0) || inOutageZone(from + spec.firstWeek.hours, spec.firstWeek.hours));
      to = from + spec.firstWeek.hours;
      starts = spec.anomalies.map(() => from + intBetween(r, 96, spec.firstWeek!.hours - 40));
    } else {
      // Three to six weeks of history, all ending at the corpus' end.
      from = pick(r, [0, 0, 168, 336, 504]);
      to = CORPUS_HOURS;
      starts = place(r, spec, from, to);
    }
    const spikeHour = intBetween(r, 8, 20);
    const driftStart = spec.driftHours ? intBetween(r, from + 200, to - spec.driftHours - 24) : 0;
    const episodes = normalEpisodes(r, spec, from, to);
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
      if (spec.firstWeek) mean *= Math.pow(spec.firstWeek.perHour, h - from);
      mean *= episodes.factor.get(h) ?? 1;
      spec.anomalies.forEach((a, i) => (mean *= anomalyFactor(a, h - starts[i])));
      let count = negativeBinomial(r, mean, spec.size);
      // A near-daily spike (6 days in 7), around the same time of day: this topic's normal.
      if (spec.spikes && hod === spikeHour + (((Math.floor(h / 24) * 7 + 3) % 5) - 2) && r() < 0.86) {
        count += intBetween(r, 600, 1000);
      }
      count += episodes.extra.get(h) ?? 0;
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
        .map((a, i) => ({ kind: a.kind, row: starts[i] - from, startMs: CORPUS_START_MS + starts[i] * HOUR_MS, hours: anomalyHours(a) }))
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
