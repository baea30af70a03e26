import { parentPort, workerData } from "node:worker_threads";
import { loadProductionCode } from "./code.ts";
import { buildCorpus, replayTopicOf } from "./corpus.ts";
import { productionSettings, replayTopic } from "./production.ts";

// Replays a share of the corpus in a worker thread: passes every minute over weeks of series are CPU-bound.
const { indices, root, intervals } = workerData as { indices: number[]; root: string; intervals: number[] };
const corpus = buildCorpus();
const code = await loadProductionCode(root);
const settings = productionSettings(code);
parentPort!.postMessage(indices.map((i) => ({ index: i, events: replayTopic(code, settings, replayTopicOf(corpus[i]), intervals) })));
