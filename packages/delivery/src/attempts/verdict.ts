import type { RetrySchedule } from "@trendgate/config";
import { isRetryableKind, ProviderError, type FailureKind } from "../failures/provider-error.ts";
import { KIND_OF_CLASS, type Verdict as HttpVerdict } from "../classify.ts";
import { InvalidPayloadError } from "../failures/invalid-payload.ts";

// Retry or give up, and when: the one decision for every failed attempt, webhook deliveries and outbox messages
// alike. Each loop states its failure in one vocabulary (Failure: its kind decides); what it means in time comes
// from the queue's schedule (retrySchedules in @trendgate/config).

/** A failed attempt, as the verdict reads it. */
export interface Failure {
  /** What failed, in the one vocabulary: whether it is worth trying again follows from it (isRetryableKind). */
  kind: FailureKind;
  /** As recorded (the detail): the kind itself, or a webhook error class (`http_5xx`, `timeout`, ...). */
  errorClass: string;
  errorMessage: string;
  /** The peer may have acted on the request: never resent blindly (outcome `unknown`). */
  mayHaveActed: boolean;
  /** The peer asked to wait this long first (Retry-After, quota reset), if it did. */
  waitSeconds: number | null;
  /** The peer is starting up: the next attempt is due within this long, whatever the schedule planned. */
  withinSeconds?: number | null;
  responseStatus: number | null;
}

export interface RetryVerdict {
  /** `unknown`: the peer may have acted on the send; not retried, left to the user to replay. */
  outcome: "retrying" | "failed" | "unknown";
  /** Until the next attempt (outcome `retrying`). */
  delayMs: number | null;
}

/**
 * The decision: a failure worth trying again is retried on the schedule, never before the peer's wait (capped at
 * maxRetryAfterSeconds), until the schedule is exhausted; then, or when not retryable, it fails. A failure after
 * which the peer may have acted is `unknown`.
 */
export function decide(f: Failure, schedule: RetrySchedule, attempt: number, random = Math.random): RetryVerdict {
  if (f.mayHaveActed) return { outcome: "unknown", delayMs: null };
  const delayMs = isRetryableKind(f.kind) ? nextRetryDelayMs(schedule, attempt, f.waitSeconds, random, f.withinSeconds ?? null) : null;
  return { outcome: delayMs === null ? "failed" : "retrying", delayMs };
}

/**
 * Milliseconds until the next attempt after `attempt` failed, or null when the schedule is exhausted. A wait the peer
 * asked for is honoured (never earlier than asked), up to maxRetryAfterSeconds; a peer that is starting up
 * (`withinSeconds`) is tried again within that, not after the schedule's longer delays (a start-up lasts seconds).
 */
export function nextRetryDelayMs(schedule: RetrySchedule, attempt: number, waitSeconds: number | null, random = Math.random, withinSeconds: number | null = null): number | null {
  const planned = schedule.delaysSeconds[attempt - 1];
  if (planned === undefined) return null;
  const jittered = Math.min(planned * (1 + schedule.jitter * (2 * random() - 1)), withinSeconds ?? Infinity);
  const asked = waitSeconds === null ? 0 : Math.min(waitSeconds, schedule.maxRetryAfterSeconds);
  return Math.round(Math.max(jittered, asked) * 1000);
}

/**
 * An outbox send's error as a Failure: a ProviderError's kind says whether it is worth trying again
 * (ProviderError.retryable) and carries the provider's Retry-After or quota reset and mayHaveActed; a payload that
 * does not parse is never retried; anything else (a bug, an unmapped failure) counts as `unavailable`.
 */
export function outboxFailure(err: unknown, now = Date.now()): Failure & { unexpected: boolean } {
  const errorMessage = err instanceof Error ? err.message : String(err);
  if (err instanceof InvalidPayloadError)
    return { kind: err.code, errorClass: err.code, errorMessage, mayHaveActed: false, waitSeconds: null, responseStatus: null, unexpected: false };
  if (!(err instanceof ProviderError))
    return { kind: "unavailable", errorClass: "unavailable", errorMessage, mayHaveActed: false, waitSeconds: null, responseStatus: null, unexpected: true };
  const waitMs = err.detail.retryAfterMs ?? (err.detail.resetAt ? err.detail.resetAt.getTime() - now : null);
  return {
    kind: err.kind, errorClass: err.kind, errorMessage, mayHaveActed: err.detail.mayHaveActed === true,
    waitSeconds: waitMs === null ? null : Math.max(0, waitMs) / 1000, responseStatus: err.detail.status ?? null, unexpected: false,
    withinSeconds: err.detail.retryWithinMs === undefined ? null : Math.max(0, err.detail.retryWithinMs) / 1000,
  };
}

/** A webhook attempt's answer (classify.ts) as a Failure; null when it succeeded. */
export function webhookFailure(v: HttpVerdict, status: number | null, errorMessage: string): Failure | null {
  if (v.ok) return null;
  return { kind: KIND_OF_CLASS[v.errorClass!], errorClass: v.errorClass!, errorMessage, mayHaveActed: false, waitSeconds: v.retryAfterSeconds, responseStatus: status };
}

export interface FailureVerdict extends RetryVerdict {
  errorClass: string;
  errorMessage: string;
  responseStatus: number | null;
  /** Not a ProviderError: a bug or an unmapped failure, worth a log line. */
  unexpected: boolean;
}

/** An outbox send's error judged: outboxFailure, then decide. */
export function judgeFailure(err: unknown, schedule: RetrySchedule, attempt: number, now = Date.now()): FailureVerdict {
  const f = outboxFailure(err, now);
  return { ...decide(f, schedule, attempt), errorClass: f.errorClass, errorMessage: f.errorMessage, responseStatus: f.responseStatus, unexpected: f.unexpected };
}
