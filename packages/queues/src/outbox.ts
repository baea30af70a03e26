import type { JobsOptions } from "bullmq";
import { OUTBOX_QUEUES, type OutboxJob, type OutboxQueueName, type QueueName } from "@trendgate/contracts";
import type { Queues } from "./queues.ts";

// The queue side of every outbox (webhook deliveries included): one job per attempt under a deterministic id, and
// the lookup that tells a lost job from one still queued, running or just finished.

/** The job id of one attempt of a message (`<id>-<attempt>`): a second add of the same attempt is a no-op while the job exists. */
export const outboxJobId = (id: string, attempt: number) => `${id}-${attempt}`;

export const isOutboxQueue = (name: string): name is OutboxQueueName => (OUTBOX_QUEUES as readonly string[]).includes(name);

/** A message row to queue (what addOutboxMessages returns); `attempts` made so far, 0 for a new message. */
export interface Dispatchable { id: string; queue: string; next_attempt_at: Date; attempts?: number }

/**
 * Queues the next attempt of each message (attempt 1 for new ones), delayed until its next_attempt_at: one addBulk
 * per queue. Call it after the rows committed; if it fails (Redis down), the sweeper queues them later.
 */
export async function dispatchOutbox(queues: Queues, rows: Dispatchable[]): Promise<void> {
  const byQueue = new Map<OutboxQueueName, Dispatchable[]>();
  for (const r of rows) {
    if (!isOutboxQueue(r.queue)) throw new Error(`${r.queue} is not an outbox queue (OUTBOX_QUEUES)`);
    (byQueue.get(r.queue) ?? byQueue.set(r.queue, []).get(r.queue)!).push(r);
  }
  const now = Date.now();
  await Promise.all([...byQueue].map(([name, rs]) => queues.get(name).addBulk(rs.map((r) => {
    const data: OutboxJob = { message_id: r.id, attempt: (r.attempts ?? 0) + 1 };
    return { name, data, opts: { jobId: outboxJobId(data.message_id, data.attempt), delay: Math.max(0, r.next_attempt_at.getTime() - now) } };
  }))));
}

/** Queues one attempt of one message after `delayMs` (the worker's next attempt); a no-op while that job exists. */
export async function queueOutboxAttempt(queues: Queues, name: OutboxQueueName, job: OutboxJob, delayMs: number): Promise<void> {
  await queues.add(name, job, { jobId: outboxJobId(job.message_id, job.attempt), delay: Math.max(0, Math.round(delayMs)) });
}

/**
 * Re-queues the jobs among `jobs` that were lost, for the sweeper (and for one-off re-queues such as resume): a
 * handful of round trips for thousands of jobs. Each job is looked up in one pipeline (HMGET of its hash: `timestamp`
 * says it exists, `finishedOn` that it finished, `returnvalue` that it completed and whether with `{skipped}`, the
 * fields BullMQ's own Job.fromId reads; getJobState would scan the wait list for every job, quadratic with thousands
 * waiting). Left alone: jobs waiting, delayed or running, and jobs that completed without `skipped` (they sent; their
 * record may still be on its way). The others (no job, failed, or completed `{skipped}`) are candidates:
 * `stillPending` re-reads their rows, AFTER the lookup, and returns the job ids (jobIdOf) still waiting for exactly
 * that attempt; finished jobs in their way are removed, and the rest is added with one addBulk (a job queued
 * meanwhile by someone else makes its add a no-op). Returns how many it queued.
 */
export async function requeueLost<J extends object>(
  queues: Queues, name: QueueName, jobs: J[], jobIdOf: (job: J) => string,
  stillPending: (candidates: J[]) => Promise<Set<string>>, opts: Omit<JobsOptions, "jobId"> = {},
): Promise<number> {
  if (!jobs.length) return 0;
  const queue = queues.get(name);
  const ids = jobs.map(jobIdOf);
  const lookup = queues.connection.pipeline();
  for (const id of ids) lookup.hmget(queue.toKey(id), "timestamp", "finishedOn", "returnvalue");
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
    inTheWay.add(i); // failed, or completed without sending
    candidates.push(i);
  });
  if (!candidates.length) return 0;
  const pending = await stillPending(candidates.map((i) => jobs[i]));
  const toAdd = candidates.filter((i) => pending.has(ids[i]));
  if (!toAdd.length) return 0;
  await Promise.all(toAdd.filter((i) => inTheWay.has(i)).map((i) => queue.remove(ids[i]).catch(() => 0)));
  await queue.addBulk(toAdd.map((i) => ({ name, data: jobs[i], opts: { ...opts, jobId: ids[i] } })));
  return toAdd.length;
}

const parseJson = (s: string): unknown => { try { return JSON.parse(s); } catch { return null; } };
