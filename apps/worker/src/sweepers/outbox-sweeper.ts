import { QUEUES, type OutboxQueueName, type TrendEvent } from "@trendgate/contracts";
import { findUndispatchedTrendEvents, underFleetLock, type OverdueDelivery } from "@trendgate/db";
import { enqueueTrendEvents } from "@trendgate/trends";
import { outboxSweepSource, webhookDeliveriesSource, type SweepSource } from "../outbox/sweep-source.ts";
import type { WorkerDeps } from "../processors/types.ts";
import { Periodic } from "../periodic.ts";

const LOCK_KEY = 0x7467_0001; // pg advisory lock id: one sweeper at a time across the fleet
/** Overdue rows handled per step: one query, a pipelined state check, one pending re-check, one addBulk. */
const CHUNK = 1000;
/** A source's pass stops starting new steps after this long; the next pass (SWEEP_INTERVAL_MS later) goes on. */
const PASS_BUDGET_MS = 5000;
const EVENT_BATCH = 500;

/** Marks a promise as handled now (it is awaited later): a rejection meanwhile must not count as unhandled. */
function quiet<T>(p: Promise<T>): Promise<T> {
  p.catch(() => {});
  return p;
}

/**
 * The outbox sweeper: Postgres is the record of what must be sent, Redis only schedules it. Every SWEEP_INTERVAL_MS
 * one worker process (whichever takes the advisory lock) re-queues, from each of its sources, rows that are overdue
 * by SWEEP_GRACE_SECONDS because their job was lost (Redis flushed or restarted without persistence, a crash between
 * commit and enqueue), and trend events never matched. Sources: webhook deliveries (webhook_deliveries), and one per
 * outbox queue (outbox_messages) that this process runs. Job ids make this idempotent: a job still queued is left alone.
 * It only recovers lost work: account events and held firings are the webhook tick's (processors/webhook-ticks.ts).
 *
 * Set-based, so that recovering from a Redis loss takes seconds, not minutes: overdue rows are read CHUNK at a time
 * (keyset-paged, so rows whose new jobs are still waiting are not read again in the same pass), their jobs' states
 * looked up together (one pipeline, requeueLost), the rows re-read once in one query, and the lost ones queued with
 * one addBulk, while the next chunk is read. The lock is a session-level advisory lock on one pooled connection,
 * held only for the pass (each source bounded by PASS_BUDGET_MS); the queries run on other connections in
 * autocommit: no transaction stays open across the Redis calls, so the sweeper never holds back vacuum or pins a
 * snapshot.
 */
export class OutboxSweeper {
  private readonly loop: Periodic;
  private readonly deliveries: SweepSource<OverdueDelivery>;
  private readonly outbox: SweepSource<unknown>[];

  /** `outbox`: the outbox queues whose messages this sweeper re-queues (those its process runs). */
  constructor(private readonly deps: WorkerDeps, private readonly what: { deliveries: boolean; events: boolean; outbox?: readonly OutboxQueueName[] }) {
    this.deliveries = webhookDeliveriesSource(deps);
    this.outbox = (what.outbox ?? []).map((q) => outboxSweepSource(deps, q) as SweepSource<unknown>);
    this.loop = new Periodic(() => this.sweep(), deps.config.SWEEP_INTERVAL_MS, (err) => deps.logger.warn({ err: String(err) }, "outbox sweep failed"));
  }

  start() { this.loop.start(); }

  stop() { return this.loop.stop(); }

  /** One pass; returns how many jobs it re-queued (`outbox`: over all its outbox queues). */
  async sweep(): Promise<{ deliveries: number; events: number; outbox: number }> {
    const none = { deliveries: 0, events: 0, outbox: 0 };
    return underFleetLock(this.deps.db, LOCK_KEY, none, async () => {
      const deliveries = this.what.deliveries ? await sweepSource(this.deliveries) : 0;
      const events = this.what.events ? await this.sweepEvents() : 0;
      const perQueue: Record<string, number> = {};
      let outbox = 0;
      for (const source of this.outbox) {
        const n = await sweepSource(source);
        if (n) perQueue[source.name] = n;
        outbox += n;
      }
      if (deliveries || events || outbox) this.deps.logger.info({ deliveries, events, outbox: perQueue }, "outbox sweeper re-queued lost jobs");
      return { deliveries, events, outbox };
    });
  }

  /** Every undispatched event, a page at a time (within the pass budget): a page that stays stuck hides no other. */
  private async sweepEvents(): Promise<number> {
    const started = Date.now();
    let after: { createdAt: Date; id: string } | null = null;
    let queued = 0;
    for (;;) {
      const lost = await findUndispatchedTrendEvents(this.deps.db, this.deps.config.SWEEP_GRACE_SECONDS, EVENT_BATCH, after);
      queued += await this.requeueEvents(lost);
      if (lost.length < EVENT_BATCH || Date.now() - started > PASS_BUDGET_MS) return queued;
      after = lost[lost.length - 1];
    }
  }

  private async requeueEvents(lost: Array<{ id: string; payload: unknown }>): Promise<number> {
    const { db, queues, config } = this.deps;
    // Undispatched events are re-queued as one batch whose job id derives from their ids: while that job is
    // still queued, the next sweep finds the same events and adding it again is a no-op.
    if (!lost.length) return 0;
    const jobId = await enqueueTrendEvents(queues, lost.map((e) => e.payload as TrendEvent), { maxBytes: config.DELIVERY_BODY_MAX_BYTES });
    const job = await queues.get(QUEUES.trendEvents).getJob(jobId);
    const state = job ? await job.getState() : "unknown";
    const stillLost = async () => (await db.trendEventRecord.count({ where: { id: { in: lost.map((e) => e.id) }, dispatchedAt: null } })) > 0;
    // An old run of this very batch finished: run it again, unless it finished just now (re-read after the state).
    if ((state === "completed" || state === "failed") && (await stillLost())) {
      await job!.remove();
      await enqueueTrendEvents(queues, lost.map((e) => e.payload as TrendEvent), { maxBytes: config.DELIVERY_BODY_MAX_BYTES });
    }
    return lost.length;
  }
}

/**
 * One source's share of a pass. Two steps overlap: while one chunk's jobs are being added to Redis, the next chunk
 * is read from Postgres; one chunk at a time in Redis.
 */
async function sweepSource<R>(source: SweepSource<R>): Promise<number> {
  const started = Date.now();
  const find = (after: R | null) => quiet(source.find(after, CHUNK));
  let next = find(null);
  let adding: Promise<number> = Promise.resolve(0);
  let queued = 0;
  for (;;) {
    const rows = await next;
    if (!rows.length) break;
    const more = rows.length === CHUNK && Date.now() - started < PASS_BUDGET_MS;
    if (more) next = find(rows[rows.length - 1]);
    queued += await adding;
    adding = quiet(source.requeue(rows));
    if (!more) break;
  }
  return queued + (await adding);
}
