import { parseRetryAfter, type OutboundResult } from "@trendgate/delivery";
import { ProviderError } from "../types.ts";
import { YOUTUBE_RATE_LIMIT } from "./manifest.ts";

// Google's JSON error body: {error:{code, message, errors:[{domain, reason, message}], status?, details?}}.
// Keys that are wrong come in two shapes: the classic 400 `keyInvalid` reason, and the newer 400 `badRequest`
// reason with an ErrorInfo detail `API_KEY_INVALID`; a missing key is 403 `forbidden`.

/** YouTube sends no Retry-After with rateLimitExceeded; its short-term limits are per minute, so wait one. */
export const DEFAULT_RATE_LIMIT_RETRY_MS = 60_000;

const KEY_REASONS = new Set(["keyInvalid", "keyExpired", "API_KEY_INVALID", "API_KEY_EXPIRED", "forbidden", "accessNotConfigured", "SERVICE_DISABLED", "ipRefererBlocked"]);
const RATE_REASONS = new Set(["rateLimitExceeded", "userRateLimitExceeded", "RATE_LIMIT_EXCEEDED"]);
const QUOTA_REASONS = new Set(["quotaExceeded", "dailyLimitExceeded"]);

interface GoogleError { code?: number; message?: string; errors?: { reason?: string }[]; details?: { reason?: string }[] }

/** The reasons in a Google error body, first `errors[]`, then ErrorInfo `details[]`. */
function reasonsOf(body: string): { reasons: string[]; message: string | null } {
  try {
    const e = (JSON.parse(body) as { error?: GoogleError }).error;
    if (!e) return { reasons: [], message: null };
    const reasons = [...(e.errors ?? []), ...(e.details ?? [])].map((x) => x.reason).filter((r): r is string => !!r);
    return { reasons, message: e.message ?? null };
  } catch {
    return { reasons: [], message: null };
  }
}

/**
 * Maps a failed call onto a ProviderError. `onQuotaExceeded` returns when the quota resets (the ledger's next Pacific
 * midnight) and lets the ledger stop further calls.
 */
export function youtubeError(r: OutboundResult, onQuotaExceeded: () => Date): ProviderError {
  if (r.error) return new ProviderError("youtube", "unavailable", `${r.error.code}: ${r.error.message}`, { status: null, providerCode: r.error.code });
  const status = r.status!;
  const { reasons, message } = reasonsOf(r.body);
  const reason = reasons[0];
  const text = `${status}${reason ? ` ${reason}` : ""}: ${message ?? r.body.slice(0, 200)}`;
  const detail = { status, providerCode: reason };
  const has = (set: Set<string>) => reasons.some((x) => set.has(x));

  if (has(QUOTA_REASONS)) return new ProviderError("youtube", "quota_exhausted", text, { ...detail, resetAt: onQuotaExceeded() });
  if (status === 429 || has(RATE_REASONS)) {
    const seconds = parseRetryAfter(r.headers[YOUTUBE_RATE_LIMIT.retryAfterHeader]);
    return new ProviderError("youtube", "rate_limited", text, { ...detail, retryAfterMs: seconds === null ? DEFAULT_RATE_LIMIT_RETRY_MS : seconds * 1000 });
  }
  // A bad key is a 400 too, but no change to the request fixes it: the connection needs a new key.
  if (status === 401 || status === 403 || has(KEY_REASONS)) return new ProviderError("youtube", "unauthorized", text, detail);
  if (status >= 500) return new ProviderError("youtube", "unavailable", text, detail);
  return new ProviderError("youtube", "bad_request", text, detail);
}
