import { ProviderError, type ProviderErrorKind } from "@trendgate/connector-core";

// TikTok API for Business answers every call with the envelope `{code, message, request_id, data}`, almost always
// with HTTP 200: `code: 0` is success and anything else a failure, so the kind comes from `code` (CODE_KINDS), never
// from the status alone. Each code's kind is decided once, with how sure we are of its meaning:
// - documented by TikTok: 40100 (QPS/QPM/QPD limit: the only rate-limit code; nothing documents 51021 as one),
//   40101 (bad app id or secret), 40110 (bad auth code);
// - TikTok's wording seen in its answers, not checked against its return-code page: 40105 (token incorrect or
//   revoked), 40104 (token missing), 40102 (token expired), 40001 (no permission for the advertiser), 40002
//   (a parameter refused), 50000 (system error).
// Only token codes are `unauthorized` (the connection needs re-authorization): 40001 is a permission refusal for one
// advertiser, which re-authorizing the same selection would not fix. A code not in the table is a refusal when it
// is 4xxxx and TikTok's own failure (retried) when it is 5xxxx, 51021 included.

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

/** The kind of each code we know; a code not here falls to its range (kindOf). */
export const CODE_KINDS: Readonly<Record<number, ProviderErrorKind>> = {
  [TIKTOK_CODES.rateLimited]: "rate_limited",
  [TIKTOK_CODES.badApp]: "bad_request",
  [TIKTOK_CODES.badAuthCode]: "bad_request",
  [TIKTOK_CODES.tokenExpired]: "unauthorized",
  [TIKTOK_CODES.tokenMissing]: "unauthorized",
  [TIKTOK_CODES.tokenInvalid]: "unauthorized",
  [TIKTOK_CODES.noPermission]: "bad_request",
  [TIKTOK_CODES.invalidParam]: "bad_request",
  [TIKTOK_CODES.systemError]: "unavailable",
};

export const envelopeOf = (body: unknown): Envelope | null => (body && typeof body === "object" && !Array.isArray(body) ? (body as Envelope) : null);

/** A success: HTTP 200 and `code: 0` (HTTP 200 alone says nothing). */
export const succeeded = (status: number, body: unknown) => status === 200 && envelopeOf(body)?.code === TIKTOK_CODES.ok;

export function kindOf(status: number, body: unknown): ProviderErrorKind {
  const raw = envelopeOf(body)?.code;
  if (status === 429) return "rate_limited";
  if (typeof raw !== "number" || !Number.isInteger(raw)) return status === 401 ? "unauthorized" : status >= 500 || status === 0 || raw === undefined ? "unavailable" : "bad_request";
  const known = CODE_KINDS[raw];
  if (known) return known;
  if (status >= 500 || raw >= 50000) return "unavailable";
  return "bad_request";
}

/** What to do about a refusal whose meaning we know, for the messages that carry it. */
export const codeHint = (body: unknown) =>
  envelopeOf(body)?.code === TIKTOK_CODES.noPermission ? " (the connection's authorization does not cover this advertiser: select one it covers, or authorize again choosing this one)" : "";

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
  return new ProviderError(PROVIDER, kind, `${what}: ${providerCodeOf(status, body)} ${tiktokMessage(status, body)}${codeHint(body)}${requestId ? ` (request_id ${requestId})` : ""}`, {
    status, providerCode: providerCodeOf(status, body),
  });
}
