import { QUEUES, type OutboxJob, type OutboxQueueName } from "@trendgate/contracts";
import { deliveryBody, requeueDeliveries, type DeliveryJob } from "@trendgate/webhooks";
import { findOverdueDeliveries, findOverdueOutboxMessages, pendingDeliveries, pendingOutboxMessages, type OverdueDelivery, type OverdueOutboxMessage } from "@trendgate/db";
import { outboxJobId, requeueLost } from "@trendgate/queues";
import type { WorkerDeps } from "../processors/types.ts";

// The sweeper's sources (apps/worker/src/sweepers/outbox-sweeper.ts): what it re-queues, per kind of row.

/** One kind of row the sweeper re-queues: keyset-paged overdue rows, and how to re-queue a page of them. */
export interface SweepSource<R> {
  name: string;
  /** Overdue rows after `after` (null: from the start), oldest first, at most `limit`. */
  find(after: R | null, limit: number): Promise<R[]>;
  /** Re-queues the rows whose jobs are lost; returns how many it queued. */
  requeue(rows: R[]): Promise<number>;
}

const jobIdOf = (j: OutboxJob) => outboxJobId(j.message_id, j.attempt);

/** What the outbox sweeper re-queues for one outbox queue: its overdue pending messages whose next attempt's job is lost. */
export function outboxSweepSource(deps: WorkerDeps, queue: OutboxQueueName): SweepSource<OverdueOutboxMessage> {
  const { db, queues, config } = deps;
  return {
    name: queue,
    find: (after, limit) => findOverdueOutboxMessages(db.$pool, queue, config.SWEEP_GRACE_SECONDS, limit, after),
    requeue: (rows) => requeueLost(queues, queue, rows.map((m): OutboxJob => ({ message_id: m.id, attempt: m.attempts + 1 })), jobIdOf, async (jobs) => {
      const pending = await pendingOutboxMessages(db.$pool, jobs.map((j) => ({ id: j.message_id, attempts: j.attempt - 1 })));
      return new Set(jobs.filter((j) => pending.has(j.message_id)).map(jobIdOf));
    }),
  };
}

/** Webhook deliveries: their own table, their job payload carrying the body; the same lost-job rule (requeueLost). */
export function webhookDeliveriesSource({ db, queues, config }: WorkerDeps): SweepSource<OverdueDelivery> {
  return {
    name: QUEUES.webhookDeliveries,
    find: (after, limit) => findOverdueDeliveries(db.$pool, config.SWEEP_GRACE_SECONDS, limit, after),
    requeue: (rows) => requeueDeliveries(queues, rows.map((d): DeliveryJob => ({
      delivery_id: d.id, webhook_id: d.subscription_id, attempt: d.attempts + 1,
      trigger: d.trigger === "test" ? "test" : d.attempts > 0 ? "recovery" : d.trigger === "account_event" ? "account_event" : "trend_event", test: d.trigger === "test",
      body: deliveryBody(d.payload, config.DELIVERY_BODY_MAX_BYTES),
    })), (js) => pendingDeliveries(db.$pool, js.map((j) => ({ id: j.delivery_id, attempts: j.attempt - 1 })))),
  };
}
