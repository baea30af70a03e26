import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { DEFAULT_EVENT_RULES, decide, type TrendState } from "../../packages/trends/src/engine/decide.ts";
import { HOUR_MS, type CorpusSeries } from "./corpus.ts";
import { binomial, prng } from "./random.ts";

// The ONLY place that calls into the Trendgate detector: when its API changes, only this file changes.
// Tolerates both APIs by feature-checking:
//   old: assessSeries(buckets, config?) and assess(buckets, at, config?)
//   new: assessSeries(buckets, config?, { missing }) and assess(buckets, at, config?, { missing, now })
// Extra arguments are ignored by the old API; whether assess honours `now` (a partial bucket) is tested on a probe.

interface Bucket {
  start: Date;
  count: number;
}
/** The fields the replay reads; decide() reads the rest it needs from the same object. */
type Assessment = Parameters<typeof decide>[1];
interface Options {
  missing?: ReadonlySet<number>;
  now?: Date;
}
interface DetectionModule {
  assessSeries(buckets: Bucket[], config?: unknown, options?: Options): Assessment[];
  assess(buckets: Bucket[], at: Date, config?: unknown, options?: Options): Assessment;
  DEFAULT_DETECTION_CONFIG?: Record<string, unknown>;
}

export interface Alert {
  /** The bucket (series row) the alert is about. */
  row: number;
  /** When a subscriber would have received it: the pass that published trend.detected. */
  atMs: number;
}

export interface Replay {
  alerts: Alert[];
  events: { detected: number; severity: number; velocity: number };
}

export interface TrendgateDetector {
  /** Directory the detection module was loaded from. */
  dir: string;
  /** assess() takes `now` inside the assessed bucket and treats the bucket as partial. */
  supportsNow: boolean;
  /**
   * Closed-bucket replay (one pass at each bucket's end) and, when `live` and supportsNow, the live replay (a pass
   * every 5 minutes on the partial bucket, plus the closed-bucket pass at each hour's end). One call so both share
   * the closed-bucket assessments.
   */
  replay(series: CorpusSeries, live: boolean): { closed: Replay; live?: Replay };
}

const DEFAULT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../packages/trends/src/detection");
const PASS_MINUTES = 5;

/** The series as the store would return it: buckets of an account-wide gap are absent (not 0), as `missing` says. */
const bucketsOf = (series: CorpusSeries): Bucket[] =>
  series.counts
    .map((count, i) => ({ start: new Date(series.startMs + i * HOUR_MS), count }))
    .filter((b) => !series.missing.has(b.start.getTime()));

/** History the detector can look at, in hours (config in buckets or, in the new API, in hours), plus slack for stage. */
function historyHours(mod: DetectionModule): number {
  const cfg = mod.DEFAULT_DETECTION_CONFIG ?? {};
  const hours = Number(cfg.baselineHours ?? cfg.baselineBuckets ?? 168);
  return (Number.isFinite(hours) ? hours : 168) + 48;
}

/** Does assess() read `now`? The same history and partial count, assessed with and without it, must differ. */
function probeNow(mod: DetectionModule): boolean {
  const t0 = Date.UTC(2026, 0, 5);
  const buckets: Bucket[] = Array.from({ length: 200 }, (_, i) => ({ start: new Date(t0 + i * HOUR_MS), count: 100 + (i % 7) }));
  const at = new Date(t0 + 199 * HOUR_MS);
  buckets[199] = { start: at, count: 60 };
  try {
    const partial = mod.assess(buckets, at, undefined, { now: new Date(at.getTime() + 20 * 60_000) });
    const closed = mod.assess(buckets, at);
    return JSON.stringify(partial) !== JSON.stringify(closed);
  } catch {
    return false;
  }
}

class EventLog {
  state: TrendState | undefined;
  replay: Replay = { alerts: [], events: { detected: 0, severity: 0, velocity: 0 } };

  pass(a: Assessment, row: number, nowMs: number): void {
    const d = decide(this.state, a, DEFAULT_EVENT_RULES, new Date(nowMs));
    if (!d) return;
    this.state = d.state;
    if (d.event === "trend.detected") {
      this.replay.events.detected++;
      this.replay.alerts.push({ row, atMs: nowMs });
    } else if (d.event === "trend.severity_changed") this.replay.events.severity++;
    else if (d.event === "trend.velocity_changed") this.replay.events.velocity++;
  }
}

/**
 * Mentions of each 5-minute slice of each hour, arrivals uniform within the hour: successive binomial thinning of the
 * hour's count, seeded by the series (deterministic).
 */
export function slices(series: CorpusSeries, perHour = 60 / PASS_MINUTES): number[][] {
  const rand = prng(series.seed ^ 0x5eed);
  return series.counts.map((count) => {
    const out: number[] = [];
    let left = count;
    for (let j = 0; j < perHour; j++) {
      const k = j === perHour - 1 ? left : binomial(rand, left, 1 / (perHour - j));
      out.push(k);
      left -= k;
    }
    return out;
  });
}

export async function loadTrendgate(dir = process.env.EVAL_DETECTOR_DIR || DEFAULT_DIR): Promise<TrendgateDetector> {
  const resolved = path.resolve(dir);
  const mod = (await import(pathToFileURL(path.join(resolved, "index.ts")).href)) as DetectionModule;
  const supportsNow = probeNow(mod);
  const lookBack = historyHours(mod);

  const assessAll = (series: CorpusSeries): Assessment[] => {
    const assessments = mod.assessSeries(bucketsOf(series), undefined, { missing: series.missing });
    if (assessments.length !== series.counts.length) {
      throw new Error(`${series.name}: assessSeries gave ${assessments.length} assessments for ${series.counts.length} buckets`);
    }
    return assessments;
  };

  const replayLive = (series: CorpusSeries, closed: Assessment[]): Replay => {
    const bySlice = slices(series);
    const buckets = bucketsOf(series);
    const log = new EventLog();
    let first = 0; // first bucket of the look-back window
    let next = 0; // first bucket at or after the assessed one
    for (let row = 0; row < series.counts.length; row++) {
      const startMs = series.startMs + row * HOUR_MS;
      const start = new Date(startMs);
      if (!series.missing.has(startMs)) {
        while (buckets[first].start.getTime() < startMs - lookBack * HOUR_MS) first++;
        while (next < buckets.length && buckets[next].start.getTime() < startMs) next++;
        const history = buckets.slice(first, next);
        let partial = 0;
        for (let j = 0; j < bySlice[row].length - 1; j++) {
          partial += bySlice[row][j];
          const nowMs = startMs + (j + 1) * PASS_MINUTES * 60_000;
          const a = mod.assess([...history, { start, count: partial }], start, undefined, { missing: series.missing, now: new Date(nowMs) });
          log.pass(a, row, nowMs);
        }
      }
      log.pass(closed[row], row, startMs + HOUR_MS);
    }
    return log.replay;
  };

  return {
    dir: resolved,
    supportsNow,
    replay(series, live) {
      const assessments = assessAll(series);
      const log = new EventLog();
      assessments.forEach((a, row) => log.pass(a, row, series.startMs + (row + 1) * HOUR_MS));
      return { closed: log.replay, live: live && supportsNow ? replayLive(series, assessments) : undefined };
    },
  };
}
