import type { OutboundResult } from "@trendgate/delivery";
import { header, num, parseJson } from "../http-helpers.ts";
import { ProviderError, type ProviderContext, type QuotaState } from "../types.ts";
import { REDDIT_RATE_LIMIT as RL, REDDIT_USED_HEADER, redditManifest } from "./manifest.ts";

export const PROVIDER = redditManifest.id;

/**
 * Reddit sends requests used and remaining in the window (remaining as a float, "598.0") and the seconds until it
 * resets; it sends no limit, so the limit is used + remaining.
 */
export function readQuota(headers: OutboundResult["headers"]): QuotaState {
  const used = num(header(headers, REDDIT_USED_HEADER));
  const remaining = num(header(headers, RL.remainingHeader));
  const reset = num(header(headers, RL.resetHeader));
  return {
    limit: used !== null && remaining !== null ? Math.round(used + remaining) : null,
    remaining: remaining === null ? null : Math.floor(remaining),
    resetAt: reset === null ? null : new Date(Date.now() + reset * 1000),
    cost: 1,
  };
}

// Used when Reddit gives no wait: its windows are 10 minutes long, a minute is a cautious first retry.
export const DEFAULT_RETRY_MS = 60_000;

const UNITS: Record<string, number> = { millisecond: 1, second: 1000, minute: 60_000, hour: 3_600_000 };

/** "try again in 5 minutes." / "Take a break for 9 seconds before trying again." -> milliseconds, or null. */
export function waitFromMessage(message: string): number | null {
  const m = /(\d+)\s*(millisecond|second|minute|hour)s?/i.exec(message);
  return m ? Number(m[1]) * UNITS[m[2].toLowerCase()] : null;
}

/** Reddit's error bodies: `{message, error}` on the API host, `{reason, message, error}` for closed subreddits. */
interface RedditProblem {
  message?: string;
  error?: number | string;
  reason?: string;
}

export function toProviderError(res: OutboundResult, what: string): ProviderError {
  const status = res.status;
  if (res.error || status === null) {
    return new ProviderError(PROVIDER, "unavailable", `${what}: no answer from Reddit (${res.error?.message ?? "unknown error"})`, {
      status: null,
      providerCode: res.error?.code,
    });
  }
  const json = parseJson(res.body) as RedditProblem | undefined;
  const said = json?.message ?? `HTTP ${status}`;
  // e.g. `Bearer realm="reddit", error="invalid_token"` or error="insufficient_scope"
  const authError = /error="([^"]+)"/.exec(header(res.headers, "www-authenticate") ?? "")?.[1];
  const detail = { status, providerCode: json?.reason ?? authError };

  if (status === 401) {
    return new ProviderError(PROVIDER, "unauthorized", `${what}: Reddit rejected the credentials (401 ${authError ?? said}); get a new token or re-authorize the Reddit connection`, detail);
  }
  if (status === 403) {
    // A 403 with a reason is about the subreddit (private, quarantined, gated), not about our token.
    if (json?.reason) return new ProviderError(PROVIDER, "bad_request", `${what}: Reddit denies access to this subreddit (403 ${json.reason})`, detail);
    if (!json) {
      // Reddit's edge answers an HTML "blocked" page to missing or generic User-Agents and to blocked networks.
      return new ProviderError(PROVIDER, "unauthorized", `${what}: Reddit blocked the request (403, not JSON); check the User-Agent and the app's access`, detail);
    }
    return new ProviderError(PROVIDER, "unauthorized", `${what}: Reddit refused this token (403 ${authError ?? said}); it may lack a scope`, detail);
  }
  if (status === 429) {
    const reset = num(header(res.headers, RL.resetHeader));
    return new ProviderError(PROVIDER, "rate_limited", `${what}: Reddit rate limit reached (429 ${said})`, {
      ...detail,
      retryAfterMs: reset === null ? DEFAULT_RETRY_MS : reset * 1000,
      resetAt: reset === null ? undefined : new Date(Date.now() + reset * 1000),
    });
  }
  if (status >= 300 && status < 400) {
    // Reddit redirects a search in a subreddit that does not exist to the subreddit search page.
    return new ProviderError(PROVIDER, "bad_request", `${what}: Reddit redirected to ${header(res.headers, "location") ?? "another page"} (${status}); does the subreddit exist?`, detail);
  }
  if (status >= 500 || status === 408) return new ProviderError(PROVIDER, "unavailable", `${what}: Reddit is unavailable (${status} ${said})`, detail);
  return new ProviderError(PROVIDER, "bad_request", `${what}: Reddit refused the request (${status} ${json?.reason ?? said})`, detail);
}

/** One call to Reddit: the parsed JSON and the quota on 2xx, a ProviderError otherwise. */
export async function callReddit<T>(
  ctx: Pick<ProviderContext, "request">,
  method: "GET" | "POST",
  url: string,
  headers: Record<string, string>,
  what: string,
  body?: string,
): Promise<{ json: T; quota: QuotaState }> {
  const res = await ctx.request(method, url, { headers: { accept: "application/json", ...headers }, body });
  if (res.error || res.status === null || res.status < 200 || res.status >= 300) throw toProviderError(res, what);
  const json = parseJson(res.body);
  if (json === undefined || res.truncated) {
    throw new ProviderError(PROVIDER, "unavailable", `${what}: Reddit answered ${res.status} with a body that is not complete JSON`, { status: res.status });
  }
  return { json: json as T, quota: readQuota(res.headers) };
}
