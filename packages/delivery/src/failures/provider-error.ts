// The one failure vocabulary: every connector maps its provider's failures onto these kinds, and a webhook
// receiver's answer maps onto them too (classify.ts; its error class is the detail). Workers, the retry verdict and
// the connection lifecycle decide from `kind` alone, never from a provider's own error shapes.

export type ProviderErrorKind =
  | "unauthorized" // bad, expired or revoked credentials: the connection needs re-authorization
  | "rate_limited" // 429 or equivalent: retry after retryAfterMs
  | "quota_exhausted" // a daily quota is spent: do not retry before resetAt
  | "bad_request" // our request is wrong (or refused for good, e.g. not_in_channel): do not retry
  | "not_found" // the thing addressed (a channel, an account) does not exist or is not visible: do not retry
  | "unavailable"; // 5xx, network, timeouts: retry with backoff

/** A failure's kind: a provider's (or a receiver's) failure, or a message of ours that does not parse. */
export type FailureKind = ProviderErrorKind | "invalid_payload";

/** Kinds worth trying again later with the same input. */
export const isRetryableKind = (kind: FailureKind): boolean => kind === "rate_limited" || kind === "unavailable" || kind === "quota_exhausted";

export class ProviderError extends Error {
  constructor(
    readonly provider: string,
    readonly kind: ProviderErrorKind,
    message: string,
    readonly detail: {
      status?: number | null; retryAfterMs?: number; resetAt?: Date; providerCode?: string;
      /**
       * The peer accepted the request and may have acted on it (e.g. a workflow that ran, then failed, or outlasted
       * our timeout): sending it again could repeat the action, so it is not retried blindly.
       */
      mayHaveActed?: boolean;
      /**
       * The peer is starting and will answer soon: the next attempt is due within this long, however long the retry
       * schedule would have waited (still never before retryAfterMs).
       */
      retryWithinMs?: number;
    } = {},
  ) {
    super(`${provider}: ${message}`);
  }

  /** Worth trying again later with the same input. */
  get retryable(): boolean {
    return isRetryableKind(this.kind);
  }
}
