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
    // Due connections are looked for more often than they are polled: ticking once per interval, a connection that
    // fell due just after a tick waited for the next one, up to two intervals between its polls.
    { queue: QUEUES.socialPoll, id: SOCIAL_POLL_SCHEDULER_ID, everyMs: Math.min(config.SOCIAL_POLL_TICK_SECONDS, config.SOCIAL_POLL_INTERVAL_SECONDS) * 1000 },
    { queue: QUEUES.operatorTicks, id: "operator-tick", everyMs: config.OPERATOR_TICK_SECONDS * 1000 },
    { queue: QUEUES.workflowConfirmations, id: "workflow-confirmation-pass", everyMs: config.WORKFLOW_CONFIRM_INTERVAL_SECONDS * 1000 },
    { queue: QUEUES.retention, id: "retention-pass", everyMs: config.RETENTION_INTERVAL_SECONDS * 1000 },
    { queue: QUEUES.webhookTicks, id: "webhook-tick", everyMs: config.WEBHOOK_TICK_SECONDS * 1000 },
  ];
}

// The tick carries no data ({} = "the scheduler's tick" in JOB_PAYLOADS); its runs are kept briefly for inspection.
const TEMPLATE_OPTS = { removeOnComplete: 100, removeOnFail: 100 };
// States in which a scheduler's next job will run (or is running): anything else means the chain is broken.
const LIVE_STATES = new Set(["delayed", "waiting", "prioritized", "active", "waiting-children"]);

/**
 * What a check found: `new` (absent and never seen by this process: a first start, normal), `changed` (another
 * interval: a configuration change), `lost` (absent although this process saw it), `stalled` (present, its next job
 * gone or dead). Only the last two mean Redis lost data.
 */
type Finding = "healthy" | "new" | "changed" | "lost" | "stalled";

export class SchedulerKeeper {
  private readonly loop: Periodic;
  /** Schedulers this process has seen in Redis (or created): absent again later means they were lost. */
  private readonly seen = new Set<string>();

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
    const found = new Map<Exclude<Finding, "healthy">, string[]>();
    const created: string[] = [];
    for (const s of this.list) {
      if (this.loop.stopped) break;
      const finding = await this.check(s);
      if (finding !== "healthy") {
        await this.queues.get(s.queue).upsertJobScheduler(s.id, { every: s.everyMs }, { name: s.queue, data: {}, opts: TEMPLATE_OPTS });
        found.set(finding, [...(found.get(finding) ?? []), s.id]);
        created.push(s.id);
      }
      this.seen.add(s.id);
    }
    const { logger } = this.opts;
    if (found.has("new")) logger.info({ schedulers: found.get("new") }, "job scheduler(s) created");
    if (found.has("changed")) logger.info({ schedulers: found.get("changed") }, "job scheduler(s) updated to the configured interval");
    const broken = [...(found.get("lost") ?? []), ...(found.get("stalled") ?? [])];
    if (broken.length) logger.warn({ lost: found.get("lost") ?? [], stalled: found.get("stalled") ?? [] }, "job scheduler(s) were missing or stalled in Redis; re-created");
    return created;
  }

  /** Healthy: the scheduler exists with this interval and its next job is queued (or running). */
  private async check(s: Schedule): Promise<Finding> {
    const queue = this.queues.get(s.queue);
    const scheduler = await queue.getJobScheduler(s.id);
    if (!scheduler) return this.seen.has(s.id) ? "lost" : "new";
    if (scheduler.every !== s.everyMs) return "changed";
    if (scheduler.next == null) return "stalled";
    const next = await queue.getJob(`repeat:${s.id}:${scheduler.next}`);
    return next && LIVE_STATES.has(await next.getState()) ? "healthy" : "stalled";
  }
}
