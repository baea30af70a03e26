import type { Worker } from "bullmq";
import type { QueueName } from "@trendgate/contracts";
import type { Logger } from "@trendgate/logger";
import type { Queues } from "@trendgate/queues";
import { Periodic } from "./periodic.ts";

/** One queue's worker in this process, as the watchdog sees it. */
export interface WatchedQueue {
  queue: QueueName;
  worker(): Worker;
  /** Jobs of this queue running in this process now. */
  running(): number;
  /** Jobs of this queue this process has started, ever (a counter). */
  started(): number;
  /** Swaps in a new BullMQ worker for this queue. */
  replace(): void;
}

/**
 * Replaces a queue's BullMQ worker whose fetch loop has stopped. A worker with free slots takes a waiting job at
 * once, so one that runs nothing, started nothing since the previous check and still sees jobs waiting (the queue
 * not paused) at two checks in a row is parked, not busy: seen on a Redis Cluster after a master restart, where
 * BullMQ's blocking connection did not come back. Nothing else would notice (the process looks healthy) and the
 * queue would wait for a restart; a new worker with a fresh blocking connection takes the jobs instead.
 */
export class FetchWatchdog {
  private readonly loop: Periodic;
  /** Per queue: the `started` count at the check that first found it idle with jobs waiting. */
  private readonly suspect = new Map<QueueName, number>();

  constructor(
    private readonly queues: Queues,
    private readonly watched: WatchedQueue[],
    private readonly opts: { everyMs: number; logger: Logger },
  ) {
    this.loop = new Periodic(() => this.check(), opts.everyMs, (err) => opts.logger.warn({ err: String(err) }, "fetch watchdog check failed"));
  }

  start() {
    if (this.opts.everyMs && this.watched.length) this.loop.start();
  }

  stop() { return this.loop.stop(); }

  /** One check of every queue; returns the queues whose worker was replaced. */
  async check(): Promise<QueueName[]> {
    const replaced: QueueName[] = [];
    for (const q of this.watched) {
      const started = q.started();
      const idle = q.running() === 0 && !q.worker().isPaused();
      const queue = this.queues.get(q.queue);
      if (!idle || (await queue.getWaitingCount()) === 0 || (await queue.isPaused())) {
        this.suspect.delete(q.queue);
        continue;
      }
      if (this.suspect.get(q.queue) !== started) { // first sight, or it took jobs since: look again next time
        this.suspect.set(q.queue, started);
        continue;
      }
      this.suspect.delete(q.queue);
      this.opts.logger.warn({ queue: q.queue, checked_every_ms: this.opts.everyMs }, "queue worker took no job while jobs waited; replacing it");
      q.replace();
      replaced.push(q.queue);
    }
    return replaced;
  }
}
