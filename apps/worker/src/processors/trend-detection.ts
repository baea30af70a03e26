import { JOB_PAYLOADS, QUEUES } from "@trendgate/contracts";
import type { Config } from "@trendgate/config";
import { briefingLinkKey, briefingUrl, detectAccount, detectionConfigFrom, FitCache, type EngineOptions } from "@trendgate/trends";
import type { ProcessorFactory } from "./types.ts";

/**
 * Runs trend detection. A BullMQ job scheduler (kept in place by every worker that runs this queue:
 * ../schedulers/index.ts) creates one tick per DETECTION_INTERVAL_SECONDS for the whole fleet; the tick queues one
 * job per shard of DETECTION_SHARD_TOPICS topics per account, which any worker takes, so a pass is spread over the
 * fleet. Each shard is guarded by an advisory lock, and event ids are deterministic. Events are held to
 * TREND_EVENT_LIMITS and DELIVERY_BODY_MAX_BYTES where the engine builds them.
 */
export const trendDetection: ProcessorFactory = {
  queue: QUEUES.trendDetection,
  create({ db, queues, config, logger }) {
    const options = engineOptions(config);
    return {
      concurrency: 1,
      async process(job) {
        const { account_id, shard, shards } = JOB_PAYLOADS[QUEUES.trendDetection].parse(job.data);
        const now = new Date();
        if (account_id) {
          const s = await detectAccount({ db, queues }, account_id, now, options, { index: shard ?? 0, count: shards ?? 1 });
          if (s.events) logger.info({ account_id, shard, shards, ...s }, "trend detection published events");
          return s;
        }
        // The tick: one job per account shard, so a big account's topics are assessed by several workers at once.
        const since = new Date(now.getTime() - (options.baselineHours * 3600 + options.bucketSeconds) * 1000);
        const { rows } = await db.$pool.query<{ account_id: string; n: string }>(
          `SELECT account_id, count(*) AS n FROM topics WHERE last_seen_at >= $1 GROUP BY account_id`, [since]);
        const jobs = rows.flatMap((r) => {
          const count = Math.max(1, Math.ceil(Number(r.n) / config.DETECTION_SHARD_TOPICS));
          return Array.from({ length: count }, (_, index) => ({
            name: QUEUES.trendDetection,
            data: { account_id: r.account_id, shard: index, shards: count },
            opts: { jobId: `${String(job.id).replace(/:/g, "_")}-${r.account_id}-${index}of${count}`, removeOnComplete: 1000, removeOnFail: 1000 },
          }));
        });
        if (jobs.length) await queues.get(QUEUES.trendDetection).addBulk(jobs);
        return { accounts: rows.length, shards: jobs.length };
      },
    };
  },
};

/** The engine's settings from the configuration; events link to the briefing page (signed with a key derived from ENCRYPTION_KEY). */
export function engineOptions(config: Config): EngineOptions {
  const briefingKey = briefingLinkKey(config.ENCRYPTION_KEY);
  return {
    ...detectionConfigFrom(config),
    publicBaseUrl: config.PUBLIC_BASE_URL,
    velocityEventStep: 0.5,
    velocityEventMinSeconds: config.DETECTION_VELOCITY_EVENT_MIN_SECONDS,
    severityHoldSeconds: config.DETECTION_SEVERITY_HOLD_SECONDS,
    endAfterHours: config.DETECTION_END_AFTER_HOURS,
    maxEventBytes: config.DELIVERY_BODY_MAX_BYTES,
    // One per process: passes within an hour reuse each topic's model while its history is unchanged.
    fitCache: new FitCache(config.DETECTION_FIT_CACHE_TOPICS),
    // The real clock, not the pass's `now`: revocation compares the issue time with the moment links were revoked.
    sourceLink: ({ accountId, trendId }) => briefingUrl(config.PUBLIC_BASE_URL, briefingKey, { accountId, trendId, issuedAt: new Date(), ttlSeconds: config.BRIEFING_LINK_TTL_SECONDS }),
  };
}
