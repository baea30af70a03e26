import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { ProductionCode } from "./code.ts";
import { replayTopic, type ReplayedEvent, type ReplayTopic, type Settings } from "./production.ts";
import { zscoreReplay } from "./zscore.ts";
import { normalisedScore, scoreSeries, type Window } from "./scoring.ts";

// Real social volume: NAB's realTweets series (tweets per 5 minutes mentioning a company, about two months each, with
// labelled anomaly windows; MIT, real-volume/LICENSE-NAB.txt). Each series is one topic, tracked from its first row:
// each row lands as a 5-minute batch at its end, in the hourly bucket it ends in. Scored as NAB scores its own data:
// rows are the 5-minute timestamps, a detection lands on the last row at or before the instant it was published, the
// windows are NAB's own (windows.json), the first 15 % of rows (at most 750) are probation.

export const REAL_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), "real-volume");
const ROW_MS = 5 * 60_000;

export interface RealSeries {
  name: string;
  /** Row timestamps (ms, UTC) and their counts. */
  times: number[];
  values: number[];
  /** NAB's windows, as inclusive row ranges. */
  windows: Window[];
  /** Labelled anomaly instants (ms). */
  labels: number[];
}

const utc = (s: string) => Date.parse(`${s.slice(0, 19).replace(" ", "T")}Z`);

/** The series in REAL_DIR whose file name matches `only` (all by default), in file order. */
export function loadRealSeries(only?: RegExp, dir = REAL_DIR): RealSeries[] {
  const labels = JSON.parse(fs.readFileSync(path.join(dir, "labels.json"), "utf8")) as Record<string, string[]>;
  const windows = JSON.parse(fs.readFileSync(path.join(dir, "windows.json"), "utf8")) as Record<string, [string, string][]>;
  return Object.keys(windows)
    .filter((file) => !only || only.test(file))
    .sort()
    .map((file) => {
      const times: number[] = [];
      const values: number[] = [];
      for (const line of fs.readFileSync(path.join(dir, file), "utf8").trim().split("\n").slice(1)) {
        const [ts, v] = line.split(",");
        times.push(utc(ts));
        values.push(Number(v));
      }
      // A window's rows: from the first row at or after its start to the last row at or before its end.
      const rowOf = (ms: number) => lastRowAtOrBefore(times, ms);
      const w = windows[file].map(([a, b]) => ({ start: rowOf(utc(a) - 1) + 1, end: rowOf(utc(b)) }));
      return { name: file.replace(/^Twitter_volume_|\.csv$/g, ""), times, values, windows: w, labels: (labels[file] ?? []).map(utc) };
    });
}

/** Index of the last row whose timestamp is <= ms (-1 when none). */
export function lastRowAtOrBefore(times: readonly number[], ms: number): number {
  let lo = 0;
  let hi = times.length; // first index with times[i] > ms
  while (lo < hi) {
    const m = (lo + hi) >> 1;
    if (times[m] <= ms) lo = m + 1;
    else hi = m;
  }
  return lo - 1;
}

/**
 * The series as the replay's topic: hourly buckets (bucketMs) from the bucket of the first row, twelve 5-minute arrival
 * slots per bucket. A row counts the 5 minutes from its timestamp, so it fills the slot its timestamp falls in and lands
 * at that slot's end (the replay lands every slot at its end); placing it one slot later delayed every alert by 5 minutes.
 */
export function realTopicOf(series: RealSeries, bucketMs: number): ReplayTopic {
  const slotsPerBucket = bucketMs / ROW_MS;
  const starts = series.times;
  const startMs = Math.floor(starts[0] / bucketMs) * bucketMs;
  const buckets = Math.floor((starts[starts.length - 1] - startMs) / bucketMs) + 1;
  const slots = Array.from({ length: buckets }, () => new Array<number>(slotsPerBucket).fill(0));
  for (const [i, at] of starts.entries()) {
    const b = Math.floor((at - startMs) / bucketMs);
    slots[b][Math.floor(((at - startMs) % bucketMs) / ROW_MS)] += series.values[i];
  }
  return { startMs, counts: slots.map((s) => s.reduce((a, b) => a + b, 0)), slots, missing: new Set(), category: "real" };
}

export interface RealScore {
  name: string;
  windows: number;
  found: number;
  falseAlarms: number;
  /** NAB raw score of this series (sum over windows and false alarms). */
  raw: number;
  /** Detections in found windows beyond the first. */
  repeats: number;
  /** Labelled instants with more than one detection from the label to 12 h after it. */
  burstsRepeated: number;
  days: number;
  detail: string;
}

/**
 * NAB's standard-profile score of the alert instants (ms) on one real series: each lands on the last row at or before
 * it, then scoreSeries (scoring.ts, the corpus's scorer) scores the rows on the series' own windows.
 */
export function scoreReal(series: RealSeries, alertsMs: readonly number[]): RealScore {
  const n = series.times.length;
  const s = scoreSeries(n, series.windows, alertsMs.map((ms) => lastRowAtOrBefore(series.times, ms)));
  const burstsRepeated = series.labels.filter((l) => alertsMs.filter((a) => a >= l && a < l + 12 * 3_600_000).length > 1).length;
  const stamp = (row: number) => new Date(series.times[row]).toISOString().slice(5, 16).replace("T", " ");
  const detail = [
    ...s.windows.map((w) => `[${stamp(w.window.start)}..${stamp(w.window.end)}] ${w.detection === null ? "MISS" : `hit ${stamp(w.detection)} x${w.detections}`}`),
    s.falsePositives.length ? `false alarms: ${s.falsePositives.map((f) => stamp(f.row)).join(", ")}` : "no false alarm",
  ].join("\n  ");
  return {
    name: series.name, windows: s.windows.length, found: s.windows.filter((w) => w.detection !== null).length, falseAlarms: s.falsePositives.length,
    raw: s.raw, repeats: s.windows.reduce((a, w) => a + Math.max(0, w.detections - 1), 0), burstsRepeated,
    days: (series.times[n - 1] - series.times[0]) / 86_400_000, detail,
  };
}

/** The normalised NAB score over several series (summed raw, then normalised by their windows). */
export function realTotal(scores: readonly RealScore[]): number {
  return normalisedScore(scores.reduce((a, s) => a + s.raw, 0), scores.reduce((a, s) => a + s.windows, 0));
}

/** What a trend_detected subscriber at threshold 0 receives: the delivered detections' publication instants. */
export const deliveredAt = (events: readonly ReplayedEvent[]) => events.filter((e) => e.type === "trend.detected" && e.delivered).map((e) => e.atMs);

/** One cadence's (or the z-score's) scores over the real series, as a table row. */
function realRow(label: string, scores: readonly RealScore[]): string[] {
  const sum = (f: (s: RealScore) => number) => scores.reduce((a, s) => a + f(s), 0);
  const perSeries = scores.map((s) => `${s.name} ${s.found}/${s.windows} fa ${s.falseAlarms}`).join(", ");
  return [
    label, `${sum((s) => s.found)}/${sum((s) => s.windows)}`, String(sum((s) => s.falseAlarms)), (sum((s) => s.falseAlarms) / sum((s) => s.days)).toFixed(3),
    String(sum((s) => s.burstsRepeated)), realTotal(scores).toFixed(1), perSeries,
  ];
}

/**
 * Replays the real series through production's path (replayTopic with its settings) at each cadence, scores what a
 * trend_detected subscriber receives, and returns the table rows (with the z-score on the same hours last), and the
 * per-series detail of each cadence. `base`: another checkout's code, replayed at the last cadence beside it.
 */
export function realVolumeRows(
  code: ProductionCode, settings: Settings, cadences: readonly { name: string; seconds: number }[], only?: RegExp, base?: { label: string; code: ProductionCode; settings: Settings },
): { rows: string[][]; detail: string[] } {
  const series = loadRealSeries(only);
  const bucketMs = settings.detection.bucketSeconds * 1000;
  const topics = series.map((s) => realTopicOf(s, bucketMs));
  const scores = cadences.map(() => [] as RealScore[]);
  const baseScores: RealScore[] = [];
  const detail: string[] = [];
  for (const [i, s] of series.entries()) {
    const replays = replayTopic(code, settings, topics[i], cadences.map((c) => c.seconds));
    replays.forEach((events, k) => scores[k].push(scoreReal(s, deliveredAt(events))));
    if (base) baseScores.push(scoreReal(s, deliveredAt(replayTopic(base.code, base.settings, topics[i], [cadences.at(-1)!.seconds])[0])));
    detail.push(`${s.name}, ${cadences.at(-1)!.name}:\n  ${scores.at(-1)!.at(-1)!.detail}`);
  }
  const zscores = series.map((s, i) => scoreReal(s, zscoreReplay(topics[i]).alerts.map((a) => a.atMs)));
  return {
    rows: [
      ...cadences.map((c, k) => realRow(c.name, scores[k])),
      ...(base ? [realRow(`${base.label}, ${cadences.at(-1)!.name}`, baseScores)] : []),
      realRow("z-score (168 h, z>3, >=20/h), closed hours", zscores),
    ],
    detail,
  };
}

export const REAL_COLUMNS = ["passes", "windows found", "false alarms", "false alarms/topic/day", "bursts detected more than once", "score", "per series"];
