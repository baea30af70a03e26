import { ProviderError, type ProviderErrorKind } from "@trendgate/connector-core";

// Pinterest API v5 errors onto the framework's error kinds. A failure is `{code, message}` (the description's Error
// schema); the HTTP status tells the kind: 401 (code 2 "Authentication failed.", code 3 a token without the scope),
// 403 (code 29: an ad account this token may not see), 404, 429 (code 8) and 5xx. A 429 says when to come back in
// Envoy's rate-limit headers: `x-ratelimit-reset` (seconds) and `x-ratelimit-limit: <n>, <n>;w=<window s>`. A
// per-minute category limit is a short wait; the Trial tier's 1,000-a-day cap (a one-day window, or a reset hours
// away) is spent until the reset.

export const PROVIDER = "pinterest_ads";

export interface PinterestError { code?: number; message?: string }

export const errorOf = (body: unknown): PinterestError | null => {
  const b = body as PinterestError | null;
  return b && typeof b === "object" && !Array.isArray(b) && (typeof b.code === "number" || typeof b.message === "string") ? b : null;
};

/** A reset beyond this is a daily quota, not a throttle to wait out in a retry. */
const QUOTA_RESET_S = 3600;

/** The throttle's window and reset from the rate-limit headers, when given. */
export function throttleOf(headers: Headers): { resetS?: number; windowS?: number } {
  const reset = Number(headers.get("x-ratelimit-reset"));
  const windows = [...(headers.get("x-ratelimit-limit") ?? "").matchAll(/;\s*w=(\d+)/g)].map((m) => Number(m[1]));
  return { resetS: Number.isFinite(reset) && reset >= 0 && headers.get("x-ratelimit-reset") !== null ? reset : undefined, windowS: windows.length ? Math.max(...windows) : undefined };
}

export function kindOf(status: number, e: PinterestError | null, headers: Headers): ProviderErrorKind {
  if (status === 429 || e?.code === 8) {
    const t = throttleOf(headers);
    return (t.windowS ?? 0) >= 86_400 || (t.resetS ?? 0) > QUOTA_RESET_S ? "quota_exhausted" : "rate_limited";
  }
  if (status === 401) return "unauthorized";
  if (status === 403) return e?.code === 29 ? "not_found" : "unauthorized";
  if (status === 404) return "not_found";
  if (status >= 500) return "unavailable";
  return "bad_request";
}

export const providerCodeOf = (e: PinterestError | null, status: number) => (typeof e?.code === "number" ? String(e.code) : `http_${status}`);

/** A whole call's failure as a ProviderError; `requestId` is Pinterest's x-pinterest-rid (for Pinterest's support). */
export function callError(status: number, body: unknown, headers: Headers, what: string, requestId: string | null): ProviderError {
  const e = errorOf(body);
  const kind = kindOf(status, e, headers);
  const { resetS } = throttleOf(headers);
  const hint = kind === "quota_exhausted" ? " (the app's daily request cap: Trial access allows 1,000 requests a day; apply for Standard access)"
    : status === 401 && e?.code === 3 ? " (reconnect to grant ads:read and ads:write)" : "";
  return new ProviderError(PROVIDER, kind, `${what}: ${(e?.message ?? `HTTP ${status}`).replace(/\s+/g, " ").slice(0, 300)}${hint}${requestId ? ` (x-pinterest-rid ${requestId})` : ""}`, {
    status, providerCode: providerCodeOf(e, status),
    ...(kind === "rate_limited" && resetS !== undefined ? { retryAfterMs: Math.max(1, resetS) * 1000 } : {}),
    ...(kind === "quota_exhausted" ? { resetAt: new Date(Date.now() + (resetS ?? 86_400) * 1000) } : {}),
  });
}
