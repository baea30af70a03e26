import { boundTrendText, QUEUES, StoredOperationalPayload, TREND_EVENT_LIMITS, WebhookPayload, type JobPayload } from "@trendgate/contracts";
import { isDeliveryPending, type Db } from "@trendgate/db";
import { outboxJobId, requeueLost, type Queues } from "@trendgate/queues";

export type DeliveryJob = JobPayload<typeof QUEUES.webhookDeliveries>;

const FIELD_ORDER = ["trend_name", "category", "severity", "velocity", "timestamp", "summary", "source_link", "recommended_next_steps"] as const;

/**
 * The exact bytes sent: spec field order, whatever order the payload came back from Postgres (jsonb) in, and within
 * the size cap (rows stored before the cap existed, digests, replays and the sweeper all come through here).
 */
export const serializePayload = (p: WebhookPayload, maxBytes: number = TREND_EVENT_LIMITS.maxBytes) => {
  const b = boundTrendText(p, maxBytes);
  return JSON.stringify(Object.fromEntries(FIELD_ORDER.map((k) => [k, b[k]])));
};

const OPERATIONAL_ORDER = ["id", "type", "created_at", "data"] as const;

/**
 * A stored delivery's body as sent: a trend event's spec body (serializePayload), or an operational event's account
 * event, in its own field order.
 */
export function deliveryBody(stored: unknown, maxBytes: number = TREND_EVENT_LIMITS.maxBytes): string {
  const trend = WebhookPayload.safeParse(stored);
  if (trend.success) return serializePayload(trend.data, maxBytes);
  const op = StoredOperationalPayload.parse(stored);
  return JSON.stringify(Object.fromEntries(OPERATIONAL_ORDER.map((k) => [k, op[k]])));
}

// A completed delivery job stays in Redis for COMPLETED_JOB_SECONDS: its attempt record is written just after it
// completes, and until then the job itself says "sent" (see enqueueDelivery). The history is in Postgres.
export const COMPLETED_JOB_SECONDS = 15;
// Every failed attempt ends its job failed (for Bull Board and GET /status): a broken receiver fails thousands, each
// holding its body (up to DELIVERY_BODY_MAX_BYTES), so the failed set keeps the latest FAILED_JOBS_KEPT for a day.
export const FAILED_JOBS_KEPT = 1000;
const JOB_OPTS = { removeOnComplete: { age: COMPLETED_JOB_SECONDS, count: 100_000 }, removeOnFail: { age: 86_400, count: FAILED_JOBS_KEPT } } as const;

/**
 * Queues one attempt of a delivery. The job id (`<delivery>-<attempt>`, the outbox convention) makes a repeated call
 * a no-op while that job exists. With `stillPending` (resume, recover, replay) it re-queues an attempt whose job is
 * gone, failed, or completed without sending (held while the subscription was paused), by the outbox's own rule
 * (requeueLost): a job that completed after sending counts as sent even though the row may still say pending for a
 * few milliseconds (the record is written after the job completes); if that record was lost (a crash), the row is
 * still pending once the job has aged out of Redis, and the next sweep sends it again (at least once).
 * `stillPending` re-reads the row AFTER the job's state was read.
 */
export async function enqueueDelivery(queues: Queues, job: DeliveryJob, opts: { delayMs?: number; stillPending?: () => Promise<boolean> } = {}) {
  const delay = Math.max(0, opts.delayMs ?? 0);
  const { stillPending } = opts;
  if (stillPending) {
    const queued = await requeueLost(queues, QUEUES.webhookDeliveries, [job], deliveryJobId,
      async ([j]) => new Set((await stillPending()) ? [deliveryJobId(j)] : []), { delay, ...JOB_OPTS });
    return queued > 0;
  }
  await queues.add(QUEUES.webhookDeliveries, job, { jobId: deliveryJobId(job), delay, ...JOB_OPTS });
  return true;
}

/** Whether a job's delivery is a test (its attempt may be a replay or a recovery of one). */
export const isTestDelivery = (job: Pick<DeliveryJob, "test" | "trigger">): boolean => job.test ?? job.trigger === "test";

/** The job id of one attempt of a delivery: a second add of the same attempt is a no-op while the job exists. */
export const deliveryJobId = (job: Pick<DeliveryJob, "delivery_id" | "attempt">) => outboxJobId(job.delivery_id, job.attempt);

/**
 * enqueueDelivery with `stillPending` for many deliveries at once (the outbox sweeper): the outbox's requeueLost,
 * with `stillPending` returning the delivery ids still waiting for exactly that attempt. Returns how many it queued.
 */
export async function requeueDeliveries(queues: Queues, jobs: DeliveryJob[], stillPending: (jobs: DeliveryJob[]) => Promise<Set<string>>): Promise<number> {
  return requeueLost(queues, QUEUES.webhookDeliveries, jobs, deliveryJobId, async (candidates) => {
    const pending = await stillPending(candidates);
    return new Set(candidates.filter((j) => pending.has(j.delivery_id)).map(deliveryJobId));
  }, JOB_OPTS);
}

/** The same for many fresh deliveries at once (fan-out): one round trip. */
export async function enqueueDeliveries(queues: Queues, jobs: { job: DeliveryJob; delayMs: number }[]) {
  if (!jobs.length) return;
  await queues.get(QUEUES.webhookDeliveries).addBulk(jobs.map(({ job, delayMs }) => ({
    name: QUEUES.webhookDeliveries, data: job, opts: { jobId: deliveryJobId(job), delay: Math.max(0, delayMs), ...JOB_OPTS },
  })));
}

/**
 * A delivery job a request queues once its transaction has committed (the gateway's Reply carries it): a fresh
 * delivery, or, with `pendingAttempts`, a pending one queued again (resume, replay, recover) only while its row still
 * waits for that attempt.
 */
export interface DeliveryToQueue {
  job: DeliveryJob;
  delayMs?: number;
  pendingAttempts?: number;
}

/** Queues a committed request's deliveries: the fresh ones in one round trip, the re-queued ones by enqueueDelivery's rule. */
export async function queueDeliveries(queues: Queues, db: Db, deliveries: readonly DeliveryToQueue[]): Promise<void> {
  await enqueueDeliveries(queues, deliveries.filter((d) => d.pendingAttempts === undefined).map((d) => ({ job: d.job, delayMs: d.delayMs ?? 0 })));
  for (const d of deliveries) {
    const attempts = d.pendingAttempts;
    if (attempts !== undefined) await enqueueDelivery(queues, d.job, { delayMs: d.delayMs, stillPending: () => isDeliveryPending(db, d.job.delivery_id, attempts) });
  }
}
