import { ProviderError, type ProviderErrorKind } from "@trendgate/connector-core";

// Snap Marketing API failures onto the framework's error kinds. Every answer is an envelope
// `{request_status, request_id, ...}`; a failed request adds `debug_message`, `display_message` and `error_code`
// (`E<nnnn>`), a failed item of a batch write says why in `sub_request_error_reason` ("E2xxx: ..."). The HTTP status
// carries the kind. A throttle is a bare 429: Snap sends no Retry-After and no rate-limit headers, so no
// retryAfterMs is set and the caller's own back-off schedule decides the wait (limits: 20 req/s per app, 10 per token).

export const PROVIDER = "snap_ads";

export interface SnapEnvelope {
  request_status?: string;
  request_id?: string;
  debug_message?: string;
  display_message?: string;
  error_code?: string;
}

export function kindOf(status: number): ProviderErrorKind {
  if (status === 401) return "unauthorized";
  if (status === 429) return "rate_limited";
  if (status >= 500) return "unavailable";
  // 403: the token's Snap user has no access to that ad account or object, which re-authorizing does not change.
  if (status === 403 || status === 404) return "not_found";
  return "bad_request";
}

/** Snap's words for a failed request: the code and the display message (the debug one when that is all there is). */
export const snapMessage = (b: SnapEnvelope | null, status: number) =>
  [b?.error_code, (b?.display_message || b?.debug_message || `HTTP ${status}`).slice(0, 300)].filter(Boolean).join(": ");

/** A whole request's failure as a ProviderError; `requestId` is Snap's request_id (for Snap's support). */
export function callError(status: number, body: unknown, what: string): ProviderError {
  const b = body && typeof body === "object" ? (body as SnapEnvelope) : null;
  const kind = kindOf(status);
  const said = kind === "rate_limited" && !b?.error_code ? "throttled (Snap gives no wait: back off)" : snapMessage(b, status);
  return new ProviderError(PROVIDER, kind, `${what}: ${said}${b?.request_id ? ` (request_id ${b.request_id})` : ""}`, {
    status, providerCode: b?.error_code ?? `http_${status}`,
  });
}

/** The E-code that opens a sub-request's reason ("E2002: ..."), if any. */
export const reasonCode = (reason: string) => /^(E\d{4})\b/.exec(reason)?.[1];
