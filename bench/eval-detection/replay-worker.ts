import { parentPort, workerData } from "node:worker_threads";
import { loadProductionCode } from "./code.ts";
import { buildCorpus, replayTopicOf } from "./corpus.ts";
import { productionSettings, replayTopic } from "./production.ts";

// Replays a share of the corpus in a worker thread: passes every minute over weeks of series are CPU-bound.
const { names, indices, root, intervals } = workerData as { names: string[]; indices: number[]; root: string; intervals: number[] };
const corpus = new Map(buildCorpus().map((s) => [s.name, s]));
const code = await loadProductionCode(root);
const settings = productionSettings(code);
parentPort!.postMessage(indices.map((index, k) => ({ index, events: replayTopic(code, settings, replayTopicOf(corpus.get(names[k])!), intervals) })));
