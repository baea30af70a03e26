import http from "node:http";
import https from "node:https";
import got, { type Got } from "got";
import type { OutboundGuard } from "./ssrf-guard.ts";

export interface OutboundOptions {
  guard: OutboundGuard;
  connectTimeoutMs: number;
  timeoutMs: number;
  maxResponseBytes: number;
  userAgent: string;
}

export interface OutboundRequestInit {
  body?: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  timeoutMs?: number;
  maxResponseBytes?: number;
}

export interface OutboundResult {
  status: number | null;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  truncated: boolean;
  durationMs: number;
  error: { code: string; name: string; message: string } | null;
  /** The whole request reached the peer's socket (so a failure after it may come after the peer acted on it). */
  sent?: boolean;
}

/**
 * The one way out to outside systems. Its keep-alive agents carry the SSRF guard as their DNS lookup, so every
 * connection made through them (request() below, or the `got` instance connectors use for JSON APIs) checks the
 * resolved address. request() is the hot path of webhook deliveries: connect and total timeouts, no redirects, no
 * automatic retries (the retry verdict decides), the response body read only up to maxResponseBytes. It is written on
 * node:http because got costs about 4x as much CPU per request (measured: 4.2-5.4k vs 17-22k POST/s on this machine),
 * which is most of a delivery's cost.
 */
export class OutboundClient {
  readonly got: Got;
  private readonly agents: { http: http.Agent; https: https.Agent };

  constructor(private readonly opts: OutboundOptions) {
    const common = { keepAlive: true, maxSockets: 256, lookup: opts.guard.lookup as never };
    this.agents = { http: new http.Agent(common), https: new https.Agent(common) };
    this.got = got.extend({
      agent: this.agents,
      followRedirect: false,
      throwHttpErrors: false,
      retry: { limit: 0 },
      timeout: { connect: opts.connectTimeoutMs, secureConnect: opts.connectTimeoutMs, request: opts.timeoutMs },
      headers: { "user-agent": opts.userAgent },
      hooks: { beforeRequest: [(o) => { opts.guard.checkUrl(o.url as URL); }] },
    });
  }

  /**
   * Sends a request and never throws: network failures come back as `error`. `timeoutMs` and `maxResponseBytes`
   * override the client's for this request; an abort of `signal` ends it with an AbortError (code ABORT_ERR).
   */
  async request(method: "POST" | "GET" | "PUT" | "PATCH" | "DELETE", url: string, init: OutboundRequestInit = {}): Promise<OutboundResult> {
    const start = performance.now();
    // A kept-alive socket the peer closed while idle fails the moment it is reused, before the peer read a byte of
    // the request (the race every keep-alive client meets): that is not an answer from the peer, so the request goes
    // again on another socket. Bounded, since each stale socket is dropped as it fails.
    for (let tries = 1; ; tries++) {
      const { result, staleSocket } = await this.once(method, url, init, start);
      if (!staleSocket || tries >= 3 || init.signal?.aborted) return result;
    }
  }

  private once(method: string, url: string, init: OutboundRequestInit, start: number): Promise<{ result: OutboundResult; staleSocket: boolean }> {
    const max = init.maxResponseBytes ?? this.opts.maxResponseBytes;
    const timeoutMs = init.timeoutMs ?? this.opts.timeoutMs;
    return new Promise((resolve) => {
      let status: number | null = null;
      let headers: OutboundResult["headers"] = {};
      const chunks: Buffer[] = [];
      let size = 0;
      let settled = false;
      let sent = false;
      let req: http.ClientRequest | undefined;
      let total: NodeJS.Timeout | undefined;
      const finish = (error: OutboundResult["error"]) => {
        if (settled) return;
        settled = true;
        clearTimeout(total);
        init.signal?.removeEventListener("abort", onAbort);
        const body = Buffer.concat(chunks).subarray(0, max).toString("utf8");
        const staleSocket = error !== null && status === null && req?.reusedSocket === true && (error.code === "ECONNRESET" || error.code === "EPIPE");
        resolve({ result: { status, headers, body, truncated: size > max, durationMs: Math.round(performance.now() - start), error, sent }, staleSocket });
      };
      const fail = (code: string, name: string, message: string) => { finish({ code, name, message: message.slice(0, 500) }); req?.destroy(); };
      const onAbort = () => fail("ABORT_ERR", "AbortError", "the caller aborted the request");
      if (init.signal?.aborted) return onAbort();
      init.signal?.addEventListener("abort", onAbort, { once: true });

      let target: URL;
      try {
        target = new URL(url);
        this.opts.guard.checkUrl(target); // IP-literal hosts never reach the agent's lookup
      } catch (e: any) {
        return fail(e.code ?? "ERR_INVALID_URL", e.name ?? "Error", e.message);
      }
      const lib = target.protocol === "https:" ? https : http;
      const body = init.body === undefined ? undefined : Buffer.from(init.body);
      total = setTimeout(() => fail("ETIMEDOUT", "TimeoutError", `no complete answer within ${timeoutMs} ms`), timeoutMs);
      req = lib.request(target, {
        method,
        agent: target.protocol === "https:" ? this.agents.https : this.agents.http,
        headers: { "user-agent": this.opts.userAgent, ...(body ? { "content-length": String(body.length) } : {}), ...init.headers },
      }, (res) => {
        status = res.statusCode ?? null;
        headers = res.headers;
        res.on("data", (chunk: Buffer) => {
          if (size <= max) chunks.push(chunk);
          size += chunk.length;
          if (size > max) { finish(null); res.destroy(); } // stop reading: only the first `max` bytes are kept
        });
        res.on("end", () => finish(null));
        res.on("error", (e: any) => finish(status === null ? { code: e.code ?? "ECONNRESET", name: e.name, message: e.message } : null));
      });
      req.on("socket", (socket) => {
        if (!socket.connecting) return; // a kept-alive socket is already connected
        const connect = setTimeout(() => fail("ETIMEDOUT", "TimeoutError", `no connection within ${this.opts.connectTimeoutMs} ms`), this.opts.connectTimeoutMs);
        socket.once(target.protocol === "https:" ? "secureConnect" : "connect", () => clearTimeout(connect));
        socket.once("close", () => clearTimeout(connect));
      });
      req.on("finish", () => { sent = true; });
      req.on("error", (e: any) => finish({ code: e.code ?? "ERR_UNKNOWN", name: e.name ?? "Error", message: String(e.message).slice(0, 500) }));
      req.end(body);
    });
  }
}
