import { ProviderError, type ProviderErrorKind } from "@trendgate/connector-core";
import { env as ENV } from "./manifest.ts";

// LinkedIn API errors onto the framework's error kinds. A failure is flat JSON,
// `{"status":400,"serviceErrorCode":100,"code":"…","message":"…"}`, and its HTTP status is meaningful (unlike
// Graph's), so the kind comes from the status. A throttle is a 429 with no Retry-After and no rate-limit headers
// (LinkedIn's limits are daily, reset at midnight UTC, and unpublished): no wait hint is invented, so the
// framework's retry schedule decides when to try again. A sunset or unknown `Linkedin-Version` is a 426.

export const PROVIDER = "linkedin_ads";

export interface LinkedInError { status?: number; serviceErrorCode?: number; code?: string; message?: string }

export const errorOf = (body: unknown): LinkedInError | null =>
  body && typeof body === "object" && ("serviceErrorCode" in body || "code" in body || "message" in body) ? (body as LinkedInError) : null;

export function kindOf(status: number): ProviderErrorKind {
  if (status === 401 || status === 403) return "unauthorized";
  if (status === 429) return "rate_limited";
  if (status >= 500 || status === 0) return "unavailable";
  if (status === 404) return "not_found";
  return "bad_request";
}

export const providerCodeOf = (e: LinkedInError | null, status: number) => e?.code ?? (e?.serviceErrorCode !== undefined ? String(e.serviceErrorCode) : `http_${status}`);

export const messageOf = (e: LinkedInError | null, status: number) => (e?.message ?? `HTTP ${status}`).slice(0, 400);

const HINTS: Record<number, string> = {
  403: " (the member needs a CAMPAIGN_MANAGER or ACCOUNT_MANAGER role on the ad account, and the app the Advertising API product and the rw_ads scope)",
  426: ` (set ${ENV.apiVersion} to a version LinkedIn still serves: each is served about 12 months)`,
};

/** A whole call's failure as a ProviderError; `requestId` is LinkedIn's x-li-uuid (for LinkedIn's support). */
export function callError(status: number, body: unknown, what: string, requestId: string | null): ProviderError {
  const e = errorOf(body);
  return new ProviderError(PROVIDER, kindOf(status), `${what}: ${messageOf(e, status)}${HINTS[status] ?? ""}${requestId ? ` (x-li-uuid ${requestId})` : ""}`, {
    status, providerCode: providerCodeOf(e, status),
  });
}
