import type { Resolved } from "./config.ts";
import { compactModel, fitModel, scoredTail, type Model } from "./model.ts";

// Fitted models kept between detection passes. Within a bucket every pass fits the same history again (passes run
// every minute; only the bucket in progress changes, and the model does not read it), which was most of a pass's
// time. A topic's model is reused while its history is the same (same first bucket, same bucket in progress, the same
// values: a signal arriving late for a closed bucket changes them), kept compact (compactModel: about 6 KB a topic with its entry, where a fitted model holds ~21 KB),
// and the least recently used topics are dropped beyond `maxTopics`.

interface Entry {
  key: string;
  hash: number;
  model: Model | undefined;
}

export class FitCache {
  private readonly entries = new Map<string, Entry>();

  constructor(readonly maxTopics: number) {}

  get size(): number {
    return this.entries.size;
  }

  /** The model of topic `id` for bucket k of y (as fitModel(y, firstBucket, k, cfg), compacted): reused or fitted. */
  model(id: string, y: Float64Array, firstBucket: number, k: number, cfg: Resolved): Model | undefined {
    if (this.maxTopics <= 0) return fitModel(y, firstBucket, k, cfg);
    const key = `${cfg.bucketSeconds}|${cfg.baselineHours}|${cfg.dailySeasonality}|${firstBucket}|${k}`;
    const hash = historyHash(y, Math.max(0, k - cfg.historyBuckets), k);
    const hit = this.entries.get(id);
    this.entries.delete(id); // re-inserted last: the Map's order is the recency order
    if (hit && hit.key === key && hit.hash === hash) {
      this.entries.set(id, hit);
      return hit.model;
    }
    const fitted = fitModel(y, firstBucket, k, cfg);
    const model = fitted && compactModel(fitted, scoredTail(cfg));
    this.entries.set(id, { key, hash, model });
    if (this.entries.size > this.maxTopics) this.entries.delete(this.entries.keys().next().value!);
    return model;
  }
}

/**
 * A hash of y[from, to) (two multiplicative lanes over the values' bits, 53 bits kept): equal histories hash alike,
 * and a changed one (a late signal, an outage's missing bucket) matches only by a chance of about one in 2^50.
 */
function historyHash(y: Float64Array, from: number, to: number): number {
  const words = new Uint32Array(y.buffer, y.byteOffset + from * 8, (to - from) * 2);
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ (to - from);
  for (let i = 0; i < words.length; i++) {
    a = Math.imul(a ^ words[i], 0x01000193);
    b = Math.imul(b ^ words[i], 0x5bd1e995) ^ (b >>> 15);
  }
  return (a >>> 0) * 2 ** 21 + ((b >>> 0) & 0x1fffff);
}
