import { JOB_PAYLOADS, QUEUES } from "@trendgate/contracts";
import { insertSignals } from "@trendgate/db";
import type { ProcessorFactory } from "./types.ts";

/** Stores an ingested batch. Re-running a batch (retry, stalled job) inserts nothing twice: signals are unique. */
export const signalsIngest: ProcessorFactory = {
  queue: QUEUES.signals,
  create: ({ db }) => ({
    async process(job) {
      const payload = JOB_PAYLOADS[QUEUES.signals].parse(job.data);
      const inserted = await insertSignals(db, payload.account_id, payload.signals);
      return { inserted, duplicates: payload.signals.length - inserted };
    },
  }),
};
