import { ProviderError } from "@trendgate/connector-core";
import { nextRetryDelayMs, type RetrySchedule } from "@trendgate/delivery";
import { InvalidPayloadError } from "./invalid-payload.ts";

export interface FailureVerdict {
  /** `unknown`: the peer may have acted on the send (ProviderError mayHaveActed); not retried, left to the user to replay. */
  outcome: "retrying" | "failed" | "unknown";
  /** Until the next attempt (outcome `retrying`). */
  delayMs: number | null;
  /** The ProviderError kind (anything else counts as `unavailable`). */
  errorClass: string;
  errorMessage: string;
  responseStatus: number | null;
  /** Not a ProviderError: a bug or an unmapped failure, worth a log line. */
  unexpected: boolean;
}

/**
 * Retry or give up after a failed send, for every outbox queue: the error's kind says whether it is worth trying again
 * (ProviderError.retryable), and the retry policy (nextRetryDelayMs, shared with webhooks) when, honouring the
 * provider's Retry-After or quota reset; once the schedule is exhausted the message fails. A failure after which the
 * peer may have acted (the connector says so: mayHaveActed) is never resent blindly: its outcome is `unknown`. A
 * message whose payload does not parse (InvalidPayloadError) fails at once.
 */
export function judgeFailure(err: unknown, schedule: RetrySchedule, attempt: number, now = Date.now()): FailureVerdict {
  if (err instanceof InvalidPayloadError)
    return { outcome: "failed", delayMs: null, errorClass: err.code, errorMessage: err.message, responseStatus: null, unexpected: false };
  const known = err instanceof ProviderError;
  const kind = known ? err.kind : "unavailable";
  const uncertain = known && err.detail.mayHaveActed === true;
  const retryable = uncertain ? false : known ? err.retryable : true;
  const waitMs = known ? (err.detail.retryAfterMs ?? (err.detail.resetAt ? err.detail.resetAt.getTime() - now : null)) : null;
  const delayMs = retryable ? nextRetryDelayMs(schedule, attempt, waitMs === null ? null : Math.max(0, waitMs) / 1000) : null;
  return {
    outcome: uncertain ? "unknown" : delayMs === null ? "failed" : "retrying",
    delayMs,
    errorClass: kind,
    errorMessage: err instanceof Error ? err.message : String(err),
    responseStatus: known ? (err.detail.status ?? null) : null,
    unexpected: !known,
  };
}
