import { QUEUES, WebhookPayload, type TrendEvent } from "@trendgate/contracts";
import { enqueueDelivery, serializePayload } from "@trendgate/connector-webhook";
import { findOverdueDeliveries, findUndispatchedTrendEvents, isDeliveryPending } from "@trendgate/db";
import { enqueueTrendEvents } from "@trendgate/trends";
import type { WorkerDeps } from "../processors/types.ts";

const LOCK_KEY = 0x7467_0001; // pg advisory lock id: one sweeper at a time across the fleet
const BATCH = 500;

/**
 * The outbox sweeper: Postgres is the record of what must be delivered, Redis only schedules it. Every
 * SWEEP_INTERVAL_MS one worker process (whichever takes the advisory lock) re-queues deliveries that are overdue by
 * SWEEP_GRACE_SECONDS and trend events never matched, because their job was lost (Redis flushed or restarted
 * without persistence, a crash between commit and enqueue). Job ids make this idempotent: a job still queued is
 * left alone.
 */
export class OutboxSweeper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: WorkerDeps, private readonly what: { deliveries: boolean; events: boolean }) {}

  start() {
    const tick = () => {
      this.running = this.sweep().catch((err) => this.deps.logger.warn({ err: String(err) }, "outbox sweep failed")).finally(() => {
        if (this.timer) this.timer = setTimeout(tick, this.deps.config.SWEEP_INTERVAL_MS);
      });
    };
    this.timer = setTimeout(tick, this.deps.config.SWEEP_INTERVAL_MS);
  }

  async stop() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One pass; returns how many jobs it re-queued. */
  async sweep(): Promise<{ deliveries: number; events: number }> {
    const { db, queues, config } = this.deps;
    return db.$transaction(async (tx) => {
      const [{ locked }] = await tx.$queryRawUnsafe<{ locked: boolean }[]>(`SELECT pg_try_advisory_xact_lock(${LOCK_KEY}) AS locked`);
      if (!locked) return { deliveries: 0, events: 0 };
      let deliveries = 0, events = 0;
      if (this.what.deliveries) {
        for (const d of await findOverdueDeliveries(tx as never, config.SWEEP_GRACE_SECONDS, BATCH)) {
          const trigger = d.trigger === "test" ? "test" : d.attempts > 0 ? "recovery" : "trend_event";
          const stillPending = () => isDeliveryPending(db, d.id, d.attempts);
          const queued = await enqueueDelivery(queues, { delivery_id: d.id, webhook_id: d.subscription_id, attempt: d.attempts + 1, trigger, body: serializePayload(WebhookPayload.parse(d.payload)) }, { stillPending });
          if (queued) deliveries++;
        }
      }
      if (this.what.events) {
        // Undispatched events are re-queued as one batch whose job id derives from their ids: while that job is
        // still queued, the next sweep finds the same events and adding it again is a no-op.
        const lost = await findUndispatchedTrendEvents(tx as never, config.SWEEP_GRACE_SECONDS, BATCH);
        if (lost.length) {
          const jobId = await enqueueTrendEvents(queues, lost.map((e) => e.payload as TrendEvent));
          const job = await queues.get(QUEUES.trendEvents).getJob(jobId);
          const state = job ? await job.getState() : "unknown";
          const stillLost = async () => (await db.trendEventRecord.count({ where: { id: { in: lost.map((e) => e.id) }, dispatchedAt: null } })) > 0;
          // An old run of this very batch finished: run it again, unless it finished just now (re-read after the state).
          if ((state === "completed" || state === "failed") && (await stillLost())) {
            await job!.remove();
            await enqueueTrendEvents(queues, lost.map((e) => e.payload as TrendEvent));
          }
          events = lost.length;
        }
      }
      if (deliveries || events) this.deps.logger.info({ deliveries, events }, "outbox sweeper re-queued lost jobs");
      return { deliveries, events };
    }, { timeout: 60_000 });
  }
}
