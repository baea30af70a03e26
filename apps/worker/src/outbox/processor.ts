import type { Job } from "bullmq";
import type { z } from "zod";
import { OUTBOX_PAYLOADS, OutboxJob, type OutboxPayload, type OutboxQueueName } from "@trendgate/contracts";
import { isTransientDbError, loadOutboxMessage, recordOutboxAttempts, type OutboxAttemptRecord, type OutboxMessage, type RecordedAttempt } from "@trendgate/db";
import { retrySchedules } from "@trendgate/config";
import { BatchWriter, TRANSIENT_RETRY_DELAYS_MS } from "@trendgate/delivery";
import type { Logger } from "@trendgate/logger";
import { queueOutboxAttempt } from "@trendgate/queues";
import type { ProcessorFactory, WorkerDeps } from "../processors/types.ts";
import { AttemptFailedError } from "./attempt-failed.ts";
import { DeferError, deferJob, HandedOffError } from "./defer.ts";
import { InvalidPayloadError } from "./invalid-payload.ts";
import { AttemptSpool } from "./spool.ts";
import { judgeFailure } from "./verdict.ts";

/** How one attempt at a message ended: what send returned, or what it threw. */
export type SendOutcome =
  | { ok: true; result?: Record<string, unknown> | void; durationMs: number; /** The peer's HTTP status. */ responseStatus?: number | null }
  | { ok: false; error: unknown; durationMs: number };

/** A message whose payload parsed with its queue's schema (OUTBOX_PAYLOADS). */
export type OutboxMessageOf<P> = Omit<OutboxMessage, "payload"> & { payload: P };

export interface OutboxContext<P> {
  /** The running job and its lock token (for handlers that manage the job themselves). */
  job: Job;
  token?: string;
  /** This attempt's number (1 for the first). */
  attempt: number;
  /** No retry follows if this attempt fails with a retryable error. */
  lastAttempt: boolean;
  logger: Logger;
  /**
   * Records an attempt at another message that this send carried too (a batched request), exactly as the processor
   * records its own: the attempt row, the next attempt queued, onFinal. Only applies while that message has fewer
   * attempts (a message recorded meanwhile is left as it is).
   */
  settle(message: OutboxMessageOf<P>, attempt: number, outcome: SendOutcome): Promise<RecordedAttempt>;
  /** Tells the peer's HTTP status of a send that succeeded, for its attempt record (a failure's is on its ProviderError). */
  responded(status: number): void;
}

/** `unknown`: the peer may have acted on the last attempt (see judgeFailure); not retried, the user may replay it. */
export type FinalOutcome = "succeeded" | "failed" | "unknown";

/**
 * Sends the messages of one outbox queue, their payloads already parsed. `send` throws a ProviderError to say how it
 * failed (its kind decides retry or not), a DeferError to run the same attempt later without counting it, or a
 * HandedOffError when another job carries the attempt; what it returns is kept on the message (`result`).
 */
export interface OutboxHandler<P> {
  /** Jobs this process runs at once (defaults to OUTBOX_CONCURRENCY). */
  concurrency?: number;
  send(message: OutboxMessageOf<P>, ctx: OutboxContext<P>): Promise<Record<string, unknown> | void>;
  /**
   * Called once a message's final outcome is recorded (not for cancelled ones), with the message as recorded, e.g. to
   * show a delivery error on the operator item it was about. Errors are logged; the outcome stands. Not called again
   * if the process dies between the record and the call, nor for a message whose payload does not parse.
   */
  onFinal?(message: OutboxMessageOf<P>, outcome: FinalOutcome, error: Error | null): Promise<void> | void;
  /** Shutdown, after the worker stopped taking jobs. */
  close?(): Promise<void>;
}

/**
 * The processor of an outbox queue: one job per attempt ({message_id, attempt}); the row in outbox_messages is the
 * record. Each attempt is recorded (durably) before the next one is queued, under its deterministic job id, and the
 * outbox sweeper re-queues any attempt whose job was lost. A job that runs again (a crash, a stalled lock, BullMQ
 * retrying a job whose record failed, the sweeper) finds its attempt already recorded and only makes sure the next one
 * exists, so an attempt is sent once unless a crash falls between the send and its record (then at least once). A job
 * whose attempt failed ends failed (AttemptFailedError) once that attempt is recorded and its retry queued. A record
 * that cannot be written (Postgres down) is kept in Redis (AttemptSpool) and written by the message's next job before
 * anything else: an attempt is never sent again for want of its record. The payload is parsed once, before `send`,
 * with the queue's schema (OUTBOX_PAYLOADS, or `schema`): one that does not parse fails its message at once
 * (InvalidPayloadError, error class `invalid_payload`) without reaching the handler.
 */
export function outboxProcessor<Q extends OutboxQueueName>(queue: Q, createHandler: (deps: WorkerDeps) => OutboxHandler<OutboxPayload<Q>>): ProcessorFactory;
export function outboxProcessor<P>(queue: OutboxQueueName, createHandler: (deps: WorkerDeps) => OutboxHandler<P>, schema: z.ZodType<P>): ProcessorFactory;
export function outboxProcessor(queue: OutboxQueueName, createHandler: (deps: WorkerDeps) => OutboxHandler<unknown>, schema: z.ZodType = OUTBOX_PAYLOADS[queue]): ProcessorFactory {
  return {
    queue,
    create(deps) {
      const { config, db, queues, logger } = deps;
      const handler = createHandler(deps);
      type Typed = OutboxMessageOf<unknown>;
      /** The message with its payload parsed, or the reason it does not parse. */
      const parse = (m: OutboxMessage): Typed | InvalidPayloadError => {
        const p = schema.safeParse(m.payload);
        return p.success ? { ...m, payload: p.data } : new InvalidPayloadError(queue, p.error);
      };
      const schedule = retrySchedules(config).outbox;
      const log = logger.child({ queue });
      // Attempt records of concurrent jobs commit together. A write that fails transiently is tried again here (it
      // is idempotent); one that still fails is kept in the spool and fails its job, whose next run writes it first.
      const writer = new BatchWriter<OutboxAttemptRecord, RecordedAttempt>((records) => recordOutboxAttempts(db, records), {
        maxItems: config.OUTBOX_RECORD_BATCH_SIZE, maxWaitMs: config.OUTBOX_RECORD_BATCH_WAIT_MS,
        maxConcurrent: 4, isTransient: isTransientDbError, retryDelaysMs: TRANSIENT_RETRY_DELAYS_MS,
      });
      const spool = new AttemptSpool(queues.connection, config.QUEUE_PREFIX, queue);

      /** Writes a record, or keeps it in the spool when it cannot be written (and throws, failing the job). */
      async function write(record: OutboxAttemptRecord): Promise<RecordedAttempt> {
        try {
          return await writer.add(record);
        } catch (err) {
          await spool.keep(record).catch((e) => log.error({ message_id: record.messageId, attempt: record.attempt, err: String(e) }, "attempt record neither written nor kept"));
          log.warn({ message_id: record.messageId, attempt: record.attempt, err: String(err) }, "attempt record not written; kept until the database answers");
          throw err;
        }
      }

      /**
       * Records one attempt (durably, before the next one is queued), queues the next one, runs onFinal. `failure`: what
       * ends the job of an attempt that failed and was recorded here.
       */
      async function settle(message: Typed | OutboxMessage, attempt: number, outcome: SendOutcome, typed = true): Promise<RecordedAttempt & { failure: AttemptFailedError | null }> {
        let record: OutboxAttemptRecord;
        let error: Error | null = null;
        if (outcome.ok) {
          record = {
            messageId: message.id, attempt, outcome: "succeeded", durationMs: outcome.durationMs, responseStatus: outcome.responseStatus ?? null,
            result: outcome.result ?? undefined,
          };
        } else {
          const v = judgeFailure(outcome.error, schedule, attempt);
          if (v.unexpected) log.warn({ message_id: message.id, attempt, err: String(outcome.error) }, "outbox send failed with an unmapped error; retrying as unavailable");
          error = outcome.error instanceof Error ? outcome.error : new Error(String(outcome.error));
          record = {
            messageId: message.id, attempt, outcome: v.outcome, durationMs: outcome.durationMs, responseStatus: v.responseStatus,
            errorClass: v.errorClass, errorMessage: v.errorMessage, nextRetryAt: v.delayMs === null ? null : new Date(Date.now() + v.delayMs),
          };
        }
        return after(message, typed, record, error, outcome.ok, await write(record));
      }

      /**
       * What follows a written record: the next attempt queued, onFinal (for a message whose payload parsed: `typed`),
       * and what ends the job of a failed attempt.
       */
      async function after(message: Typed | OutboxMessage, typed: boolean, record: OutboxAttemptRecord, error: Error | null, ok: boolean, saved: RecordedAttempt): Promise<RecordedAttempt & { failure: AttemptFailedError | null }> {
        const attempt = record.attempt;
        if (!saved.recorded) return { ...saved, failure: null }; // a duplicate run recorded it first
        if (saved.status === "pending" && record.nextRetryAt) {
          await queueOutboxAttempt(queues, queue, { message_id: message.id, attempt: attempt + 1 }, record.nextRetryAt.getTime() - Date.now())
            .catch((err) => log.warn({ message_id: message.id, err: String(err) }, "retry not queued; the sweeper will queue it"));
        }
        if (saved.status === "succeeded" || saved.status === "failed" || saved.status === "unknown") {
          if (saved.status === "failed") log.warn({ message_id: message.id, attempt, error_class: record.errorClass }, "outbox message failed");
          const final: Typed = {
            ...message, status: saved.status, attempts: attempt, lastError: record.errorMessage ?? null,
            result: (record.result ?? message.result) as OutboxMessage["result"], completedAt: new Date(),
          };
          try {
            if (typed) await handler.onFinal?.(final, saved.status, error);
          } catch (err) {
            log.warn({ message_id: message.id, err: String(err) }, "outbox onFinal hook failed");
          }
        }
        const failure = ok ? null
          : new AttemptFailedError(attempt, `${record.errorClass}: ${record.errorMessage}`, saved.status === "pending" ? record.nextRetryAt ?? null : null);
        return { ...saved, failure };
      }

      return {
        concurrency: handler.concurrency ?? config.OUTBOX_CONCURRENCY,
        close: async () => { await writer.flush(); await handler.close?.(); },
        async process(job, token) {
          const data = OutboxJob.parse(job.data);
          const [kept, loaded] = await Promise.all([spool.find(data.message_id), loadOutboxMessage(db, data.message_id)]);
          let message = loaded;
          if (kept && message) { // an attempt sent earlier whose record could not be written: written first
            const saved = await writer.add(kept);
            const parsed = parse(message);
            const valid = !(parsed instanceof InvalidPayloadError);
            await after(valid ? parsed : message, valid, kept, kept.errorMessage ? new Error(kept.errorMessage) : null, kept.outcome === "succeeded", saved);
            await spool.written(kept);
            message = await loadOutboxMessage(db, data.message_id);
          } else if (kept) await spool.written(kept);
          if (!message) return { skipped: "message deleted" };
          if (message.status !== "pending") return { skipped: `message ${message.status}` };
          if (message.attempts >= data.attempt) { // this attempt ran and was recorded before: only the next one may be missing
            if (message.attempts === data.attempt)
              await queueOutboxAttempt(queues, queue, { message_id: message.id, attempt: data.attempt + 1 }, message.nextAttemptAt.getTime() - Date.now());
            return { skipped: "attempt already recorded" };
          }
          if (message.attempts < data.attempt - 1) return { skipped: "an earlier attempt is not recorded" }; // its own job sends it
          const typed = parse(message);
          if (typed instanceof InvalidPayloadError) { // sending it again would not change it: failed for good, never retried
            log.error({ message_id: message.id, err: typed.message }, "outbox message with an invalid payload failed");
            const saved = await settle(message, data.attempt, { ok: false, error: typed, durationMs: 0 }, false);
            if (!saved.recorded) return { skipped: "attempt already recorded" };
            throw saved.failure!;
          }

          let responseStatus: number | null = null;
          // A batched send records this job's own attempt through settle: if that attempt failed, so does this job.
          let ownFailure = null as AttemptFailedError | null;
          const settleOwn = async (m: Typed, attempt: number, outcome: SendOutcome) => {
            const saved = await settle(m, attempt, outcome);
            if (m.id === message.id && attempt === data.attempt) ownFailure = saved.failure;
            return saved;
          };
          const ctx: OutboxContext<unknown> = {
            job, token, attempt: data.attempt, lastAttempt: data.attempt > schedule.delaysSeconds.length, logger: log, settle: settleOwn,
            responded: (status) => { responseStatus = status; },
          };
          const started = Date.now();
          let outcome: SendOutcome;
          try {
            const result = await handler.send(typed, ctx);
            outcome = { ok: true, result, durationMs: Date.now() - started, responseStatus };
          } catch (err) {
            if (err instanceof DeferError) return deferJob(job, token, err.ms);
            if (err instanceof HandedOffError) {
              if (ownFailure) throw ownFailure;
              return { skipped: `handed off: ${err.message}` };
            }
            outcome = { ok: false, error: err, durationMs: Date.now() - started };
          }
          const saved = await settle(typed, data.attempt, outcome);
          if (!saved.recorded) return { skipped: "attempt already recorded" };
          if (saved.failure) throw saved.failure;
          return { outcome: "succeeded", attempt: data.attempt };
        },
      };
    },
  };
}
