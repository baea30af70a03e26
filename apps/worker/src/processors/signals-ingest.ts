import { JOB_PAYLOADS, QUEUES } from "@trendgate/contracts";
import { insertSignals } from "@trendgate/db";
import type { ProcessorFactory } from "./types.ts";

/**
 * Stores an ingested batch and adds it to its topics' time buckets. Re-running a batch (retry, stalled job) counts
 * nothing twice: signals are unique, and only newly stored ones reach the buckets.
 */
export const signalsIngest: ProcessorFactory = {
  queue: QUEUES.signals,
  create: ({ db, config }) => ({
    async process(job) {
      const payload = JOB_PAYLOADS[QUEUES.signals].parse(job.data);
      const inserted = await insertSignals(db, payload.account_id, payload.signals, config.DETECTION_BUCKET_SECONDS);
      return { inserted, duplicates: payload.signals.length - inserted };
    },
  }),
};
