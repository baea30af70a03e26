import { boundTrendText, QUEUES, TREND_EVENT_LIMITS, type JobPayload, type WebhookPayload } from "@trendgate/contracts";
import type { Queues } from "@trendgate/queues";

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
  const jobId = deliveryJobId(job);
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

/** The job id of one attempt of a delivery: a second add of the same attempt is a no-op while the job exists. */
export const deliveryJobId = (job: Pick<DeliveryJob, "delivery_id" | "attempt">) => `${job.delivery_id}-${job.attempt}`;

/**
 * enqueueDelivery with `stillPending` for many deliveries at once (the outbox sweeper): the same rules, in a handful
 * of round trips instead of three per delivery. The jobs are looked up in one pipeline (HMGET of each job's hash:
 * `timestamp` says it exists, `finishedOn` that it finished, `returnvalue` that it completed and whether it was
 * skipped; the fields BullMQ's own Job.fromId reads). BullMQ's getJobState would also do, but it scans the wait list
 * for every job: quadratic with thousands waiting. Then `stillPending` re-reads the rows in one query (AFTER the
 * jobs, as above) and returns the delivery ids still waiting for exactly that attempt; finished jobs in the way
 * (failed, or completed without sending) are removed, and the rest is added with one addBulk (deterministic job
 * ids: a job queued meanwhile by someone else makes its add a no-op). Returns how many it queued.
 */
export async function requeueDeliveries(queues: Queues, jobs: DeliveryJob[], stillPending: (jobs: DeliveryJob[]) => Promise<Set<string>>): Promise<number> {
  if (!jobs.length) return 0;
  const queue = queues.get(QUEUES.webhookDeliveries);
  const lookup = queues.connection.pipeline();
  for (const j of jobs) lookup.hmget(queue.toKey(deliveryJobId(j)), "timestamp", "finishedOn", "returnvalue");
  const found = (await lookup.exec()) ?? [];
  const inTheWay = new Set<number>();
  const candidates: number[] = [];
  jobs.forEach((_, i) => {
    const [err, fields] = found[i] ?? [new Error("no reply"), null];
    if (err) return; // unknown: leave it to the next sweep
    const [timestamp, finishedOn, returnvalue] = fields as (string | null)[];
    if (timestamp === null) { candidates.push(i); return; } // no such job: lost
    if (finishedOn === null) return; // waiting, delayed or running
    if (returnvalue !== null && !(parseJson(returnvalue) as { skipped?: string } | null)?.skipped) return; // sent; its record is being written
    inTheWay.add(i); // failed, or completed without sending (held while paused)
    candidates.push(i);
  });
  if (!candidates.length) return 0;
  const pending = await stillPending(candidates.map((i) => jobs[i]));
  const toAdd = candidates.filter((i) => pending.has(jobs[i].delivery_id));
  if (!toAdd.length) return 0;
  await Promise.all(toAdd.filter((i) => inTheWay.has(i)).map((i) => queue.remove(deliveryJobId(jobs[i])).catch(() => 0)));
  await queue.addBulk(toAdd.map((i) => ({ name: QUEUES.webhookDeliveries, data: jobs[i], opts: { jobId: deliveryJobId(jobs[i]), ...JOB_OPTS } })));
  return toAdd.length;
}

const parseJson = (s: string): unknown => { try { return JSON.parse(s); } catch { return null; } };

/** The same for many fresh deliveries at once (fan-out): one round trip. */
export async function enqueueDeliveries(queues: Queues, jobs: { job: DeliveryJob; delayMs: number }[]) {
  if (!jobs.length) return;
  await queues.get(QUEUES.webhookDeliveries).addBulk(jobs.map(({ job, delayMs }) => ({
    name: QUEUES.webhookDeliveries, data: job, opts: { jobId: deliveryJobId(job), delay: Math.max(0, delayMs), ...JOB_OPTS },
  })));
}
