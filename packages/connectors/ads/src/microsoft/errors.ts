import { ProviderError, type ProviderErrorKind } from "@trendgate/connector-core";

// Microsoft Advertising faults onto the framework's error kinds. A REST fault is the SOAP fault detail as JSON, its
// `Type` naming which: `AdApiFaultDetail` `{TrackingId, Errors:[{Code, ErrorCode, Message, Detail}]}` (credentials,
// throttling, internal errors) or `ApiFaultDetail` `{TrackingId, OperationErrors:[{Code, ErrorCode, Message}],
// BatchErrors:[{Code, ErrorCode, Message, Index, FieldPath}]}` (the request as a whole, or items that failed it). The
// kind comes from the numeric Code, not the HTTP status (Microsoft does not document statuses for REST faults). A call
// that succeeds may still refuse some items: `PartialErrors` (BatchErrors whose Index points into the input list).
// TrackingId identifies the call for Microsoft's support: it is every run record's request id.

export const PROVIDER = "microsoft_ads";

export interface AdError { Code?: number; ErrorCode?: string; Message?: string; Detail?: string | null; Details?: string | null }
export interface BatchError extends AdError { Index?: number; FieldPath?: string | null; Type?: string }
export interface Fault { TrackingId?: string; Type?: string; Errors?: AdError[] | null; OperationErrors?: AdError[] | null; BatchErrors?: BatchError[] | null }

/** Bad or expired credentials: 105 InvalidCredentials (access or developer token), 109 AuthenticationTokenExpired. */
const AUTH = new Set([105, 109]);
/** 117 CallRateExceeded: "resubmit the request under the limit after waiting 60 seconds". */
export const CALL_RATE_EXCEEDED = 117;
/**
 * The addressed entity is not there or not the user's: 106 UserIsNotAuthorized (no access to the account), and the
 * invalid-id codes of campaigns (1100), ad groups (1201) and accounts (1102). Approximate numbers, from Microsoft's
 * operation error code list as remembered; the symbolic ErrorCode is matched too.
 */
const NOT_FOUND = new Set([106, 1100, 1102, 1201]);
const NOT_FOUND_CODES = /^(UserIsNotAuthorized|CampaignServiceInvalid(AccountId|CampaignId|AdGroupId))$/;

export const faultOf = (body: unknown): Fault | null => {
  const b = body as Fault | null;
  return b && typeof b === "object" && (Array.isArray(b.Errors) || Array.isArray(b.OperationErrors) || Array.isArray(b.BatchErrors)) ? b : null;
};

/** The errors about the whole call (not about one item of it). */
export const callErrorsOf = (f: Fault | null): AdError[] => [...(f?.Errors ?? []), ...(f?.OperationErrors ?? [])];

export const describe = (e: AdError) => `${e.Code ?? "?"} ${e.ErrorCode ?? "Error"}: ${(e.Message ?? "").slice(0, 300)}`.trim();

export function kindOf(status: number, errors: AdError[]): ProviderErrorKind {
  const codes = errors.map((e) => e.Code);
  if (codes.includes(CALL_RATE_EXCEEDED) || errors.some((e) => e.ErrorCode === "CallRateExceeded") || status === 429) return "rate_limited";
  if (codes.some((c) => AUTH.has(c ?? -1)) || status === 401) return "unauthorized";
  if (codes.some((c) => NOT_FOUND.has(c ?? -1)) || errors.some((e) => NOT_FOUND_CODES.test(e.ErrorCode ?? "")) || status === 404) return "not_found";
  if (codes.includes(0) || status >= 500 || !errors.length && status !== 400) return "unavailable";
  return "bad_request";
}

/** A whole call's failure as a ProviderError; `waitMs` is how long a CallRateExceeded asks to wait. */
export function callError(status: number, body: unknown, what: string, trackingId: string | null, waitMs: number): ProviderError {
  const f = faultOf(body);
  const errors = callErrorsOf(f).length ? callErrorsOf(f) : (f?.BatchErrors ?? []);
  const kind = kindOf(status, errors);
  const first = errors[0];
  const hint = kind === "unauthorized" && first?.Code === 105 ? " (check the connection and MICROSOFT_ADS_DEVELOPER_TOKEN: both must be for this environment, production or sandbox)" : "";
  return new ProviderError(PROVIDER, kind, `${what}: ${first ? describe(first) : `HTTP ${status}`}${hint}${trackingId ? ` (TrackingId ${trackingId})` : ""}`, {
    status, providerCode: first ? String(first.ErrorCode ?? first.Code) : `http_${status}`, ...(kind === "rate_limited" ? { retryAfterMs: waitMs } : {}),
  });
}
