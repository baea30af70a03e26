import { ProviderError, type ProviderErrorKind } from "@trendgate/connector-core";

// Google Ads REST errors onto the framework's error kinds. A failure is
// `{error:{code,message,status,details:[{"@type":"...GoogleAdsFailure","errors":[{errorCode:{<category>:<ENUM>},message,location:{fieldPathElements}}],requestId}]}}`;
// the one key of errorCode names the category. RESOURCE_TEMPORARILY_EXHAUSTED is a short back-off (retryDelay when
// given); RESOURCE_EXHAUSTED is the daily operations quota, spent until the 24-hour window turns.

export const PROVIDER = "google_ads";

export interface GoogleAdsError {
  errorCode?: Record<string, string>;
  message?: string;
  location?: { fieldPathElements?: { fieldName?: string; index?: number }[] };
  /** ErrorDetails: a throttle says when to come back (`quotaErrorDetails.retryDelay`, e.g. "5s"). */
  details?: { quotaErrorDetails?: { retryDelay?: string } };
}
export interface GoogleAdsFailure { errors?: GoogleAdsError[]; requestId?: string }
interface ErrorBody { error?: { code?: number; message?: string; status?: string; details?: (GoogleAdsFailure & { "@type"?: string; retryDelay?: string; quotaErrorDetails?: { retryDelay?: string } })[] } }

/** The GoogleAdsFailure errors of an error body (or of a partialFailureError). */
export function failuresOf(body: unknown): GoogleAdsError[] {
  const details = (body as ErrorBody | null)?.error?.details ?? (body as { details?: GoogleAdsFailure[] } | null)?.details ?? [];
  return details.flatMap((d) => d.errors ?? []);
}

/** The operation an error is about (`operations[i]`), if it names one. */
export const operationIndexOf = (e: GoogleAdsError): number | null => {
  const el = e.location?.fieldPathElements?.find((f) => f.fieldName === "operations");
  return typeof el?.index === "number" ? el.index : null;
};

export const codeOf = (e: GoogleAdsError): string => {
  const [cat, val] = Object.entries(e.errorCode ?? {})[0] ?? ["unknown", "UNKNOWN"];
  return `${cat}.${val}`;
};

const seconds = (s: string | undefined) => (s && /^\d+(\.\d+)?s$/.test(s) ? Math.round(parseFloat(s) * 1000) : undefined);

/** A whole call's failure (no per-operation errors to report) as a ProviderError. */
export function callError(status: number, body: unknown, what: string, requestId: string | null): ProviderError {
  const b = body as ErrorBody | null;
  const errs = failuresOf(body);
  const codes = errs.map(codeOf);
  const message = (errs[0]?.message ?? b?.error?.message ?? `HTTP ${status}`).slice(0, 300);
  const retryDelay = errs.map((e) => seconds(e.details?.quotaErrorDetails?.retryDelay)).find((x) => x !== undefined)
    ?? b?.error?.details?.map((d) => seconds(d.retryDelay ?? d.quotaErrorDetails?.retryDelay)).find((x) => x !== undefined);
  let kind: ProviderErrorKind;
  if (codes.includes("quotaError.RESOURCE_EXHAUSTED")) kind = "quota_exhausted";
  else if (codes.includes("quotaError.RESOURCE_TEMPORARILY_EXHAUSTED") || status === 429) kind = "rate_limited";
  else if (status === 401 || codes.some((c) => c.startsWith("authenticationError."))) kind = "unauthorized";
  else if (status >= 500) kind = "unavailable";
  else if (status === 404) kind = "not_found";
  else kind = "bad_request";
  const hint = codes.includes("authorizationError.CLOUD_PROJECT_NOT_APPROVED_FOR_PRODUCTION")
    ? " (the Google Cloud project of the OAuth client has Test access only: apply for Explorer or Basic access, or use a test account)" : "";
  return new ProviderError(PROVIDER, kind, `${what}: ${codes[0] ?? b?.error?.status ?? `HTTP ${status}`}: ${message}${hint}${requestId ? ` (request-id ${requestId})` : ""}`, {
    status, providerCode: codes[0] ?? b?.error?.status, ...(kind === "rate_limited" && retryDelay !== undefined ? { retryAfterMs: retryDelay } : {}),
    ...(kind === "quota_exhausted" ? { resetAt: new Date(Date.now() + 24 * 3600_000) } : {}),
  });
}
