import { parseRetryAfter, type OutboundResult } from "@trendgate/delivery";
import { ProviderError, type ProviderErrorKind } from "../types.ts";
import { TRENDS_RATE_LIMIT } from "./manifest.ts";

// Google API errors: HTTP {error:{code, message, status, errors?, details?}}, and inside a finished operation a
// google.rpc.Status {code (gRPC number), message}. Retry hints come as Retry-After or a RetryInfo detail ("30s").

/** Wait when a 429 carries no hint. The alpha API documents no limits; a minute is a cautious first backoff. */
export const DEFAULT_RETRY_MS = 60_000;

interface GoogleStatus { code?: number; message?: string; status?: string; errors?: { reason?: string }[]; details?: { "@type"?: string; reason?: string; retryDelay?: string }[] }

function parse(body: string): GoogleStatus | null {
  try { return (JSON.parse(body) as { error?: GoogleStatus }).error ?? null; } catch { return null; }
}

/** RetryInfo.retryDelay is a Duration in JSON form, e.g. "30s" or "1.5s". */
function retryInfoMs(e: GoogleStatus | null): number | null {
  const d = e?.details?.find((x) => x["@type"]?.endsWith("google.rpc.RetryInfo"))?.retryDelay;
  const m = d && /^(\d+(?:\.\d+)?)s$/.exec(d);
  return m ? Math.round(Number(m[1]) * 1000) : null;
}

export function trendsHttpError(r: OutboundResult): ProviderError {
  if (r.error) return new ProviderError("google-trends", "unavailable", `${r.error.code}: ${r.error.message}`, { status: null, providerCode: r.error.code });
  const status = r.status!;
  const e = parse(r.body);
  const code = e?.status ?? e?.errors?.[0]?.reason;
  const text = `${status}${code ? ` ${code}` : ""}: ${e?.message ?? r.body.slice(0, 200)}`;
  const detail = { status, providerCode: code };
  if (status === 429) {
    const seconds = parseRetryAfter(r.headers[TRENDS_RATE_LIMIT.retryAfterHeader]);
    const retryAfterMs = seconds !== null ? seconds * 1000 : retryInfoMs(e) ?? DEFAULT_RETRY_MS;
    return new ProviderError("google-trends", "rate_limited", text, { ...detail, retryAfterMs });
  }
  // 403 is also what a project outside the alpha gets: only a new grant fixes it.
  if (status === 401 || status === 403) return new ProviderError("google-trends", "unauthorized", text, detail);
  if (status >= 500) return new ProviderError("google-trends", "unavailable", text, detail);
  return new ProviderError("google-trends", "bad_request", text, detail);
}

// gRPC codes an operation can end with: https://grpc.github.io/grpc/core/md_doc_statuscodes.html
const GRPC: Record<number, [string, ProviderErrorKind]> = {
  3: ["INVALID_ARGUMENT", "bad_request"], 5: ["NOT_FOUND", "bad_request"], 9: ["FAILED_PRECONDITION", "bad_request"],
  11: ["OUT_OF_RANGE", "bad_request"], 7: ["PERMISSION_DENIED", "unauthorized"], 16: ["UNAUTHENTICATED", "unauthorized"],
  8: ["RESOURCE_EXHAUSTED", "rate_limited"],
};

/** A finished operation that carries an error instead of a response. */
export function trendsOperationError(name: string, e: { code?: number; message?: string }): ProviderError {
  const [code, kind] = GRPC[e.code ?? 2] ?? [`code ${e.code}`, "unavailable" as const];
  return new ProviderError("google-trends", kind, `operation ${name} failed: ${code}: ${e.message ?? ""}`,
    { status: null, providerCode: code, ...(kind === "rate_limited" ? { retryAfterMs: DEFAULT_RETRY_MS } : {}) });
}
