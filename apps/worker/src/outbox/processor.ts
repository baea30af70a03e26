import type { Job } from "bullmq";
import type { z } from "zod";
import { OUTBOX_PAYLOADS, OutboxJob, type OutboxPayload, type OutboxQueueName } from "@trendgate/contracts";
import { isTransientDbError, loadOutboxMessage, recordOutboxAttempts, type OutboxAttemptRecord, type OutboxMessage, type OutboxStatus, type RecordedAttempt } from "@trendgate/db";
import { retrySchedules } from "@trendgate/config";
import {
  AttemptSpool, BatchWriter, DeferError, deferJob, follow, HandedOffError, InvalidPayloadError, judge, outboxFailure, ranBefore, record,
  TRANSIENT_RETRY_DELAYS_MS, type AttemptFailedError, type Judged, type Ledger, type Settled, type Written,
} from "@trendgate/delivery";
import type { Logger } from "@trendgate/logger";
import { queueOutboxAttempt } from "@trendgate/queues";
import type { ProcessorFactory, WorkerDeps } from "../processors/types.ts";

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
  /**
   * The messages among `ids` whose last attempt was sent but waits in the spool for its record: a batch leaves them
   * out (their rows still show the attempt unmade; their own jobs write the record first).
   */
  keptAmong(ids: readonly string[]): Promise<Set<string>>;
}

/** `unknown`: the peer may have acted on the last attempt (see outboxFailure); not retried, the user may replay it. */
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
 * record. Each job runs the attempt loop that webhook deliveries run too (attempt-loop.ts: already recorded? send,
 * judge, record durably, queue the next, fail a failed attempt's job). What is the outbox's own: a record that cannot
 * be written (Postgres down) is kept in Redis (AttemptSpool) and written by the message's next job before anything
 * else, so an attempt is never sent again for want of its record; the payload is parsed once, before `send`, with the
 * queue's schema (OUTBOX_PAYLOADS, or `schema`), and one that does not parse fails its message at once
 * (InvalidPayloadError, error class `invalid_payload`) without reaching the handler; a batched send records the other
 * messages it carried through the same loop (ctx.settle); onFinal follows a final outcome.
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
      const spool = new AttemptSpool<OutboxAttemptRecord>(queues.connection, config.QUEUE_PREFIX, queue, { id: (r) => r.messageId, attempt: (r) => r.attempt },
        (r) => ({ ...r, nextRetryAt: r.nextRetryAt ? new Date(r.nextRetryAt) : null }));

      // The loop's view of outbox_messages. A record the writer could not write, even after its re-tries, is kept in
      // the spool and fails its job: the message's next job writes it before anything else.
      const ledger: Ledger<string, OutboxAttemptRecord, OutboxMessage> = {
        logger: log,
        ref: (id) => ({ message_id: id }),
        load: (id) => loadOutboxMessage(db, id),
        async write(record) {
          try {
            return await writer.add(record);
          } catch (err) {
            await spool.keep(record).catch((e) => log.error({ message_id: record.messageId, attempt: record.attempt, err: String(e) }, "attempt record neither written nor kept"));
            log.warn({ message_id: record.messageId, attempt: record.attempt, err: String(err) }, "attempt record not written; kept until the database answers");
            throw err;
          }
        },
        queue: (id, attempt, delayMs) => queueOutboxAttempt(queues, queue, { message_id: id, attempt }, delayMs),
      };

      /** A record as the loop judged it (for a record kept in the spool, written by a later job). */
      const judgedOf = (r: OutboxAttemptRecord): Judged => ({
        outcome: r.outcome, nextAt: r.nextRetryAt ?? null, errorClass: r.errorClass ?? null, errorMessage: r.errorMessage ?? null,
      });

      /**
       * Records one attempt through the loop (durably, before the next one is queued, which the loop does too), then
       * runs onFinal. `typed`: the message's payload parsed (onFinal is only for those).
       */
      async function settle(message: Typed | OutboxMessage, attempt: number, outcome: SendOutcome, typed = true): Promise<Settled & RecordedAttempt> {
        const failure = outcome.ok ? null : outboxFailure(outcome.error);
        const error = outcome.ok ? null : outcome.error instanceof Error ? outcome.error : new Error(String(outcome.error));
        if (failure?.unexpected) log.warn({ message_id: message.id, attempt, err: String(error) }, "outbox send failed with an unmapped error; retrying as unavailable");
        const judged = judge(failure, schedule, attempt);
        const rec: OutboxAttemptRecord = {
          messageId: message.id, attempt, outcome: judged.outcome, durationMs: outcome.durationMs,
          responseStatus: outcome.ok ? outcome.responseStatus ?? null : failure!.responseStatus,
          errorClass: judged.errorClass, errorMessage: judged.errorMessage, nextRetryAt: judged.nextAt,
          result: outcome.ok ? outcome.result ?? undefined : undefined,
        };
        const settled = await record(ledger, message.id, attempt, judged, rec);
        await finished(message, typed, rec, error, settled);
        return { ...settled, status: settled.status as OutboxStatus | null };
      }

      /** onFinal, once a message's final outcome is recorded (for a message whose payload parsed: `typed`). */
      async function finished(message: Typed | OutboxMessage, typed: boolean, rec: OutboxAttemptRecord, error: Error | null, saved: Written): Promise<void> {
        if (!saved.recorded || !(saved.status === "succeeded" || saved.status === "failed" || saved.status === "unknown")) return;
        if (saved.status === "failed") log.warn({ message_id: message.id, attempt: rec.attempt, error_class: rec.errorClass }, "outbox message failed");
        const final: Typed = {
          ...message, status: saved.status, attempts: rec.attempt, lastError: rec.errorMessage ?? null,
          result: (rec.result ?? message.result) as OutboxMessage["result"], completedAt: new Date(),
        };
        try {
          if (typed) await handler.onFinal?.(final, saved.status, error);
        } catch (err) {
          log.warn({ message_id: message.id, err: String(err) }, "outbox onFinal hook failed");
        }
      }

      return {
        concurrency: handler.concurrency ?? config.OUTBOX_CONCURRENCY,
        close: async () => { await writer.flush(); await handler.close?.(); },
        async process(job, token) {
          const data = OutboxJob.parse(job.data);
          const [kept, loaded] = await Promise.all([spool.find(data.message_id), ledger.load(data.message_id)]);
          let message = loaded;
          if (kept && message) { // an attempt sent earlier whose record could not be written: written first
            const saved = await follow(ledger, message.id, kept.attempt, judgedOf(kept), await writer.add(kept));
            const parsed = parse(message);
            const valid = !(parsed instanceof InvalidPayloadError);
            await finished(valid ? parsed : message, valid, kept, kept.errorMessage ? new Error(kept.errorMessage) : null, saved);
            await spool.written(kept);
            message = await ledger.load(data.message_id);
          } else if (kept) await spool.written(kept);
          if (!message) return { skipped: "message deleted" };
          if (message.status !== "pending") return { skipped: `message ${message.status}` };
          if (await ranBefore(ledger, message.id, data.attempt, message)) return { skipped: "attempt already recorded" };
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
            keptAmong: (ids) => spool.keptAmong(ids),
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
