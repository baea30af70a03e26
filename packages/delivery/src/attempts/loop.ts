import type { RetrySchedule } from "@trendgate/config";
import type { Logger } from "@trendgate/logger";
import { AttemptFailedError } from "./attempt-failed.ts";
import { decide, type Failure } from "./verdict.ts";

// One attempt of an outbound job, the same for webhook deliveries and outbox messages (one job per attempt, id
// `<row>-<attempt>`). In the order a job runs it:
//   1. ranBefore: a job that runs again (a crash, a stalled lock, a re-run after its record failed, the sweeper) finds
//      its attempt already recorded and only makes sure the next one is queued: it sends nothing.
//   2. The kind sends (its own code), and `judge` reads the outcome with the one retry verdict (verdict.ts).
//   3. record: the attempt record is written through the kind's BatchWriter, durably, before the next attempt is
//      queued, so the attempt log, the row and the queue agree: a retry never races its predecessor's record.
//   4. The next attempt is queued with the verdict's delay. If that fails, the row still says when it is due and the
//      sweeper (apps/worker/src/sweepers/outbox-sweeper.ts) queues it: lost jobs are left to the sweeper, never
//      waited for here.
//   5. A failed attempt's job ends with AttemptFailedError, which BullMQ does not run again (the retry is step 4's
//      job), so Bull Board shows the failure and nothing is sent twice.
// Once a request has been sent, nothing may fail its job except a record that could not be written: BullMQ would run
// the job again and send again. The writers therefore re-try transient database errors themselves.

/** What the loop reads of a row: where its attempts stand. */
export interface DeliveryState {
  status: string;
  /** Attempts recorded so far. */
  attempts: number;
  /** When the attempt after the last recorded one is due. */
  nextAttemptAt: Date;
}

/** What writing an attempt record did. */
export interface Written {
  /** False when the attempt was recorded before (a job run twice) or the row is gone: nothing changed. */
  recorded: boolean;
  /** The row's status afterwards (an outbox message cancelled mid-send stays `cancelled`, with no retry). */
  status: string | null;
}

/** One kind's tables and queue, as the loop uses them. `K` names one row's job (its id, or the job's data). */
export interface Ledger<K, R, S extends DeliveryState = DeliveryState> {
  readonly logger: Logger;
  /** The row's fields in a log line, e.g. `{ delivery_id }`. */
  ref(key: K): Record<string, string>;
  /** The row's delivery state; null when it is gone. */
  load(key: K): Promise<S | null>;
  /** Writes one attempt record through the kind's BatchWriter; rejects only when it could not be written. */
  write(record: R): Promise<Written>;
  /** Queues attempt `attempt` of the row after `delayMs` (a no-op while that job exists). */
  queue(key: K, attempt: number, delayMs: number): Promise<void>;
}

/** An attempt's outcome, judged. */
export interface Judged {
  outcome: "succeeded" | "retrying" | "failed" | "unknown";
  /** When the next attempt is due (outcome `retrying`), else null. */
  nextAt: Date | null;
  errorClass: string | null;
  errorMessage: string | null;
}

/** What an attempt came to once recorded; `failure` is what ends the job of a failed attempt recorded by this call. */
export interface Settled extends Written {
  failure: AttemptFailedError | null;
}

/**
 * Step 1, for a job that may have run before: true when its attempt is already recorded (the job sends nothing), after
 * queueing the next attempt if the row waits for it and its job could be the one lost.
 */
export async function ranBefore<K>(ledger: Ledger<K, never, DeliveryState>, key: K, attempt: number, state: DeliveryState): Promise<boolean> {
  if (state.attempts < attempt) return false;
  if (state.status === "pending" && state.attempts === attempt) await ledger.queue(key, attempt + 1, state.nextAttemptAt.getTime() - Date.now());
  return true;
}

/** Step 2: an attempt's failure (null: it succeeded) judged by the one verdict, on the kind's schedule. */
export function judge(failure: Failure | null, schedule: RetrySchedule, attempt: number, now = Date.now()): Judged {
  if (!failure) return { outcome: "succeeded", nextAt: null, errorClass: null, errorMessage: null };
  const v = decide(failure, schedule, attempt);
  return { outcome: v.outcome, nextAt: v.delayMs === null ? null : new Date(now + v.delayMs), errorClass: failure.errorClass, errorMessage: failure.errorMessage };
}

/** Steps 3 to 5: writes the attempt's record, then `follow`s it. */
export async function record<K, R>(ledger: Ledger<K, R, DeliveryState>, key: K, attempt: number, judged: Judged, rec: R): Promise<Settled> {
  return follow(ledger, key, attempt, judged, await ledger.write(rec));
}

/**
 * Steps 4 and 5 after a record was written: the next attempt queued (only while the row waits for it), and the error
 * that ends a failed attempt's job. Nothing follows an attempt recorded before (`recorded` false).
 */
export async function follow<K>(ledger: Ledger<K, never, DeliveryState>, key: K, attempt: number, judged: Judged, written: Written): Promise<Settled> {
  if (!written.recorded) return { ...written, failure: null };
  const nextAt = written.status === "pending" ? judged.nextAt : null;
  if (nextAt) {
    await ledger.queue(key, attempt + 1, nextAt.getTime() - Date.now())
      .catch((err) => ledger.logger.warn({ ...ledger.ref(key), err: String(err) }, "retry not queued; the sweeper will queue it"));
  }
  const failure = judged.outcome === "succeeded" ? null : new AttemptFailedError(attempt, `${judged.errorClass}: ${judged.errorMessage}`, nextAt);
  return { ...written, failure };
}
