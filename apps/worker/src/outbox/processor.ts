import type { Job } from "bullmq";
import { OutboxJob, type OutboxQueueName } from "@trendgate/contracts";
import { isTransientDbError, loadOutboxMessage, recordOutboxAttempt, type OutboxAttemptRecord, type OutboxMessage, type RecordedAttempt } from "@trendgate/db";
import type { RetrySchedule } from "@trendgate/delivery";
import type { Logger } from "@trendgate/logger";
import { queueOutboxAttempt } from "@trendgate/queues";
import type { ProcessorFactory, WorkerDeps } from "../processors/types.ts";
import { DeferError, deferJob } from "./defer.ts";
import { judgeFailure } from "./verdict.ts";

/** Spread of each retry delay (+-), so that messages failing together do not retry in lockstep. */
export const OUTBOX_RETRY_JITTER = 0.2;
/** The longest Retry-After (or quota reset) honoured; beyond it the schedule's own delay is used. */
export const OUTBOX_MAX_RETRY_AFTER_SECONDS = 86_400;
/** Re-tries of an attempt record that failed transiently (ms): about 6 s in all, well inside a job's lock. */
const RECORD_RETRY_DELAYS_MS = [25, 50, 100, 200, 400, 800, 1600, 3200];

export interface OutboxContext {
  /** The running job and its lock token (for handlers that manage the job themselves). */
  job: Job;
  token?: string;
  /** This attempt's number (1 for the first). */
  attempt: number;
  /** No retry follows if this attempt fails with a retryable error. */
  lastAttempt: boolean;
  logger: Logger;
}

export type FinalOutcome = "succeeded" | "failed";

/**
 * Sends the messages of one outbox queue. `send` throws a ProviderError to say how it failed (its kind decides retry
 * or not), or a DeferError to run the same attempt later without counting it; what it returns is kept on the message
 * (`result`).
 */
export interface OutboxHandler {
  /** Jobs this process runs at once (defaults to OUTBOX_CONCURRENCY). */
  concurrency?: number;
  send(message: OutboxMessage, ctx: OutboxContext): Promise<Record<string, unknown> | void>;
  /**
   * Called once a message's final outcome is recorded (not for cancelled ones), with the message as recorded, e.g. to
   * show a delivery error on the operator item it was about. Errors are logged; the outcome stands. Not called again
   * if the process dies between the record and the call.
   */
  onFinal?(message: OutboxMessage, outcome: FinalOutcome, error: Error | null): Promise<void> | void;
  /** Shutdown, after the worker stopped taking jobs. */
  close?(): Promise<void>;
}

/**
 * The processor of an outbox queue: one job per attempt ({message_id, attempt}); the row in outbox_messages is the
 * record. Each attempt is recorded (durably) before the next one is queued, under its deterministic job id, and the
 * outbox sweeper re-queues any attempt whose job was lost. A job that runs again (a crash, a stalled lock, BullMQ
 * retrying a failed job, the sweeper) finds its attempt already recorded and only makes sure the next one exists,
 * so an attempt is sent once unless a crash falls between the send and its record (then at least once).
 */
export function outboxProcessor(queue: OutboxQueueName, createHandler: (deps: WorkerDeps) => OutboxHandler): ProcessorFactory {
  return {
    queue,
    create(deps) {
      const { config, db, queues, logger } = deps;
      const handler = createHandler(deps);
      const schedule: RetrySchedule = {
        delaysSeconds: config.OUTBOX_RETRY_SCHEDULE_SECONDS,
        jitter: OUTBOX_RETRY_JITTER,
        maxRetryAfterSeconds: OUTBOX_MAX_RETRY_AFTER_SECONDS,
      };
      const log = logger.child({ queue });

      return {
        concurrency: handler.concurrency ?? config.OUTBOX_CONCURRENCY,
        close: async () => { await handler.close?.(); },
        async process(job, token) {
          const data = OutboxJob.parse(job.data);
          const message = await loadOutboxMessage(db, data.message_id);
          if (!message) return { skipped: "message deleted" };
          if (message.status !== "pending") return { skipped: `message ${message.status}` };
          if (message.attempts >= data.attempt) { // this attempt ran and was recorded before: only the next one may be missing
            if (message.attempts === data.attempt)
              await queueOutboxAttempt(queues, queue, { message_id: message.id, attempt: data.attempt + 1 }, message.nextAttemptAt.getTime() - Date.now());
            return { skipped: "attempt already recorded" };
          }
          if (message.attempts < data.attempt - 1) return { skipped: "an earlier attempt is not recorded" }; // its own job sends it

          const ctx: OutboxContext = { job, token, attempt: data.attempt, lastAttempt: data.attempt > schedule.delaysSeconds.length, logger: log };
          const started = Date.now();
          let record: OutboxAttemptRecord;
          let error: Error | null = null;
          try {
            const result = await handler.send(message, ctx);
            record = { messageId: message.id, attempt: data.attempt, outcome: "succeeded", durationMs: Date.now() - started, result: result ?? undefined };
          } catch (err) {
            if (err instanceof DeferError) return deferJob(job, token, err.ms);
            const v = judgeFailure(err, schedule, data.attempt);
            if (v.unexpected) log.warn({ message_id: message.id, attempt: data.attempt, err: String(err) }, "outbox send failed with an unmapped error; retrying as unavailable");
            error = err instanceof Error ? err : new Error(String(err));
            record = {
              messageId: message.id, attempt: data.attempt, outcome: v.outcome, durationMs: Date.now() - started, responseStatus: v.responseStatus,
              errorClass: v.errorClass, errorMessage: v.errorMessage, nextRetryAt: v.delayMs === null ? null : new Date(Date.now() + v.delayMs),
            };
          }
          // Durable before the next attempt is queued. If it cannot be written even after the re-tries, the job fails
          // and runs again: it finds the attempt unrecorded and sends it again (at least once, never unrecorded).
          const saved = await recordWithRetries(() => recordOutboxAttempt(db, record));
          if (!saved.recorded) return { skipped: "attempt already recorded" }; // a duplicate run recorded it first
          if (saved.status === "pending" && record.nextRetryAt) {
            await queueOutboxAttempt(queues, queue, { message_id: message.id, attempt: data.attempt + 1 }, record.nextRetryAt.getTime() - Date.now())
              .catch((err) => log.warn({ message_id: message.id, err: String(err) }, "retry not queued; the sweeper will queue it"));
          }
          if (saved.status === "succeeded" || saved.status === "failed") {
            if (saved.status === "failed") log.warn({ message_id: message.id, attempt: data.attempt, error_class: record.errorClass }, "outbox message failed");
            const final: OutboxMessage = {
              ...message, status: saved.status, attempts: data.attempt, lastError: record.errorMessage ?? null,
              result: (record.result ?? message.result) as OutboxMessage["result"], completedAt: new Date(),
            };
            try {
              await handler.onFinal?.(final, saved.status, error);
            } catch (err) {
              log.warn({ message_id: message.id, err: String(err) }, "outbox onFinal hook failed");
            }
          }
          return { outcome: record.outcome, attempt: data.attempt };
        },
      };
    },
  };
}

async function recordWithRetries(write: () => Promise<RecordedAttempt>): Promise<RecordedAttempt> {
  for (let i = 0; ; i++) {
    try {
      return await write();
    } catch (err) {
      if (i >= RECORD_RETRY_DELAYS_MS.length || !isTransientDbError(err)) throw err;
      await new Promise((r) => setTimeout(r, RECORD_RETRY_DELAYS_MS[i] * (0.75 + Math.random() * 0.5)));
    }
  }
}
