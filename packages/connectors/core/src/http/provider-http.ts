import { ProviderError } from "./errors.ts";

// One HTTP call to a provider's API or token endpoint, for connectors that speak to it with fetch. It exists so that
// every such call gets the same timeout, user agent and failure vocabulary: a request that never got an answer
// (network error, timeout) is a ProviderError `unavailable` ("<what>: request failed (timeout|<errno>)"), while any
// answer, whatever its status, comes back to the connector, which alone knows its provider's error shapes.
// A caller's own abort (`signal`) is neither: its reason is rethrown as is, so a cancelled report stays a cancellation.

export const PROVIDER_TIMEOUT_MS = 30_000;
export const PROVIDER_USER_AGENT = "Trendgate/0.1 (+https://trendgate.dev)";

export interface ProviderFetchInit {
  method: string;
  /** Sent as given (they replace the defaults: user-agent, accept, content-type). */
  headers?: Record<string, string>;
  /** A JSON body (content-type application/json). */
  json?: unknown;
  /** A form body (content-type application/x-www-form-urlencoded). */
  form?: URLSearchParams;
  timeoutMs?: number;
  /**
   * The caller's abort, combined with the timeout. An abort by the caller is not a provider failure: its reason (an
   * AbortError unless the caller gave another) is rethrown as is, never turned into `unavailable`.
   */
  signal?: AbortSignal;
}

export interface ProviderResponse {
  status: number;
  headers: Headers;
  /** The body as received ("" when there is none or it could not be read). */
  text: string;
  /** The body parsed as JSON; null when empty or not JSON. */
  body: any;
}

export async function providerFetch(provider: string, what: string, url: string | URL, init: ProviderFetchInit): Promise<ProviderResponse> {
  const headers = new Headers({ "user-agent": PROVIDER_USER_AGENT, accept: "application/json" });
  if (init.json !== undefined) headers.set("content-type", "application/json");
  if (init.form) headers.set("content-type", "application/x-www-form-urlencoded");
  for (const [k, v] of Object.entries(init.headers ?? {})) headers.set(k, v);
  const caller = init.signal;
  caller?.throwIfAborted();
  const timeout = AbortSignal.timeout(init.timeoutMs ?? PROVIDER_TIMEOUT_MS);
  let res: Response;
  try {
    res = await fetch(url, {
      method: init.method, headers, signal: caller ? AbortSignal.any([caller, timeout]) : timeout,
      ...(init.json !== undefined ? { body: JSON.stringify(init.json) } : init.form ? { body: init.form } : {}),
    });
  } catch (err) {
    if (caller?.aborted) throw caller.reason;
    const e = err as Error & { cause?: { code?: string } };
    const reason = /TimeoutError|AbortError/.test(e.name) ? "timeout" : e.cause?.code ?? "request_error";
    throw new ProviderError(provider, "unavailable", `${what}: request failed (${reason})`, { status: null, providerCode: reason });
  }
  const text = await res.text().catch(() => {
    if (caller?.aborted) throw caller.reason;
    return "";
  });
  let body: any = null;
  try { body = text ? JSON.parse(text) : null; } catch { body = null; }
  return { status: res.status, headers: res.headers, text, body };
}
