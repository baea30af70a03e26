import * as oauth from "oauth4webapi";
import { ProviderError } from "@trendgate/delivery";
import { waitFromRules } from "../http/rate-limit.ts";

// Every failure of a token-endpoint or revocation call becomes a ProviderError, so the connection lifecycle decides
// from `kind` alone: a refused grant means re-authorization, anything transient means back off. Messages are built
// from status codes and the provider's OAuth error fields only: oauth4webapi's own errors may carry the whole token
// response (access and refresh tokens) in `cause`, so neither `cause` nor a response body is ever copied.

export type OAuthOperation = "exchange" | "refresh" | "revoke";

const LABEL: Record<OAuthOperation, string> = { exchange: "code exchange", refresh: "token refresh", revoke: "revocation" };

/** Retry-After as milliseconds, by the one reader of rate-limit headers. */
const retryAfterMs = (headers: Headers): number | undefined => waitFromRules(undefined, (n) => headers.get(n));

const clip = (s: string, n = 300) => (s.length > n ? `${s.slice(0, n)}…` : s);

function fromStatus(provider: string, op: OAuthOperation, status: number, message: string, providerCode?: string, retryAfter?: number): ProviderError {
  const detail = { status, providerCode, retryAfterMs: retryAfter };
  const say = `${LABEL[op]}: ${message}`;
  if (status === 429) return new ProviderError(provider, "rate_limited", say, detail);
  if (status >= 500) return new ProviderError(provider, "unavailable", say, detail);
  if (providerCode === "invalid_grant") return new ProviderError(provider, "unauthorized", say, detail);
  // A refresh refused with 400/401 for any reason (revoked grant, client credentials no longer accepted) will not
  // succeed by retrying: the connection needs a person.
  if (op === "refresh" && (status === 400 || status === 401)) return new ProviderError(provider, "unauthorized", say, detail);
  if (status === 401 || status === 403) return new ProviderError(provider, "unauthorized", say, detail);
  return new ProviderError(provider, "bad_request", say, detail);
}

/** Maps anything a code exchange, refresh or revocation threw (oauth4webapi, fetch, a provider hook) onto ProviderError. */
export function oauthFailure(provider: string, op: OAuthOperation, err: unknown): ProviderError {
  if (err instanceof ProviderError) return err;
  if (err instanceof oauth.ResponseBodyError) {
    const text = err.error_description ? `${err.error}: ${clip(err.error_description)}` : err.error;
    return fromStatus(provider, op, err.status, text, err.error, retryAfterMs(err.response.headers));
  }
  if (err instanceof oauth.WWWAuthenticateChallengeError) {
    const code = err.cause.map((c) => c.parameters.error).find((e): e is string => typeof e === "string");
    return fromStatus(provider, op, err.status, code ?? `HTTP ${err.status} with an authentication challenge`, code, retryAfterMs(err.response.headers));
  }
  if (err instanceof oauth.OperationProcessingError) {
    if (err.cause instanceof Response) return fromStatus(provider, op, err.cause.status, `unexpected HTTP ${err.cause.status}`, undefined, retryAfterMs(err.cause.headers));
    return new ProviderError(provider, "unavailable", `${LABEL[op]}: the provider's answer was not understood (${err.code ?? "invalid response"})`);
  }
  if (err instanceof oauth.UnsupportedOperationError) return new ProviderError(provider, "unavailable", `${LABEL[op]}: unsupported answer (${err.message})`);
  const e = err as { name?: string; message?: string; cause?: { code?: string } };
  if (e?.name === "TimeoutError" || e?.name === "AbortError") return new ProviderError(provider, "unavailable", `${LABEL[op]}: timed out`);
  if (e?.name === "TypeError" && /fetch failed/i.test(String(e.message)))
    return new ProviderError(provider, "unavailable", `${LABEL[op]}: could not reach the provider${e.cause?.code ? ` (${e.cause.code})` : ""}`);
  return new ProviderError(provider, "unavailable", `${LABEL[op]} failed (${e?.name ?? "error"})`);
}
