import { QUEUES, WebhookPayload, type TrendEvent } from "@trendgate/contracts";
import { requeueDeliveries, serializePayload, type DeliveryJob } from "@trendgate/connector-webhook";
import { findOverdueDeliveries, findUndispatchedTrendEvents, pendingDeliveries, type OverdueDelivery } from "@trendgate/db";
import { enqueueTrendEvents } from "@trendgate/trends";
import type { WorkerDeps } from "../processors/types.ts";

const LOCK_KEY = 0x7467_0001; // pg advisory lock id: one sweeper at a time across the fleet
/** Overdue deliveries handled per step: one query, a pipelined state check, one pending re-check, one addBulk. */
const CHUNK = 1000;
/** A pass stops starting new steps after this long; the next pass (SWEEP_INTERVAL_MS later) goes on. */
const PASS_BUDGET_MS = 5000;
const EVENT_BATCH = 500;

/**
 * The outbox sweeper: Postgres is the record of what must be delivered, Redis only schedules it. Every
 * SWEEP_INTERVAL_MS one worker process (whichever takes the advisory lock) re-queues deliveries that are overdue by
 * SWEEP_GRACE_SECONDS and trend events never matched, because their job was lost (Redis flushed or restarted
 * without persistence, a crash between commit and enqueue). Job ids make this idempotent: a job still queued is
 * left alone.
 *
 * Set-based, so that recovering from a Redis loss takes seconds, not minutes: overdue rows are read CHUNK at a time
 * (keyset-paged, so rows whose new jobs are still waiting are not read again in the same pass), their jobs' states
 * looked up together (one pipeline), the rows re-read once in one query, and the lost ones queued with one addBulk,
 * while the next chunk is read. The lock is a session-level advisory lock on one pooled connection, held only for
 * the pass (bounded by PASS_BUDGET_MS); the queries run on other connections in autocommit: no transaction stays
 * open across the Redis calls, so the sweeper never holds back vacuum or pins a snapshot.
 */
/** Marks a promise as handled now (it is awaited later): a rejection meanwhile must not count as unhandled. */
function quiet<T>(p: Promise<T>): Promise<T> {
  p.catch(() => {});
  return p;
}

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
    const client = await this.deps.db.$pool.connect();
    // A checked-out client has no error listener of its own: without one, a connection cut while we wait on Redis
    // would be an unhandled 'error' event (a crash). The next query on it fails instead, and it is discarded below.
    let broken: Error | undefined;
    const onError = (err: Error) => { broken = err; };
    client.on("error", onError);
    try {
      const { rows } = await client.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1) AS locked", [LOCK_KEY]);
      if (!rows[0].locked) return { deliveries: 0, events: 0 };
      try {
        const deliveries = this.what.deliveries ? await this.sweepDeliveries() : 0;
        const events = this.what.events ? await this.sweepEvents() : 0;
        if (deliveries || events) this.deps.logger.info({ deliveries, events }, "outbox sweeper re-queued lost jobs");
        return { deliveries, events };
      } finally {
        await client.query("SELECT pg_advisory_unlock($1)", [LOCK_KEY]).catch((err) => { broken ??= err; });
      }
    } catch (err) {
      broken ??= err as Error;
      throw err;
    } finally {
      client.off("error", onError);
      client.release(broken); // a broken connection is closed, and its session lock goes with it
    }
  }

  private async sweepDeliveries(): Promise<number> {
    const { db, queues, config } = this.deps;
    const started = Date.now();
    const find = (after: OverdueDelivery | null) => quiet(findOverdueDeliveries(db.$pool, config.SWEEP_GRACE_SECONDS, CHUNK, after));
    const requeue = (rows: OverdueDelivery[]) => quiet(requeueDeliveries(queues, rows.map((d): DeliveryJob => ({
      delivery_id: d.id, webhook_id: d.subscription_id, attempt: d.attempts + 1,
      trigger: d.trigger === "test" ? "test" : d.attempts > 0 ? "recovery" : "trend_event",
      body: serializePayload(WebhookPayload.parse(d.payload), config.DELIVERY_BODY_MAX_BYTES),
    })), (js) => pendingDeliveries(db.$pool, js.map((j) => ({ id: j.delivery_id, attempts: j.attempt - 1 })))));
    // Two steps overlap: while one chunk's jobs are being added to Redis, the next chunk is read from Postgres.
    let next = find(null);
    let adding: Promise<number> = Promise.resolve(0);
    let queued = 0;
    for (;;) {
      const rows = await next;
      if (!rows.length) break;
      const more = rows.length === CHUNK && Date.now() - started < PASS_BUDGET_MS;
      if (more) next = find(rows[rows.length - 1]);
      queued += await adding; // one chunk at a time in Redis
      adding = requeue(rows);
      if (!more) break;
    }
    return queued + (await adding);
  }

  private async sweepEvents(): Promise<number> {
    const { db, queues, config } = this.deps;
    // Undispatched events are re-queued as one batch whose job id derives from their ids: while that job is
    // still queued, the next sweep finds the same events and adding it again is a no-op.
    const lost = await findUndispatchedTrendEvents(db, config.SWEEP_GRACE_SECONDS, EVENT_BATCH);
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
