import { QUEUES, type JobPayload, type WebhookPayload } from "@trendgate/contracts";
import type { Queues } from "@trendgate/queues";

export type DeliveryJob = JobPayload<typeof QUEUES.webhookDeliveries>;

const FIELD_ORDER = ["trend_name", "category", "severity", "velocity", "timestamp", "summary", "source_link", "recommended_next_steps"] as const;

/** The exact bytes sent: spec field order, whatever order the payload came back from Postgres (jsonb) in. */
export const serializePayload = (p: WebhookPayload) => JSON.stringify(Object.fromEntries(FIELD_ORDER.map((k) => [k, p[k]])));

// Finished delivery jobs leave Redis at once: the execution record in Postgres is the history.
const JOB_OPTS = { removeOnComplete: true, removeOnFail: { age: 7 * 86_400 } } as const;

/**
 * Queues one attempt of a delivery. The job id (`<delivery>-<attempt>`) makes a repeated call a no-op while that
 * job exists. `stillPending` re-queues an attempt whose job is gone or finished without completing the delivery
 * (lost with Redis, held while the subscription was paused, failed): it must re-read the delivery row AFTER the
 * job was looked up, because a worker commits the row before it finishes (and removes) the job; without that
 * re-read, a delivery that succeeded a moment ago would look lost and be sent twice.
 */
export async function enqueueDelivery(queues: Queues, job: DeliveryJob, opts: { delayMs?: number; stillPending?: () => Promise<boolean> } = {}) {
  const jobId = `${job.delivery_id}-${job.attempt}`;
  if (opts.stillPending) {
    const existing = await queues.get(QUEUES.webhookDeliveries).getJob(jobId);
    const state = existing ? await existing.getState() : "missing";
    if (state !== "completed" && state !== "failed" && state !== "missing" && state !== "unknown") return false; // queued or running
    if (!(await opts.stillPending())) return false;
    await existing?.remove();
  }
  await queues.add(QUEUES.webhookDeliveries, job, { jobId, delay: Math.max(0, opts.delayMs ?? 0), ...JOB_OPTS });
  return true;
}

/** The same for many fresh deliveries at once (fan-out): one round trip. */
export async function enqueueDeliveries(queues: Queues, jobs: { job: DeliveryJob; delayMs: number }[]) {
  if (!jobs.length) return;
  await queues.get(QUEUES.webhookDeliveries).addBulk(jobs.map(({ job, delayMs }) => ({
    name: QUEUES.webhookDeliveries, data: job, opts: { jobId: `${job.delivery_id}-${job.attempt}`, delay: Math.max(0, delayMs), ...JOB_OPTS },
  })));
}
