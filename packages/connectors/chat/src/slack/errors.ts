import { ErrorCode, type WebAPICallError } from "@slack/web-api";
import { ProviderError, type ProviderErrorKind } from "@trendgate/connector-core";

// Every failure of the Slack Web API client, mapped onto the shared vocabulary. Slack answers most failures with
// HTTP 200 and `{ok:false, error:"<code>"}` (a WebAPIPlatformError); the code goes to detail.providerCode so callers
// and the item history can say exactly what Slack refused. Codes: https://docs.slack.dev/reference/methods (each
// method's "Errors" and the "Common errors" listed on every method page).

const PROVIDER = "slack";

/** The token (or the grant behind it) is unusable: only a new authorization helps. */
const UNAUTHORIZED = new Set([
  "not_authed", "invalid_auth", "token_revoked", "token_expired", "account_inactive", "missing_scope",
  "not_allowed_token_type", "team_access_not_granted", "ekm_access_denied", "org_login_required", "team_added_to_org",
  // oauth.v2.access: a code or refresh token Slack will not exchange (RFC 6749's invalid_grant)
  "invalid_code", "code_already_used", "code_expired", "invalid_grant", "invalid_refresh_token", "refresh_token_revoked",
]);
const NOT_FOUND = new Set(["channel_not_found", "message_not_found", "thread_not_found"]);
const RATE_LIMITED = new Set(["ratelimited", "rate_limited"]);
const UNAVAILABLE = new Set(["fatal_error", "internal_error", "service_unavailable", "request_timeout"]);
// Everything else Slack refuses (not_in_channel, is_archived, invalid_blocks, msg_too_long, no_text,
// method_not_supported_for_channel_type, cant_update_message, invalid_arguments, bad_client_secret, ...) is our
// request being wrong for good: bad_request, never retried.

const kindOfCode = (code: string): ProviderErrorKind =>
  UNAUTHORIZED.has(code) ? "unauthorized"
  : NOT_FOUND.has(code) ? "not_found"
  : RATE_LIMITED.has(code) ? "rate_limited"
  : UNAVAILABLE.has(code) ? "unavailable"
  : "bad_request";

// By code, not instanceof: errors may come from another realm (e.g. a test runner's module sandbox).
const isWebApiError = (e: unknown): e is WebAPICallError =>
  typeof e === "object" && e !== null && Object.values(ErrorCode).includes((e as { code?: unknown }).code as ErrorCode);

/** `what` names the call ("chat.postMessage") for the message; no token or body ever goes into it. */
export function slackError(e: unknown, what: string): ProviderError {
  if (e instanceof ProviderError) return e;
  if (isWebApiError(e)) {
    switch (e.code) {
      case ErrorCode.RateLimitedError:
        return new ProviderError(PROVIDER, "rate_limited", `${what}: rate limited, retry after ${e.retryAfter} s`, { status: 429, retryAfterMs: e.retryAfter * 1000, providerCode: "ratelimited" });
      case ErrorCode.PlatformError: {
        const code = String(e.data.error);
        const kind = kindOfCode(code);
        const needed = (e.data as { needed?: unknown }).needed;
        const scope = typeof needed === "string" ? ` (needs scope ${needed})` : "";
        return new ProviderError(PROVIDER, kind, `${what}: ${code}${scope}`, { status: 200, providerCode: code });
      }
      case ErrorCode.HTTPError: {
        const s = e.statusCode;
        const kind: ProviderErrorKind = s >= 500 || s === 408 ? "unavailable" : s === 401 || s === 403 ? "unauthorized" : "bad_request";
        return new ProviderError(PROVIDER, kind, `${what}: HTTP ${s}`, { status: s, providerCode: `http_${s}` });
      }
      case ErrorCode.RequestError: {
        // Network failures and our own timeout (AbortSignal.timeout): nothing reached Slack, or no answer came back.
        const original = e.original as Error & { cause?: { code?: string } };
        const code = /TimeoutError/.test(`${original.name} ${original.message}`) ? "timeout" : original.cause?.code ?? "request_error";
        // A post sent in full and not answered may be in the channel already, and chat.postMessage has no
        // idempotency key: sending it again would show a second message. Edits (chat.update) are safe to repeat.
        // A destination the SSRF guard refuses (a base URL on a private address not allowed): retrying will not help.
        if (code === "ERR_BLOCKED_DESTINATION") return new ProviderError(PROVIDER, "bad_request", `${what}: request refused (${original.message})`, { status: null, providerCode: code });
        const mayHaveActed = code === "timeout" && what === "chat.postMessage";
        return new ProviderError(PROVIDER, "unavailable", `${what}: request failed (${code})${mayHaveActed ? ", it may have been posted" : ""}`, { status: null, providerCode: code, ...(mayHaveActed ? { mayHaveActed } : {}) });
      }
    }
  }
  // A 429 whose Retry-After the client could not read (an HTTP date, or none): still a rate limit, wait unknown.
  const message = typeof (e as { message?: unknown })?.message === "string" ? (e as { message: string }).message : String(e);
  if (/rate limit|Retry header/i.test(message)) {
    return new ProviderError(PROVIDER, "rate_limited", `${what}: rate limited (no usable Retry-After)`, { status: 429, providerCode: "ratelimited" });
  }
  return new ProviderError(PROVIDER, "unavailable", `${what}: ${message}`, { status: null, providerCode: "unknown" });
}

/** Runs one Web API call, mapping whatever it throws. */
export async function slackCall<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (e) {
    throw slackError(e, what);
  }
}
