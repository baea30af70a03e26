import type { OutboundResult } from "./http-client.ts";

// What a webhook receiver's answer means: its error class (the executions' `error_class`), whether trying again
// could help, and the wait it asked for. The verdict (apps/worker/src/outbox/verdict.ts) decides from these.

export type ErrorClass =
  | "timeout" | "connection_error" | "dns_error" | "tls_error" | "blocked_destination"
  | "http_3xx" | "http_4xx" | "http_408" | "http_410" | "http_429" | "http_5xx";

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
  const v = (errorClass: ErrorClass | null, retryable: boolean, extra: Partial<Verdict> = {}): Verdict =>
    ({ ok: errorClass === null, errorClass, retryable, gone: false, retryAfterSeconds: null, ...extra });
  if (r.error) {
    const { code, name } = r.error;
    if (code === "ERR_BLOCKED_DESTINATION") return v("blocked_destination", false);
    if (name === "TimeoutError" || code === "ETIMEDOUT" || code === "ESOCKETTIMEDOUT") return v("timeout", true);
    if (code === "ENOTFOUND" || code === "EAI_AGAIN") return v("dns_error", true);
    if (/CERT|SSL|TLS|ERR_TLS/.test(code)) return v("tls_error", true);
    return v("connection_error", true);
  }
  const s = r.status ?? 0;
  if (s >= 200 && s < 300) return v(null, false);
  if (s === 429 || s === 503) {
    const retryAfterSeconds = parseRetryAfter(r.headers["retry-after"]);
    return v(s === 429 ? "http_429" : "http_5xx", true, { retryAfterSeconds });
  }
  if (s === 410) return v("http_410", false, { gone: true });
  if (s === 408) return v("http_408", true);
  if (s >= 500) return v("http_5xx", true);
  if (s >= 300 && s < 400) return v("http_3xx", true); // redirects are not followed; the owner may fix the URL
  return v("http_4xx", false); // other 4xx: the receiver rejects this request; repeating it will not help
}

/** Retry-After as delta-seconds or an HTTP date; null when absent or unparseable. */
export function parseRetryAfter(value: string | string[] | undefined): number | null {
  const raw = Array.isArray(value) ? value[0] : value;
  if (!raw) return null;
  if (/^\d+$/.test(raw.trim())) return Number(raw.trim());
  const at = Date.parse(raw);
  return Number.isNaN(at) ? null : Math.max(0, Math.round((at - Date.now()) / 1000));
}
