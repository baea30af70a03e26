import { parentPort, workerData } from "node:worker_threads";
import { loadProductionCode } from "./code.ts";
import { buildCorpus, HOUR_MS, replayTopicOf, type CorpusSeries } from "./corpus.ts";
import { productionSettings, replayTopic, type Judge } from "./production.ts";
import { labelWindows } from "./scoring.ts";

// Replays a share of the corpus in a worker thread: passes every minute over weeks of series are CPU-bound.
const { names, indices, root, intervals, feedback, seed } = workerData as { names: string[]; indices: number[]; root: string; intervals: number[]; feedback: boolean; seed?: number };
const corpus = new Map(buildCorpus(seed).map((s) => [s.name, s]));
const code = await loadProductionCode(root);
const settings = productionSettings(code);

/** A team that knows the labels: a detection inside an anomaly's window was useful, any other was not a trend. */
function judgeOf(series: CorpusSeries): Judge {
  const windows = labelWindows(series.counts.length, series.anomalies.map((a) => a.row));
  return (e) => {
    const row = Math.round((e.bucketStartMs - series.startMs) / HOUR_MS);
    return windows.some((w) => row >= w.start && row <= w.end) ? "useful" : "not_a_trend";
  };
}

parentPort!.postMessage(indices.map((index, k) => {
  const series = corpus.get(names[k])!;
  const topic = replayTopicOf(series);
  return { index, events: replayTopic(code, settings, topic, intervals, topic.startMs, feedback ? judgeOf(series) : undefined) };
}));
