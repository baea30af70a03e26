import { QUEUES, type JobPayload, type WebhookPayload } from "@trendgate/contracts";
import type { Queues } from "@trendgate/queues";

export type DeliveryJob = JobPayload<typeof QUEUES.webhookDeliveries>;

const FIELD_ORDER = ["trend_name", "category", "severity", "velocity", "timestamp", "summary", "source_link", "recommended_next_steps"] as const;

/** The exact bytes sent: spec field order, whatever order the payload came back from Postgres (jsonb) in. */
export const serializePayload = (p: WebhookPayload) => JSON.stringify(Object.fromEntries(FIELD_ORDER.map((k) => [k, p[k]])));

// A completed delivery job stays in Redis for COMPLETED_JOB_SECONDS: its attempt record is written just after it
// completes, and until then the job itself says "sent" (see enqueueDelivery). The history is in Postgres.
export const COMPLETED_JOB_SECONDS = 15;
const JOB_OPTS = { removeOnComplete: { age: COMPLETED_JOB_SECONDS, count: 100_000 }, removeOnFail: { age: 7 * 86_400 } } as const;

/**
 * Queues one attempt of a delivery. The job id (`<delivery>-<attempt>`) makes a repeated call a no-op while that
 * job exists. With `stillPending` (the sweeper, resume, recover, replay) it re-queues an attempt whose job is gone,
 * failed, or completed without sending (held while the subscription was paused). A job that completed after
 * sending counts as sent even though the row may still say pending for a few milliseconds (the record is written
 * after the job completes); if that record was lost (a crash), the row is still pending once the job has aged out
 * of Redis, and the next sweep sends it again (at least once). `stillPending` must re-read the row AFTER the job's
 * state was read.
 */
export async function enqueueDelivery(queues: Queues, job: DeliveryJob, opts: { delayMs?: number; stillPending?: () => Promise<boolean> } = {}) {
  const jobId = `${job.delivery_id}-${job.attempt}`;
  if (opts.stillPending) {
    const existing = await queues.get(QUEUES.webhookDeliveries).getJob(jobId);
    const state = existing ? await existing.getState() : "missing";
    if (state !== "completed" && state !== "failed" && state !== "missing" && state !== "unknown") return false; // queued or running
    if (state === "completed" && !(existing!.returnvalue as { skipped?: string } | null)?.skipped) return false; // sent
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
