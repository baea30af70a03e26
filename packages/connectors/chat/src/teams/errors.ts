import { ProviderError, type ProviderErrorKind, type ProviderResponse, type RateLimitRules } from "@trendgate/connector-core";

// Microsoft's failures onto the shared vocabulary. Graph and the Bot Framework Connector both answer errors as
// `{ error: { code, message } }` (https://learn.microsoft.com/graph/errors,
// https://learn.microsoft.com/azure/bot-service/rest-api/bot-framework-rest-connector-api-reference#errorresponse-object);
// the token endpoints as OAuth's `{ error, error_description }` (AADSTS). The code goes to detail.providerCode.
// There is no "forbidden" kind: a 403 is `unauthorized` when Microsoft says a permission or consent is missing (only
// a new authorization, or an admin's consent, helps), and `bad_request` otherwise (e.g. the bot is not in the
// team: reconnecting would not help, installing the app would).

export const PROVIDER = "teams";
export const RATE_LIMIT: RateLimitRules = { retryAfterHeader: "retry-after" };

/** 403 codes that mean the grant lacks a permission (Graph) rather than the request addressing something off-limits. */
const MISSING_PERMISSION = /^(Authorization_RequestDenied|InsufficientPrivileges|Forbidden_ConsentRequired|AccessDenied)$/i;

export type Api = "graph" | "bot" | "token" | "bot_token";

/** The error code Microsoft gave, whichever shape it used. */
export function codeOf(body: any): string | undefined {
  if (typeof body?.error?.code === "string") return body.error.code;
  if (typeof body?.error === "string") return body.error;
  return undefined;
}

function messageOf(body: any): string | undefined {
  const m = typeof body?.error?.message === "string" ? body.error.message : typeof body?.error_description === "string" ? body.error_description : undefined;
  // AADSTS descriptions carry trace and correlation ids on further lines: the first line says what happened.
  return m?.split(/\r?\n/)[0].slice(0, 300);
}

function kindOf(status: number, api: Api, code: string | undefined): ProviderErrorKind {
  if (status === 429) return "rate_limited";
  if (status >= 500 || status === 408) return "unavailable";
  // Teams asks bots to retry the Connector's 412 as they do 429, 502 and 504: it is transient there.
  if (status === 412 && api === "bot") return "unavailable";
  // The bot's own credentials (our app registration, not the customer's connection) refused: re-authorizing the
  // tenant cannot fix it, so it is not `unauthorized` (which marks the connection needs_reauth) but a configuration error.
  if (api === "bot" || api === "bot_token") return status === 429 ? "rate_limited" : status >= 500 ? "unavailable" : status === 404 ? "not_found" : "bad_request";
  if (status === 401) return "unauthorized";
  if (status === 403) return api === "graph" && code && MISSING_PERMISSION.test(code) ? "unauthorized" : "bad_request";
  if (status === 404) return "not_found";
  // AAD answers a refused client or grant with 400 (invalid_client, invalid_grant, unauthorized_client).
  if (api === "token" && code && /^(invalid_client|invalid_grant|unauthorized_client)$/.test(code)) return "unauthorized";
  return "bad_request";
}

/** An answer that is not a success, as a ProviderError; `what` names the call, `hint` says what a person can do. */
export function teamsError(res: ProviderResponse, what: string, api: Api, hint?: string): ProviderError {
  const code = codeOf(res.body);
  const kind = kindOf(res.status, api, code);
  const said = messageOf(res.body);
  // A Retry-After on an outage (503, or the Connector's transient 412/502/504) is honoured as on a 429.
  const waitMs = (kind === "rate_limited" || kind === "unavailable") && res.waitMs !== undefined ? res.waitMs : undefined;
  const wait = waitMs !== undefined ? ` (retry after ${Math.ceil(waitMs / 1000)} s)` : "";
  return new ProviderError(PROVIDER, kind, `${what}: ${code ?? `HTTP ${res.status}`}${said ? `: ${said}` : ""}${wait}${hint ? ` (${hint})` : ""}`, {
    status: res.status, providerCode: code ?? `http_${res.status}`, ...(waitMs !== undefined ? { retryAfterMs: waitMs } : {}),
  });
}
