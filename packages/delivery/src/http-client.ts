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

export interface OutboundResult {
  status: number | null;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  truncated: boolean;
  durationMs: number;
  error: { code: string; name: string; message: string } | null;
}

/**
 * The one HTTP client for calls to outside systems: keep-alive agents, connect and total timeouts, no redirects
 * followed, no automatic retries (the retry policy decides), the SSRF guard on every connection, and response
 * bodies read only up to maxResponseBytes.
 */
export class OutboundClient {
  readonly got: Got;

  constructor(private readonly opts: OutboundOptions) {
    this.got = got.extend({
      agent: { http: new http.Agent({ keepAlive: true, maxSockets: 256 }), https: new https.Agent({ keepAlive: true, maxSockets: 256 }) },
      dnsLookup: opts.guard.lookup as never,
      followRedirect: false,
      throwHttpErrors: false,
      retry: { limit: 0 },
      timeout: { connect: opts.connectTimeoutMs, secureConnect: opts.connectTimeoutMs, request: opts.timeoutMs },
      headers: { "user-agent": opts.userAgent },
    });
  }

  /** Sends a request and never throws: network failures come back as `error`. */
  async request(method: "POST" | "GET" | "PUT" | "PATCH" | "DELETE", url: string, init: { body?: string; headers?: Record<string, string> } = {}): Promise<OutboundResult> {
    const start = performance.now();
    const done = (r: Omit<OutboundResult, "durationMs">): OutboundResult => ({ ...r, durationMs: Math.round(performance.now() - start) });
    try {
      this.opts.guard.checkUrl(new URL(url));
    } catch (e: any) {
      return done({ status: null, headers: {}, body: "", truncated: false, error: { code: e.code ?? "ERR_INVALID_URL", name: e.name, message: e.message } });
    }
    const max = this.opts.maxResponseBytes;
    return new Promise((resolve) => {
      const stream = this.got.stream(url, { method, body: init.body, headers: init.headers });
      let status: number | null = null;
      let headers: OutboundResult["headers"] = {};
      const chunks: Buffer[] = [];
      let size = 0;
      let settled = false;
      const finish = (error: OutboundResult["error"]) => {
        if (settled) return;
        settled = true;
        const body = Buffer.concat(chunks).subarray(0, max);
        resolve(done({ status, headers, body: body.toString("utf8"), truncated: size > max, error }));
      };
      stream.on("response", (res: http.IncomingMessage) => { status = res.statusCode ?? null; headers = res.headers; });
      stream.on("data", (chunk: Buffer) => {
        if (size <= max) chunks.push(chunk);
        size += chunk.length;
        if (size > max) { finish(null); stream.destroy(); } // stop reading: we keep only the first `max` bytes
      });
      stream.on("end", () => finish(null));
      stream.on("error", (e: any) => {
        const cause = e.cause ?? e;
        finish({ code: cause.code ?? e.code ?? "ERR_UNKNOWN", name: e.name, message: String(cause.message ?? e.message).slice(0, 500) });
      });
    });
  }
}
