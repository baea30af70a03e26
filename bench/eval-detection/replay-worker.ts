import { parentPort, workerData } from "node:worker_threads";
import { buildCorpus } from "./corpus.ts";
import { loadTrendgate } from "./trendgate.ts";

// Replays a share of the corpus in a worker thread: the live replay (a pass every 5 minutes) is CPU-bound.
const { indices, dir, live } = workerData as { indices: number[]; dir: string; live: boolean };
const corpus = buildCorpus();
const detector = await loadTrendgate(dir);
parentPort!.postMessage(indices.map((i) => ({ index: i, ...detector.replay(corpus[i], live) })));
