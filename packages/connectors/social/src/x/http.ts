import type { OutboundResult } from "@trendgate/delivery";
import { header, num, parseJson } from "../http-helpers.ts";
import { ProviderError, type ProviderContext, type QuotaState } from "../types.ts";
import { X_RATE_LIMIT as RL, xManifest } from "./manifest.ts";

export const PROVIDER = xManifest.id;

/** X's error bodies: RFC 7807-style problems, with `errors[]` for invalid parameters. */
interface XProblem {
  title?: string;
  detail?: string;
  type?: string;
  errors?: { message?: string }[];
}



/**
 * The windows X reports: the endpoint's own (the headers the manifest names, usually 15 minutes) and, on posts, the
 * app's and the user's 24-hour caps. Resets are epoch seconds.
 */
const WINDOWS = [
  [RL.limitHeader, RL.remainingHeader, RL.resetHeader],
  ["x-app-limit-24hour-limit", "x-app-limit-24hour-remaining", "x-app-limit-24hour-reset"],
  ["x-user-limit-24hour-limit", "x-user-limit-24hour-remaining", "x-user-limit-24hour-reset"],
] as const;

const windowsOf = (headers: OutboundResult["headers"]) => WINDOWS.map(([l, r, t]) => {
  const reset = num(header(headers, t));
  return { limit: num(header(headers, l)), remaining: num(header(headers, r)), resetAt: reset === null ? null : new Date(reset * 1000) };
});

/** The quota of the tightest window: the one with the fewest requests left (the endpoint's own on a tie or without others). */
export function readQuota(headers: OutboundResult["headers"]): QuotaState {
  const [own, ...caps] = windowsOf(headers);
  const tightest = caps.reduce((a, w) => (w.remaining !== null && (a.remaining === null || w.remaining < a.remaining) ? w : a), own);
  return { ...tightest, cost: 1 };
}

/**
 * When a 429 ends: the latest reset of the windows with nothing left, since a spent 24-hour cap outlasts the 15-minute
 * window whose reset would otherwise be taken; the endpoint's own reset when none says it is spent.
 */
function retryAt(headers: OutboundResult["headers"]): Date | null {
  const ws = windowsOf(headers);
  const spent = ws.filter((w) => w.remaining === 0 && w.resetAt !== null).map((w) => w.resetAt!.getTime());
  return spent.length ? new Date(Math.max(...spent)) : ws[0].resetAt;
}

// Without a reset header we still have to wait for something: a minute is short against a 15-minute window, so the
// caller retries soon and gets a fresh 429 with real headers if it is still limited.
const DEFAULT_RETRY_MS = 60_000;

export function toProviderError(res: OutboundResult, what: string): ProviderError {
  const status = res.status;
  if (res.error || status === null) {
    return new ProviderError(PROVIDER, "unavailable", `${what}: no answer from X (${res.error?.message ?? "unknown error"})`, {
      status: null,
      providerCode: res.error?.code,
    });
  }
  const problem = (parseJson(res.body) ?? {}) as XProblem;
  const said = problem.errors?.map((e) => e.message).filter(Boolean).join("; ") || problem.detail || problem.title || `HTTP ${status}`;
  const detail = { status, providerCode: problem.type ?? problem.title };

  if (status === 401) {
    return new ProviderError(PROVIDER, "unauthorized", `${what}: X rejected the token (401 ${said}); re-authorize the X connection`, detail);
  }
  if (status === 403) {
    // X also answers 403 for refusals about the content (a duplicate post, a reply to a deleted or hidden post, and
    // since February 2026 a reply to an author who did not mention or quote the account).
    // Those are not credential problems: flagging the connection for re-authorization would be wrong.
    if (/duplicate content|reply to a (tweet|post)|reply to this conversation is not allowed/i.test(said)) {
      return new ProviderError(PROVIDER, "bad_request", `${what}: X refused the post (403 ${said})`, detail);
    }
    return new ProviderError(PROVIDER, "unauthorized", `${what}: X refused this token (403 ${said}); check the token type and scopes`, detail);
  }
  if (status === 429) {
    const reset = retryAt(res.headers);
    // Measured against our clock: X's reset is an absolute time, so skew between the clocks shifts the wait.
    const retryAfterMs = reset === null ? DEFAULT_RETRY_MS : Math.max(0, reset.getTime() - Date.now());
    return new ProviderError(PROVIDER, "rate_limited", `${what}: X rate limit reached (429 ${said})`, {
      ...detail,
      retryAfterMs,
      resetAt: reset ?? undefined,
    });
  }
  if (status >= 500 || status === 408) return new ProviderError(PROVIDER, "unavailable", `${what}: X is unavailable (${status} ${said})`, detail);
  return new ProviderError(PROVIDER, "bad_request", `${what}: X refused the request (${status} ${said})`, detail);
}


/** One authenticated JSON call to X: the parsed body and the quota on 2xx, a ProviderError otherwise. */
export async function callX<T>(
  ctx: ProviderContext,
  method: "GET" | "POST",
  url: string,
  token: string,
  what: string,
  body?: unknown,
): Promise<{ json: T; quota: QuotaState }> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: "application/json" };
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await ctx.request(method, url, { headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (res.error || res.status === null || res.status < 200 || res.status >= 300) throw toProviderError(res, what);
  const json = parseJson(res.body);
  if (json === undefined || res.truncated) {
    throw new ProviderError(PROVIDER, "unavailable", `${what}: X answered ${res.status} with a body that is not complete JSON`, { status: res.status });
  }
  return { json: json as T, quota: readQuota(res.headers) };
}
