import { DelayedError, type Job } from "bullmq";

/**
 * Thrown by an outbox handler to try the same attempt again in `ms` (pacing, e.g. about one post per second per
 * Slack channel): the job goes back to delayed and no attempt is counted or recorded.
 */
export class DeferError extends Error {
  constructor(readonly ms: number) {
    super(`deferred for ${ms} ms`);
  }
}

/**
 * Thrown by an outbox handler when another job carries this message's attempt (a batched send holds its lease): this
 * job ends without a record. If that job dies before recording, the message stays pending and the outbox sweeper
 * re-queues it (a job that completed `{skipped}` counts as not sent).
 */
export class HandedOffError extends Error {}

/**
 * Moves a running job back to delayed until `Date.now() + ms`, keeping its attempt (BullMQ's moveToDelayed, then
 * DelayedError so the worker neither completes nor fails it). Shared by the outbox and webhook deliveries.
 */
export async function deferJob(job: Job, token: string | undefined, ms: number): Promise<never> {
  await job.moveToDelayed(Date.now() + Math.max(0, Math.round(ms)), token);
  throw new DelayedError();
}
