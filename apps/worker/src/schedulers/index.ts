import type { Config } from "@trendgate/config";
import { QUEUES, type QueueName } from "@trendgate/contracts";
import type { Logger } from "@trendgate/logger";
import { whenReady, type Queues } from "@trendgate/queues";
import { Periodic } from "../periodic.ts";

// The fleet's periodic work, in one place. BullMQ keeps a job scheduler in Redis only: a FLUSHALL, a Redis restart
// without persistence or an eviction deletes it, and nothing in BullMQ re-creates it (a worker only ever re-schedules
// the next iteration of a job it took). So every worker process checks, every SCHEDULER_CHECK_SECONDS, that the
// schedulers of the queues it drains exist and have their next job, and upserts those that do not. The upsert is
// idempotent and atomic (one Lua script), so any number of workers doing it at once create one scheduler with one
// next job; a re-created scheduler ticks at once, so the work resumes within one check.

export interface Schedule {
  queue: QueueName;
  /** The scheduler id in Redis (kept from earlier versions, so an upgrade adopts the existing schedulers). */
  id: string;
  everyMs: number;
}

export const DETECTION_SCHEDULER_ID = "trend-detection-every-interval";
export const SOCIAL_POLL_SCHEDULER_ID = "social-poll-tick";

/** Every job scheduler the fleet relies on, with its interval from the configuration. */
export function schedules(config: Config): Schedule[] {
  return [
    { queue: QUEUES.trendDetection, id: DETECTION_SCHEDULER_ID, everyMs: config.DETECTION_INTERVAL_SECONDS * 1000 },
    { queue: QUEUES.socialPoll, id: SOCIAL_POLL_SCHEDULER_ID, everyMs: config.SOCIAL_POLL_INTERVAL_SECONDS * 1000 },
    { queue: QUEUES.operatorTicks, id: "operator-tick", everyMs: config.OPERATOR_TICK_SECONDS * 1000 },
    { queue: QUEUES.retention, id: "retention-pass", everyMs: config.RETENTION_INTERVAL_SECONDS * 1000 },
  ];
}

// The tick carries no data ({} = "the scheduler's tick" in JOB_PAYLOADS); its runs are kept briefly for inspection.
const TEMPLATE_OPTS = { removeOnComplete: 100, removeOnFail: 100 };
// States in which a scheduler's next job will run (or is running): anything else means the chain is broken.
const LIVE_STATES = new Set(["delayed", "waiting", "prioritized", "active", "waiting-children"]);

export class SchedulerKeeper {
  private readonly loop: Periodic;

  constructor(
    private readonly queues: Queues,
    private readonly list: Schedule[],
    private readonly opts: { checkMs: number; logger: Logger },
  ) {
    // The producer connection fails fast until it is connected (a cluster client needs a moment to read the slot
    // map): a check waits for it rather than failing and waiting a whole checkMs.
    this.loop = new Periodic(() => whenReady(queues.connection, 5000).then(() => this.ensure()), opts.checkMs,
      (err) => opts.logger.warn({ err: String(err) }, "job scheduler check failed; retrying at the next check"));
  }

  /** Checks at once, then every checkMs until stop(). */
  start() {
    if (this.list.length) this.loop.start({ immediately: true });
  }

  /** No further checks; waits for a running one (a few Redis round trips; commands fail fast when Redis is down). */
  stop() { return this.loop.stop(); }

  /** One check of every schedule; returns the ids it (re-)created. */
  async ensure(): Promise<string[]> {
    const created: string[] = [];
    for (const s of this.list) {
      if (this.loop.stopped) break;
      if (await this.healthy(s)) continue;
      await this.queues.get(s.queue).upsertJobScheduler(s.id, { every: s.everyMs }, { name: s.queue, data: {}, opts: TEMPLATE_OPTS });
      created.push(s.id);
    }
    if (created.length) this.opts.logger.warn({ schedulers: created }, "job scheduler(s) were missing or stalled in Redis; re-created");
    return created;
  }

  /** The scheduler exists with this interval and its next job is queued (or running). */
  private async healthy(s: Schedule): Promise<boolean> {
    const queue = this.queues.get(s.queue);
    const scheduler = await queue.getJobScheduler(s.id);
    if (!scheduler || scheduler.every !== s.everyMs || scheduler.next == null) return false;
    const next = await queue.getJob(`repeat:${s.id}:${scheduler.next}`);
    return !!next && LIVE_STATES.has(await next.getState());
  }
}
