import { isRetryableKind, type ProviderErrorKind } from "./failures/provider-error.ts";
import type { OutboundResult } from "./http-client.ts";

// What a webhook receiver's answer means: its error class (the executions' `error_class`: the detail), the failure
// kind it is (the one vocabulary the verdict, attempts/verdict.ts, decides from), and the wait it asked for.

export type ErrorClass =
  | "timeout" | "connection_error" | "dns_error" | "tls_error" | "blocked_destination"
  | "http_3xx" | "http_4xx" | "http_408" | "http_410" | "http_429" | "http_5xx";

/**
 * Each error class as a failure kind. A redirect is retried (redirects are not followed; the owner may fix the URL);
 * a 410 says the endpoint is gone; another 4xx, or a destination the SSRF guard refuses, will not change by repeating.
 */
export const KIND_OF_CLASS: Readonly<Record<ErrorClass, ProviderErrorKind>> = {
  timeout: "unavailable", connection_error: "unavailable", dns_error: "unavailable", tls_error: "unavailable",
  blocked_destination: "bad_request", http_3xx: "unavailable", http_4xx: "bad_request", http_408: "unavailable",
  http_410: "not_found", http_429: "rate_limited", http_5xx: "unavailable",
};

export interface Verdict {
  ok: boolean;
  errorClass: ErrorClass | null;
  retryable: boolean;
  /** 410 Gone: the receiver says this endpoint no longer exists. */
  gone: boolean;
  /** Seconds asked for by Retry-After on 429/503, if any. */
  retryAfterSeconds: number | null;
}

export function classify(r: OutboundResult): Verdict {
  const v = (errorClass: ErrorClass | null, extra: Partial<Verdict> = {}): Verdict =>
    ({ ok: errorClass === null, errorClass, retryable: errorClass !== null && isRetryableKind(KIND_OF_CLASS[errorClass]), gone: false, retryAfterSeconds: null, ...extra });
  if (r.error) {
    const { code, name } = r.error;
    if (code === "ERR_BLOCKED_DESTINATION") return v("blocked_destination");
    if (name === "TimeoutError" || code === "ETIMEDOUT" || code === "ESOCKETTIMEDOUT") return v("timeout");
    if (code === "ENOTFOUND" || code === "EAI_AGAIN") return v("dns_error");
    if (/CERT|SSL|TLS|ERR_TLS/.test(code)) return v("tls_error");
    return v("connection_error");
  }
  const s = r.status ?? 0;
  if (s >= 200 && s < 300) return v(null);
  if (s === 429 || s === 503) {
    const retryAfterSeconds = parseRetryAfter(r.headers["retry-after"]);
    return v(s === 429 ? "http_429" : "http_5xx", { retryAfterSeconds });
  }
  if (s === 410) return v("http_410", { gone: true });
  if (s === 408) return v("http_408");
  if (s >= 500) return v("http_5xx");
  if (s >= 300 && s < 400) return v("http_3xx");
  return v("http_4xx");
}

/** Retry-After as delta-seconds or an HTTP date; null when absent or unparseable. */
export function parseRetryAfter(value: string | string[] | undefined): number | null {
  const raw = Array.isArray(value) ? value[0] : value;
  if (!raw) return null;
  if (/^\d+$/.test(raw.trim())) return Number(raw.trim());
  const at = Date.parse(raw);
  return Number.isNaN(at) ? null : Math.max(0, Math.round((at - Date.now()) / 1000));
}
