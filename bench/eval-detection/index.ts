// `npm run eval:detection [-- --closed] [-- --verbose]`: scores the trend detector on the labelled synthetic corpus
// with NAB's standard profile, next to a plain z-score baseline (see README.md here). EVAL_DETECTOR_DIR=<dir> loads
// the detection module (<dir>/index.ts) from another directory, e.g. a copy of an older version, to compare.
import os from "node:os";
import { performance } from "node:perf_hooks";
import { Worker } from "node:worker_threads";
import { buildCorpus, CORPUS_START_MS, HOUR_MS, OUTAGE, type AnomalyKind, type CorpusSeries, type SeriesKind } from "./corpus.ts";
import { labelWindows, normalisedScore, scoreSeries, type Window } from "./scoring.ts";
import { loadTrendgate, type Replay } from "./trendgate.ts";
import { zscoreReplay } from "./zscore.ts";

const verbose = process.argv.includes("--verbose");
/** --closed: skip the live (5-minute) replay, ~10x faster. */
const closedOnly = process.argv.includes("--closed");
const WORKERS = Math.max(1, Number(process.env.EVAL_WORKERS) || Math.min(2, os.availableParallelism()));
/** False alarms this soon after the account-wide outage are blamed on it. */
const OUTAGE_BLAME_HOURS = 24;

interface Row {
  name: string;
  found: number;
  windows: number;
  falseAlarms: number;
  score: number;
  medianLatencyMin: number | null;
  /** Windows found only by an alert before the anomaly started (NAB windows open before it). */
  earlyOnly: number;
  events: Replay["events"];
  byKind: Map<AnomalyKind, { found: number; total: number; latencies: number[] }>;
  fpBySeriesKind: Map<SeriesKind, number>;
  fpAfterOutage: number;
  perSeries: string[];
  seconds: number;
}

const median = (xs: number[]): number | null => {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

function firstAnomalyIn(series: CorpusSeries, w: Window) {
  return series.anomalies.find((a) => a.row >= w.start && a.row <= w.end)!;
}

function evaluate(name: string, corpus: CorpusSeries[], replays: Replay[], seconds: number): Row {
  const row: Row = {
    name, found: 0, windows: 0, falseAlarms: 0, score: 0, medianLatencyMin: null, earlyOnly: 0,
    events: { detected: 0, severity: 0, velocity: 0 }, byKind: new Map(), fpBySeriesKind: new Map(), fpAfterOutage: 0,
    perSeries: [], seconds,
  };
  let raw = 0;
  const latencies: number[] = [];
  for (const [i, series] of corpus.entries()) {
    const r = replays[i];
    for (const k of ["detected", "severity", "velocity"] as const) row.events[k] += r.events[k];
    const windows = labelWindows(series.counts.length, series.anomalies.map((a) => a.row));
    const s = scoreSeries(series.counts.length, windows, r.alerts.map((a) => a.row));
    raw += s.raw;
    row.windows += s.windows.length;
    for (const w of s.windows) {
      const anomaly = firstAnomalyIn(series, w.window);
      const kind = row.byKind.get(anomaly.kind) ?? { found: 0, total: 0, latencies: [] };
      kind.total++;
      if (w.detection !== null) {
        kind.found++;
        row.found++;
        const onTime = r.alerts.find((a) => a.row >= w.window.start && a.row <= w.window.end && a.atMs >= anomaly.startMs);
        if (onTime) { latencies.push((onTime.atMs - anomaly.startMs) / 60_000); kind.latencies.push((onTime.atMs - anomaly.startMs) / 60_000); }
        else row.earlyOnly++;
      }
      row.byKind.set(anomaly.kind, kind);
    }
    row.falseAlarms += s.falsePositives.length;
    row.fpBySeriesKind.set(series.kind, (row.fpBySeriesKind.get(series.kind) ?? 0) + s.falsePositives.length);
    for (const fp of s.falsePositives) {
      const hour = (series.startMs - CORPUS_START_MS) / HOUR_MS + fp.row;
      if (hour >= OUTAGE.from && hour < OUTAGE.from + OUTAGE.hours + OUTAGE_BLAME_HOURS) row.fpAfterOutage++;
    }
    if (verbose) {
      const labels = series.anomalies.map((a) => `${a.kind}@${a.row}`).join(",") || "-";
      const found = s.windows.map((w) => `[${w.window.start}-${w.window.end}]${w.detection === null ? "MISS" : `hit@${w.detection}`}`).join(" ");
      const outageRow = OUTAGE.from - (series.startMs - CORPUS_START_MS) / HOUR_MS;
      const fps = s.falsePositives.map((fp) => `${fp.row}${fp.row >= outageRow && fp.row < outageRow + OUTAGE.hours + OUTAGE_BLAME_HOURS ? "(outage+" + (fp.row - outageRow) + "h)" : ""}`).join(",");
      row.perSeries.push(`${series.name.padEnd(18)} rows=${String(series.counts.length).padEnd(5)} labels=${labels.padEnd(24)} ${found} ${fps ? `FP@${fps}` : ""}`);
    }
  }
  row.score = normalisedScore(raw, row.windows);
  row.medianLatencyMin = median(latencies);
  return row;
}

function table(rows: string[][]): string {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  const line = (r: string[]) => `| ${r.map((cell, c) => cell.padEnd(widths[c])).join(" | ")} |`;
  return [line(rows[0]), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...rows.slice(1).map(line)].join("\n");
}

/** Trendgate replays of every series, spread over worker threads (interleaved, so each gets a similar load). */
async function replayAll(dir: string, count: number, live: boolean): Promise<{ closed: Replay; live?: Replay }[]> {
  const shares = Array.from({ length: Math.min(WORKERS, count) }, (_, w) => Array.from({ length: count }, (_, i) => i).filter((i) => i % WORKERS === w));
  const parts = await Promise.all(
    shares.map(
      (indices) =>
        new Promise<{ index: number; closed: Replay; live?: Replay }[]>((resolve, reject) => {
          // Node 20 workers do not inherit tsx's loader: a tiny ESM entry registers it, then loads the TypeScript worker.
          const entry = `import { register } from ${JSON.stringify(import.meta.resolve("tsx/esm/api"))}; register(); await import(${JSON.stringify(new URL("./replay-worker.ts", import.meta.url).href)});`;
          const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(entry)}`), { workerData: { indices, dir, live } });
          worker.once("message", resolve);
          worker.once("error", reject);
          worker.once("exit", (code) => code !== 0 && reject(new Error(`replay worker exited with ${code}`)));
        }),
    ),
  );
  const out: { closed: Replay; live?: Replay }[] = [];
  for (const part of parts) for (const r of part) out[r.index] = r;
  return out;
}

const started = performance.now();
const corpus = buildCorpus();
const detector = await loadTrendgate();
const label = process.env.EVAL_DETECTOR_DIR ? `trendgate[${process.env.EVAL_DETECTOR_DIR}]` : "trendgate";
const live = detector.supportsNow && !closedOnly;
let t = performance.now();
const replays = await replayAll(detector.dir, corpus.length, live);
const trendgateSeconds = (performance.now() - t) / 1000;
const results: Row[] = [];
if (live) results.push(evaluate(`${label} live (5-min passes)`, corpus, replays.map((r) => r.live!), trendgateSeconds));
results.push(evaluate(`${label} closed buckets`, corpus, replays.map((r) => r.closed), live ? 0 : trendgateSeconds));
t = performance.now();
const zscores = corpus.map(zscoreReplay);
results.push(evaluate("z-score (168 h, z>3, >=20/h)", corpus, zscores, (performance.now() - t) / 1000));

const labelledWindows = corpus.reduce((n, s) => n + labelWindows(s.counts.length, s.anomalies.map((a) => a.row)).length, 0);
console.log(
  `Corpus: ${corpus.length} hourly series (${corpus.reduce((n, s) => n + s.counts.length, 0)} buckets), ` +
    `${corpus.reduce((n, s) => n + s.anomalies.length, 0)} labelled anomalies in ${labelledWindows} NAB windows; account-wide outage at ${new Date(CORPUS_START_MS + OUTAGE.from * HOUR_MS).toISOString()} for ${OUTAGE.hours} h.`,
);
console.log(`Detector module: ${detector.dir} (assess with \`now\`: ${detector.supportsNow ? "yes, live replay" : "no, closed-bucket latency only"})`);
console.log("NAB standard profile (TP 1, FP 0.11, FN 1; windows 10 % of a series / its anomalies; first 15 % unscored): no alerts = 0, perfect = 100.\n");
console.log(
  table([
    ["detector", "windows found", "false alarms", "score", "median latency (min)", "all events (detected+severity+velocity)"],
    ...results.map((r) => [
      r.name,
      `${r.found}/${r.windows}`,
      String(r.falseAlarms),
      r.score.toFixed(1),
      r.medianLatencyMin === null ? "-" : r.medianLatencyMin.toFixed(0),
      `${r.events.detected + r.events.severity + r.events.velocity} (${r.events.detected}+${r.events.severity}+${r.events.velocity})`,
    ]),
  ]),
);

const kinds: AnomalyKind[] = ["burst", "ramp", "plateau", "bump", "level-shift"];
const seriesKinds = [...new Set(corpus.map((s) => s.kind))];
console.log("\nWindows found by anomaly kind:");
console.log(
  table([
    ["detector", ...kinds, "found only before onset"],
    ...results.map((r) => [r.name, ...kinds.map((k) => `${r.byKind.get(k)?.found ?? 0}/${r.byKind.get(k)?.total ?? 0}`), String(r.earlyOnly)]),
  ]),
);
console.log("\nMedian latency by anomaly kind (minutes from the anomaly's start to the first alert):");
console.log(
  table([
    ["detector", ...kinds],
    ...results.map((r) => [r.name, ...kinds.map((k) => { const m = median(r.byKind.get(k)?.latencies ?? []); return m === null ? "-" : m.toFixed(0); })]),
  ]),
);
console.log(`\nFalse alarms by series kind (series per kind: ${seriesKinds.map((k) => `${k} ${corpus.filter((s) => s.kind === k).length}`).join(", ")}):`);
console.log(
  table([
    ["detector", ...seriesKinds, `within ${OUTAGE_BLAME_HOURS} h of outage`],
    ...results.map((r) => [r.name, ...seriesKinds.map((k) => String(r.fpBySeriesKind.get(k) ?? 0)), String(r.fpAfterOutage)]),
  ]),
);
if (verbose) {
  for (const r of results) console.log(`\n${r.name}:\n${r.perSeries.join("\n")}`);
}
console.log(
  `\nRuntime: ${((performance.now() - started) / 1000).toFixed(1)} s (trendgate replays ${trendgateSeconds.toFixed(1)} s on ${WORKERS} worker thread(s)` +
    `${live ? ", live and closed together" : ""}; z-score ${results[results.length - 1].seconds.toFixed(1)} s)`,
);
