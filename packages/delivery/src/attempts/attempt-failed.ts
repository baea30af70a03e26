import { UnrecoverableError } from "bullmq";

/**
 * Ends the job of a delivery attempt that failed, after the attempt is recorded and its retry (if any) queued, so the
 * job shows as failed in BullMQ (Bull Board's Failed tab, GET /status) with the reason, not as completed. It is an
 * UnrecoverableError: BullMQ does not run the job again (the retry is the next attempt's own job), whatever the
 * queue's `attempts`, which stay for jobs that fail before their attempt is recorded (a record write that failed).
 * The sweeper tells it from a lost job by the record: its attempt is no longer the one the row waits for.
 */
export class AttemptFailedError extends UnrecoverableError {
  constructor(attempt: number, reason: string, nextAt: Date | null) {
    super(`attempt ${attempt} failed: ${reason}; ${nextAt ? `attempt ${attempt + 1} at ${nextAt.toISOString()}` : "no retry (final)"}`);
  }
}
