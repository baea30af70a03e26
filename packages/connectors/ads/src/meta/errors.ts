import { ProviderError, type ProviderErrorKind } from "@trendgate/connector-core";

// Graph API errors onto the framework's error kinds. A failure is
// `{error:{message,type,code,error_subcode,is_transient,error_user_title,error_user_msg,fbtrace_id}}`, mostly with
// HTTP 400 whatever the cause (an expired token and a throttle included), so the kind comes from `code`, not the
// status. Throttles say when to come back in X-Business-Use-Case-Usage (`estimated_time_to_regain_access`, minutes)
// or X-Ad-Account-Usage (`reset_time_duration`, seconds).

export const PROVIDER = "meta_ads";

export interface GraphError {
  message?: string;
  type?: string;
  code?: number;
  error_subcode?: number;
  is_transient?: boolean;
  error_user_title?: string;
  error_user_msg?: string;
  fbtrace_id?: string;
}

/** Invalid, expired or missing access token (190 covers expiry, password change, revocation). */
const AUTH_CODES = new Set([102, 104, 190]);
/** Application (4), user (17), page (32), ad account (613) and Business Use Case (80000-80014) throttles. */
const isThrottle = (code: number | undefined) => code === 4 || code === 17 || code === 32 || code === 613 || (code !== undefined && code >= 80000 && code <= 80014);

export const graphErrorOf = (body: unknown): GraphError | null => {
  const e = (body as { error?: unknown } | null)?.error;
  return e && typeof e === "object" ? (e as GraphError) : null;
};

/** How long a throttle lasts, from the usage headers, when they say (> 0). */
export function regainAfterMs(headers: Headers): number | undefined {
  let minutes = 0;
  try {
    const buc = JSON.parse(headers.get("x-business-use-case-usage") ?? "{}") as Record<string, { estimated_time_to_regain_access?: number }[]>;
    for (const list of Object.values(buc)) for (const u of Array.isArray(list) ? list : []) minutes = Math.max(minutes, Number(u?.estimated_time_to_regain_access) || 0);
  } catch { /* not JSON: no hint */ }
  if (minutes > 0) return minutes * 60_000;
  try {
    const acc = JSON.parse(headers.get("x-ad-account-usage") ?? "{}") as { reset_time_duration?: number };
    const s = Number(acc.reset_time_duration) || 0;
    if (s > 0) return s * 1000;
  } catch { /* not JSON: no hint */ }
  return undefined;
}

export function kindOf(status: number, e: GraphError | null): ProviderErrorKind {
  const code = e?.code;
  if (AUTH_CODES.has(code ?? -1)) return "unauthorized";
  if (isThrottle(code)) return "rate_limited";
  if (e?.is_transient || status >= 500 || code === 1 || code === 2) return "unavailable";
  if (code === 100 && e?.error_subcode === 33) return "not_found"; // "Object with ID ... does not exist" (or is not visible)
  return "bad_request";
}

/** `code/subcode` as the framework's providerCode. */
export const providerCodeOf = (e: GraphError | null, status: number) =>
  e?.code !== undefined ? `${e.code}${e.error_subcode ? `/${e.error_subcode}` : ""}` : `http_${status}`;

/** The provider's words for a failure: Meta's user-facing title and message when given (they name the field or item). */
export const graphMessage = (e: GraphError | null, status: number) =>
  [e?.message ?? `HTTP ${status}`, e?.error_user_title, e?.error_user_msg].filter(Boolean).join(": ").slice(0, 400);

/** A whole call's failure as a ProviderError; `traceId` is Meta's fbtrace_id (for Meta's support). */
export function callError(status: number, body: unknown, headers: Headers, what: string, traceId: string | null): ProviderError {
  const e = graphErrorOf(body);
  const kind = kindOf(status, e);
  const retryAfterMs = kind === "rate_limited" ? regainAfterMs(headers) : undefined;
  const hint = e?.code === 2635 ? " (set META_ADS_API_VERSION to a version Meta still serves)" : "";
  return new ProviderError(PROVIDER, kind, `${what}: ${graphMessage(e, status)}${hint}${traceId ? ` (fbtrace_id ${traceId})` : ""}`, {
    status, providerCode: providerCodeOf(e, status), ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  });
}
