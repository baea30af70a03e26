import { ProviderError, type ProviderErrorKind } from "@trendgate/connector-core";
import { env as ENV } from "./manifest.ts";

// LinkedIn API errors onto the framework's error kinds. A failure is flat JSON,
// `{"status":400,"serviceErrorCode":100,"code":"…","message":"…"}`, and its HTTP status is meaningful (unlike
// Graph's), so the kind comes from the status, except 403: LinkedIn answers 403 for a missing role on the ad account,
// a missing scope and some version errors as well as for a bad token, so only a 403 whose body names a token
// problem is `unauthorized` (the connection needs re-authorization); the rest is refused for good. A throttle is a 429 with no Retry-After and no rate-limit headers
// (LinkedIn's limits are daily, reset at midnight UTC, and unpublished): no wait hint is invented, so the
// framework's retry schedule decides when to try again. A sunset or unknown `Linkedin-Version` is a 426.

export const PROVIDER = "linkedin_ads";

export interface LinkedInError { status?: number; serviceErrorCode?: number; code?: string; message?: string }

export const errorOf = (body: unknown): LinkedInError | null =>
  body && typeof body === "object" && ("serviceErrorCode" in body || "code" in body || "message" in body) ? (body as LinkedInError) : null;

/** LinkedIn's token errors (401s, and 403s on some endpoints): EMPTY/INVALID/EXPIRED/REVOKED_ACCESS_TOKEN, 65600-65604. */
const isTokenError = (e: LinkedInError | null) =>
  !!e && ((typeof e.code === "string" && /_ACCESS_TOKEN$/.test(e.code)) || (typeof e.serviceErrorCode === "number" && e.serviceErrorCode >= 65600 && e.serviceErrorCode <= 65604));

export function kindOf(status: number, body?: unknown): ProviderErrorKind {
  if (status === 401) return "unauthorized";
  if (status === 403) return isTokenError(errorOf(body)) ? "unauthorized" : "bad_request";
  if (status === 429) return "rate_limited";
  if (status >= 500 || status === 0) return "unavailable";
  if (status === 404) return "not_found";
  return "bad_request";
}

export const providerCodeOf = (e: LinkedInError | null, status: number) => e?.code ?? (e?.serviceErrorCode !== undefined ? String(e.serviceErrorCode) : `http_${status}`);

export const messageOf = (e: LinkedInError | null, status: number) => (e?.message ?? `HTTP ${status}`).slice(0, 400);

const HINTS: Record<number, string> = {
  403: " (the member needs a CAMPAIGN_MANAGER or ACCOUNT_MANAGER role on the ad account, and the app the Advertising API product and the rw_ads scope)",
  426: ` (set ${ENV.apiVersion} to a version LinkedIn publishes, e.g. its default: each is served about 12 months, and LinkedIn skips months)`,
};
/** What to do about a refusal, for the messages that carry it. */
export const hintOf = (status: number, body: unknown) => (status === 403 && isTokenError(errorOf(body)) ? "" : HINTS[status] ?? "");

/** A whole call's failure as a ProviderError; `requestId` is LinkedIn's x-li-uuid (for LinkedIn's support). */
export function callError(status: number, body: unknown, what: string, requestId: string | null): ProviderError {
  const e = errorOf(body);
  return new ProviderError(PROVIDER, kindOf(status, body), `${what}: ${messageOf(e, status)}${hintOf(status, body)}${requestId ? ` (x-li-uuid ${requestId})` : ""}`, {
    status, providerCode: providerCodeOf(e, status),
  });
}
