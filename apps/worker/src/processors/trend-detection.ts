import { JOB_PAYLOADS, QUEUES } from "@trendgate/contracts";
import { detectAccount, type EngineOptions } from "@trendgate/trends";
import type { ProcessorFactory } from "./types.ts";

const SCHEDULER_ID = "trend-detection-every-interval";

/**
 * Runs trend detection. A BullMQ job scheduler (upserted by every worker that runs this queue; idempotent) creates
 * one job per DETECTION_INTERVAL_SECONDS for the whole fleet, so a pass runs once however many workers there are;
 * each account is additionally guarded by an advisory lock, and event ids are deterministic.
 */
export const trendDetection: ProcessorFactory = {
  queue: QUEUES.trendDetection,
  create({ db, queues, config, logger }) {
    const options: EngineOptions = {
      bucketSeconds: config.DETECTION_BUCKET_SECONDS,
      baselineBuckets: config.DETECTION_BASELINE_BUCKETS,
      minVolume: config.DETECTION_MIN_VOLUME,
      seasonPeriodBuckets: Math.round(86_400 / config.DETECTION_BUCKET_SECONDS),
      publicBaseUrl: config.PUBLIC_BASE_URL,
      velocityEventStep: 0.2,
    };
    return {
      concurrency: 1,
      async start() {
        await queues.get(QUEUES.trendDetection).upsertJobScheduler(
          SCHEDULER_ID, { every: config.DETECTION_INTERVAL_SECONDS * 1000 }, { name: QUEUES.trendDetection, data: {}, opts: { removeOnComplete: 100, removeOnFail: 100 } });
      },
      async process(job) {
        const { account_id } = JOB_PAYLOADS[QUEUES.trendDetection].parse(job.data);
        const now = new Date();
        const since = new Date(now.getTime() - (options.baselineBuckets + 1) * options.bucketSeconds * 1000);
        const accounts = account_id
          ? [account_id]
          : (await db.$pool.query<{ account_id: string }>(`SELECT DISTINCT account_id FROM topics WHERE last_seen_at >= $1`, [since])).rows.map((r) => r.account_id);
        const totals = { accounts: accounts.length, topics: 0, trends: 0, events: 0 };
        for (const a of accounts) {
          const s = await detectAccount({ db, queues }, a, now, options);
          totals.topics += s.topics; totals.trends += s.trends; totals.events += s.events;
        }
        if (totals.events) logger.info(totals, "trend detection published events");
        return totals;
      },
    };
  },
};
