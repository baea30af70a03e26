import { ProviderError, type ProviderErrorKind } from "@trendgate/connector-core";

// TikTok API for Business answers every call with the envelope `{code, message, request_id, data}`, almost always
// with HTTP 200: `code: 0` is success and anything else a failure, so the kind comes from
// `code`, never from the status alone. Codes TikTok documents: 40100 (QPS/QPM/QPD limit), 40101 (bad app id or
// secret), 40110 (bad auth code). The others below are from TikTok's public error-code list as we know it
// (unverified): 40001 no permission for the advertiser, 40002 a parameter refused (validation),
// 40102/40104/40105 an expired, missing or revoked access token, 5xxxx TikTok's own failures.

export const PROVIDER = "tiktok_ads";

export const TIKTOK_CODES = {
  ok: 0,
  noPermission: 40001,
  invalidParam: 40002,
  rateLimited: 40100,
  badApp: 40101,
  tokenExpired: 40102,
  tokenMissing: 40104,
  tokenInvalid: 40105,
  badAuthCode: 40110,
  systemError: 50000,
} as const;

export interface Envelope { code?: unknown; message?: unknown; request_id?: unknown; data?: any }

const AUTH = new Set<number>([TIKTOK_CODES.noPermission, TIKTOK_CODES.tokenExpired, TIKTOK_CODES.tokenMissing, TIKTOK_CODES.tokenInvalid]);

export const envelopeOf = (body: unknown): Envelope | null => (body && typeof body === "object" && !Array.isArray(body) ? (body as Envelope) : null);

/** A success: HTTP 200 and `code: 0` (HTTP 200 alone says nothing). */
export const succeeded = (status: number, body: unknown) => status === 200 && envelopeOf(body)?.code === TIKTOK_CODES.ok;

export function kindOf(status: number, body: unknown): ProviderErrorKind {
  const code = Number(envelopeOf(body)?.code);
  if (code === TIKTOK_CODES.rateLimited || status === 429) return "rate_limited";
  if (AUTH.has(code) || status === 401 || status === 403) return "unauthorized";
  if (code >= 50000 || status >= 500 || !envelopeOf(body) || envelopeOf(body)?.code === undefined) return "unavailable";
  return "bad_request";
}

export const providerCodeOf = (status: number, body: unknown) => {
  const code = envelopeOf(body)?.code;
  return typeof code === "number" ? String(code) : `http_${status}`;
};

/** TikTok's words for a failure (its `message` names the field or id it refused). */
export const tiktokMessage = (status: number, body: unknown) => {
  const e = envelopeOf(body);
  return (typeof e?.message === "string" && e.message ? e.message : `HTTP ${status}`).slice(0, 400);
};

/** A whole call's failure as a ProviderError, with TikTok's request_id (for its support) in the message. */
export function callError(status: number, body: unknown, what: string, requestId: string | null): ProviderError {
  const kind = kindOf(status, body);
  // TikTok does not say how long a 40100 lasts (its windows are per second, minute and day): no retryAfterMs, so the
  // caller's own back-off schedule decides.
  return new ProviderError(PROVIDER, kind, `${what}: ${providerCodeOf(status, body)} ${tiktokMessage(status, body)}${requestId ? ` (request_id ${requestId})` : ""}`, {
    status, providerCode: providerCodeOf(status, body),
  });
}
