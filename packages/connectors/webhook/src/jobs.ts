import { QUEUES, type JobPayload, type WebhookPayload } from "@trendgate/contracts";
import type { Queues } from "@trendgate/queues";

export type DeliveryJob = JobPayload<typeof QUEUES.webhookDeliveries>;

const FIELD_ORDER = ["trend_name", "category", "severity", "velocity", "timestamp", "summary", "source_link", "recommended_next_steps"] as const;

/** The exact bytes sent: spec field order, whatever order the payload came back from Postgres (jsonb) in. */
export const serializePayload = (p: WebhookPayload) => JSON.stringify(Object.fromEntries(FIELD_ORDER.map((k) => [k, p[k]])));

/**
 * Queues one attempt of a delivery. The job id (`<delivery>-<attempt>`) makes a repeated call a no-op while that
 * job exists; `replaceFinished` re-queues it when an earlier run finished without completing the delivery (it was
 * held while the subscription was paused, or its job was lost and failed).
 */
export async function enqueueDelivery(queues: Queues, job: DeliveryJob, opts: { delayMs?: number; replaceFinished?: boolean } = {}) {
  const jobId = `${job.delivery_id}-${job.attempt}`;
  if (opts.replaceFinished) {
    const existing = await queues.get(QUEUES.webhookDeliveries).getJob(jobId);
    if (existing) {
      const state = await existing.getState();
      if (state !== "completed" && state !== "failed") return;
      await existing.remove();
    }
  }
  await queues.add(QUEUES.webhookDeliveries, job, { jobId, delay: Math.max(0, opts.delayMs ?? 0) });
}
