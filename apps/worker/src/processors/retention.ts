import { QUEUES } from "@trendgate/contracts";
import { retentionPolicy, runRetentionPass } from "../sweepers/retention.ts";
import type { ProcessorFactory } from "./types.ts";

/**
 * Retention, one pass per RETENTION_INTERVAL_SECONDS for the whole fleet (a job scheduler: one worker takes each
 * tick). A pass is bounded by RETENTION_PASS_SECONDS and stops between batches at shutdown; what it left is done by
 * the next one.
 */
export const retention: ProcessorFactory = {
  queue: QUEUES.retention,
  create(deps) {
    let stopped = false;
    return {
      concurrency: 1,
      async process() {
        const c = deps.config;
        const deleted = await runRetentionPass(deps.db.$pool, {
          policy: retentionPolicy(c), batchSize: c.RETENTION_BATCH_SIZE, budgetMs: c.RETENTION_PASS_SECONDS * 1000,
          logger: deps.logger, stopped: () => stopped,
        });
        if (Object.keys(deleted).length) deps.logger.info({ deleted }, "retention: old rows deleted");
        return deleted;
      },
      stopping() { stopped = true; },
    };
  },
};
