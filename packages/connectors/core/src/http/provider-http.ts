import { Readable, Transform } from "node:stream";
import { OUTBOUND_LIMIT_DEFAULTS } from "@trendgate/config";
import { OutboundClient, OutboundGuard, ProviderError, type OutboundResult } from "@trendgate/delivery";
import type { RateLimitRules } from "../manifest.ts";
import type { ProviderEnv } from "../provider-config.ts";
import { waitFromRules } from "./rate-limit.ts";

// The one way a connector speaks to its provider's API, token endpoint or report files. It runs on the delivery
// package's guarded client, so every call gets the SSRF guard (private, loopback and metadata addresses refused
// unless OUTBOUND_ALLOWLIST names them), a response size cap, connect and total timeouts and our User-Agent, and
// one failure vocabulary: a request that got no answer (network error, timeout) is a ProviderError `unavailable`
// ("<what>: request failed (timeout|<errno>)"), a refused destination is `bad_request` (retrying will not help), an
// answer over the cap is `unavailable`; any other answer, whatever its status, comes back to the connector, which
// alone knows its provider's error shapes, with the wait the manifest's `rateLimit` headers ask for.
// A caller's own abort (`signal`) is neither: its reason is rethrown as is, so a cancelled report stays a cancellation.
//
// Each provider folder makes one ProviderHttp (its http.ts) with the `rateLimit` rules its manifest declares (the
// same constant), and every answer's wait is read by them (`waitMs`). Nothing paces requests ahead of a 429 yet:
// `fetch` is the one place every provider request passes, where a limiter shared by the fleet would take a token.

/**
 * A provider whose answers are larger or slower than the configured limits needs (an ads API's synchronous report
 * pages) declares its own; every other call gets the configuration's: OUTBOUND_CONNECT_TIMEOUT_MS,
 * OUTBOUND_TIMEOUT_MS and CONNECTOR_RESPONSE_MAX_BYTES, read from the caller's `env` (PROVIDER_ENV). A call's own
 * `timeoutMs` or `maxResponseBytes` comes first.
 */
export interface ProviderLimits {
  timeoutMs?: number;
  maxResponseBytes?: number;
}

/** A configured limit from the caller's environment (PROVIDER_ENV holds the validated values), else its default. */
function configured(env: ProviderEnv | undefined, name: keyof typeof OUTBOUND_LIMIT_DEFAULTS): number {
  const v = Number((env ?? process.env)[name]);
  return Number.isFinite(v) && v > 0 ? v : OUTBOUND_LIMIT_DEFAULTS[name];
}

/** A report file is read as it is consumed, never held whole; this bounds what one download may send. */
export const PROVIDER_MAX_DOWNLOAD_BYTES = 1024 * 1024 * 1024;
export const PROVIDER_USER_AGENT = "Trendgate/0.1 (+https://trendgate.dev)";

export interface ProviderFetchInit {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Sent as given (they replace the defaults: user-agent, accept, content-type). */
  headers?: Record<string, string>;
  /** A JSON body (content-type application/json). */
  json?: unknown;
  /** A form body (content-type application/x-www-form-urlencoded). */
  form?: URLSearchParams;
  timeoutMs?: number;
  maxResponseBytes?: number;
  /**
   * The caller's abort, combined with the timeout. An abort by the caller is not a provider failure: its reason (an
   * AbortError unless the caller gave another) is rethrown as is, never turned into `unavailable`.
   */
  signal?: AbortSignal;
  /** The configuration's environment (config.PROVIDER_ENV): its OUTBOUND_ALLOWLIST picks the guard (else the process's). */
  env?: ProviderEnv;
}

export interface ProviderDownloadInit {
  /** Until the answer's head arrives; the body is pulled by the consumer at its own pace. */
  timeoutMs?: number;
  maxBytes?: number;
  signal?: AbortSignal;
  env?: ProviderEnv;
}

/** A report file: its status and headers, and the body as a stream read only as far as the consumer reads it. */
export interface ProviderDownload {
  status: number;
  headers: Headers;
  body: ReadableStream<Uint8Array>;
}

export interface ProviderResponse {
  status: number;
  headers: Headers;
  /** The body as received ("" when there is none). */
  text: string;
  /** The body parsed as JSON; null when empty or not JSON. */
  body: any;
  /** How long the provider asks us to wait (its manifest's rate-limit headers), when it says. */
  waitMs?: number;
}

/** One guarded client per allow-list and connect timeout: keep-alive sockets are shared by every provider of a process. */
const clients = new Map<string, OutboundClient>();

export function outboundClientFor(env?: ProviderEnv): OutboundClient {
  const allow = env?.OUTBOUND_ALLOWLIST ?? process.env.OUTBOUND_ALLOWLIST ?? "";
  const connectTimeoutMs = configured(env, "OUTBOUND_CONNECT_TIMEOUT_MS");
  const key = `${connectTimeoutMs}|${allow}`;
  let client = clients.get(key);
  if (!client) {
    client = new OutboundClient({
      guard: new OutboundGuard(allow.split(",")), connectTimeoutMs, timeoutMs: configured(env, "OUTBOUND_TIMEOUT_MS"),
      maxResponseBytes: configured(env, "CONNECTOR_RESPONSE_MAX_BYTES"), userAgent: PROVIDER_USER_AGENT,
    });
    clients.set(key, client);
  }
  return client;
}

/** A raw provider call: every answer comes back as it is, and a request that got none comes back with `error`. */
export type ProviderRequest = (method: ProviderFetchInit["method"], url: string, init?: { body?: string; headers?: Record<string, string> }) => Promise<OutboundResult>;

/**
 * The same path in its raw form, for connectors that read every answer themselves, statuses and network failures
 * alike (the social connectors and n8n: their ProviderContext's `request`): the guarded client, the configured limits
 * of `env` (PROVIDER_ENV) and our User-Agent, never throwing.
 */
export function providerRequest(env: ProviderEnv | undefined): ProviderRequest {
  return (method, url, init = {}) => outboundClientFor(env).request(method, url, {
    ...init, timeoutMs: configured(env, "OUTBOUND_TIMEOUT_MS"), maxResponseBytes: configured(env, "CONNECTOR_RESPONSE_MAX_BYTES"),
  });
}

/** Why a request got no answer, in one word: `timeout`, the errno (ERR_BLOCKED_DESTINATION, ECONNREFUSED...), or request_error. */
function failureReason(e: { name?: string; code?: string } | null | undefined): string {
  return e?.name === "TimeoutError" || e?.code === "ETIMEDOUT" ? "timeout" : e?.code ?? "request_error";
}

function headersOf(raw: OutboundResult["headers"]): Headers {
  const h = new Headers();
  for (const [k, v] of Object.entries(raw)) {
    if (Array.isArray(v)) for (const x of v) h.append(k, x);
    else if (v !== undefined) h.set(k, v);
  }
  return h;
}

export class ProviderHttp {
  /**
   * `rules`: the manifest's `rateLimit`; without them, the standard Retry-After header is read. `limits`: what this
   * provider needs beyond the configured limits, if anything.
   */
  constructor(readonly provider: string, private readonly rules?: RateLimitRules, private readonly limits: ProviderLimits = {}) {}

  /** The timeout and size cap of one call: its own, else the provider's, else the configuration's. */
  private limitsOf(env: ProviderEnv | undefined, call: ProviderLimits): Required<ProviderLimits> {
    return {
      timeoutMs: call.timeoutMs ?? this.limits.timeoutMs ?? configured(env, "OUTBOUND_TIMEOUT_MS"),
      maxResponseBytes: call.maxResponseBytes ?? this.limits.maxResponseBytes ?? configured(env, "CONNECTOR_RESPONSE_MAX_BYTES"),
    };
  }

  /** Milliseconds the answer's headers ask us to wait, by this provider's rules. */
  waitOf(headers: Headers): number | undefined {
    return waitFromRules(this.rules, (n) => headers.get(n));
  }

  async fetch(what: string, url: string | URL, init: ProviderFetchInit): Promise<ProviderResponse> {
    const headers: Record<string, string> = { "user-agent": PROVIDER_USER_AGENT, accept: "application/json" };
    if (init.json !== undefined) headers["content-type"] = "application/json";
    if (init.form) headers["content-type"] = "application/x-www-form-urlencoded";
    for (const [k, v] of Object.entries(init.headers ?? {})) headers[k.toLowerCase()] = v;
    const caller = init.signal;
    caller?.throwIfAborted();
    const body = init.json !== undefined ? JSON.stringify(init.json) : init.form ? init.form.toString() : undefined;
    const limits = this.limitsOf(init.env, init);
    const res = await outboundClientFor(init.env).request(init.method, String(url), { headers, body, signal: caller, ...limits });
    if (caller?.aborted) throw caller.reason;
    if (res.error || res.status === null) {
      const code = res.error?.code ?? "request_error";
      if (code === "ERR_BLOCKED_DESTINATION") {
        throw new ProviderError(this.provider, "bad_request", `${what}: request refused (${res.error!.message})`, { status: null, providerCode: code });
      }
      const reason = failureReason(res.error);
      throw new ProviderError(this.provider, "unavailable", `${what}: request failed (${reason})`, { status: null, providerCode: reason });
    }
    if (res.truncated) {
      throw new ProviderError(this.provider, "unavailable", `${what}: the answer is larger than ${limits.maxResponseBytes} bytes`, { status: res.status, providerCode: "response_too_large" });
    }
    let parsed: any = null;
    try { parsed = res.body ? JSON.parse(res.body) : null; } catch { parsed = null; }
    const h = headersOf(res.headers);
    return { status: res.status, headers: h, text: res.body, body: parsed, waitMs: this.waitOf(h) };
  }

  /**
   * A WHATWG `fetch` over the same guarded path, for a vendor SDK that takes one (Slack's WebClient), so its calls get
   * the guard, the size cap, the timeouts and our User-Agent too. As fetch does, a request that got no answer rejects
   * with a TypeError whose `cause.code` says why (`timeout`, an errno, ERR_BLOCKED_DESTINATION, response_too_large);
   * an abort of the caller's signal rejects with its reason. String bodies only (no SDK call we make uploads files).
   */
  sdkFetch(opts: { env?: ProviderEnv; timeoutMs?: number; maxResponseBytes?: number } = {}) {
    type Method = ProviderFetchInit["method"];
    return async (url: string | URL, init: { method?: string; headers?: Record<string, string>; body?: unknown; signal?: AbortSignal } = {}): Promise<Response> => {
      if (init.body != null && typeof init.body !== "string") throw new TypeError("only string bodies are sent on this path");
      const signal = init.signal;
      signal?.throwIfAborted();
      const limits = this.limitsOf(opts.env, opts);
      const cap = limits.maxResponseBytes;
      const res = await outboundClientFor(opts.env).request((init.method ?? "GET").toUpperCase() as Method, String(url), {
        headers: init.headers, body: init.body ?? undefined, signal, ...limits,
      });
      if (signal?.aborted) throw signal.reason;
      if (res.error || res.status === null) {
        const code = failureReason(res.error);
        throw new TypeError(`fetch failed (${res.error?.message ?? code})`, { cause: { code } });
      }
      if (res.truncated) throw new TypeError(`the answer is larger than ${cap} bytes`, { cause: { code: "response_too_large" } });
      const noBody = res.status === 204 || res.status === 205 || res.status === 304;
      return new Response(noBody ? null : res.body, { status: res.status, headers: headersOf(res.headers) });
    };
  }

  /**
   * GETs a file (a report's signed URL) without our credentials, through the same guard; failures before an answer
   * map as in fetch. A body over `maxBytes` ends the stream with `unavailable`.
   */
  async download(what: string, url: string | URL, init: ProviderDownloadInit = {}): Promise<ProviderDownload> {
    const caller = init.signal;
    caller?.throwIfAborted();
    const max = init.maxBytes ?? PROVIDER_MAX_DOWNLOAD_BYTES;
    const connect = configured(init.env, "OUTBOUND_CONNECT_TIMEOUT_MS");
    const source = outboundClientFor(init.env).got.stream(String(url), {
      timeout: {
        connect, secureConnect: connect,
        response: this.limitsOf(init.env, { timeoutMs: init.timeoutMs }).timeoutMs,
      },
      ...(caller ? { signal: caller } : {}),
    });
    let res: { statusCode: number; headers: OutboundResult["headers"] };
    try {
      res = await new Promise((resolve, reject) => { source.once("response", resolve); source.once("error", reject); });
    } catch (err) {
      source.destroy();
      if (caller?.aborted) throw caller.reason;
      const e = err as { code?: string; name?: string; message?: string };
      if (e.code === "ERR_BLOCKED_DESTINATION" || /OUTBOUND_ALLOWLIST/.test(String(e.message))) {
        throw new ProviderError(this.provider, "bad_request", `${what}: request refused (${e.message})`, { status: null, providerCode: "ERR_BLOCKED_DESTINATION" });
      }
      const reason = failureReason(e);
      throw new ProviderError(this.provider, "unavailable", `${what}: request failed (${reason})`, { status: null, providerCode: reason });
    }
    let size = 0;
    const provider = this.provider;
    const capped = new Transform({
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length;
        if (size > max) return done(new ProviderError(provider, "unavailable", `${what}: the file is larger than ${max} bytes`, { status: res.statusCode, providerCode: "response_too_large" }));
        done(null, chunk);
      },
    });
    source.on("error", (e) => capped.destroy(caller?.aborted ? caller.reason : e));
    capped.on("close", () => source.destroy());
    source.pipe(capped);
    return { status: res.statusCode, headers: headersOf(res.headers), body: Readable.toWeb(capped) as ReadableStream<Uint8Array> };
  }
}
