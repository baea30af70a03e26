import { Queue, Worker, type Processor as BullProcessor } from "bullmq";
import type { Logger } from "@trendgate/logger";
import type { RedisConnection } from "@trendgate/queues";

/**
 * Queues used to live under `<QUEUE_PREFIX>:<queue>`; they now live under `<QUEUE_PREFIX>:{<queue>}` (a hash tag
 * per queue, for Redis Cluster). Jobs left under the old keys by a fleet that ran the previous version would be
 * stranded: outbound jobs would be re-queued from Postgres by the outbox sweeper, but accepted signal batches and
 * report exports would not. So each worker, at start, drains what the old keys still hold with the same processor,
 * then lets go of them. The old job schedulers are removed first (the current keys have their own, kept by the
 * SchedulerKeeper): drained, they would schedule their next job under the old keys forever.
 * (On a cluster there is nothing to drain: the old keys were never used there.)
 */
export class LegacyDrain {
  private readonly workers: Worker[] = [];
  private readonly queues: Queue[] = [];
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly connection: RedisConnection,
    private readonly prefix: string,
    private readonly logger: Logger,
    private readonly checkMs = 5000,
  ) {}

  /** Starts a worker on the old keys of each queue that still holds jobs; resolves with the queues being drained. */
  async start(queues: Array<{ queue: string; process: BullProcessor; concurrency: number }>): Promise<string[]> {
    const draining: string[] = [];
    for (const q of queues) {
      if (this.stopped) break;
      // skipMetasUpdate: a Queue otherwise writes its meta key on creation, re-creating the old keys it is meant to empty.
      const old = new Queue(q.queue, { connection: this.connection, prefix: this.prefix, skipMetasUpdate: true });
      old.on("error", () => {});
      this.queues.push(old);
      for (const s of await old.getJobSchedulers()) await old.removeJobScheduler(s.key);
      if (!(await this.left(old)) || this.stopped) continue;
      const w = new Worker(q.queue, q.process, { connection: this.connection, prefix: this.prefix, concurrency: q.concurrency });
      w.on("error", (err) => this.logger.warn({ queue: q.queue, err: err.message }, "legacy queue drain: worker error"));
      this.workers.push(w);
      draining.push(q.queue);
    }
    if (draining.length) {
      this.logger.info({ queues: draining }, "draining jobs left under the previous queue keys");
      this.watch();
    }
    return draining;
  }

  /** Jobs still to run under the old keys (failed and completed ones are history, not work). */
  private async left(q: Queue) {
    const counts = await q.getJobCounts("waiting", "active", "delayed", "prioritized", "waiting-children");
    return Object.values(counts).reduce((a, b) => a + b, 0);
  }

  /** Closes each old queue's worker once nothing is left to run there. */
  private watch() {
    this.timer = setTimeout(async () => {
      for (const w of [...this.workers]) {
        const q = this.queues.find((x) => x.name === w.name)!;
        if ((await this.left(q).catch(() => 1)) > 0) continue;
        this.workers.splice(this.workers.indexOf(w), 1);
        await w.close();
        this.logger.info({ queue: w.name }, "previous queue keys drained");
      }
      if (this.workers.length && !this.stopped) this.watch();
    }, this.checkMs);
    this.timer.unref();
  }

  async close() {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await Promise.all(this.workers.map((w) => w.close()));
    await Promise.all(this.queues.map((q) => q.close()));
  }
}
