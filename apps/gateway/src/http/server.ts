import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { Config } from "@trendgate/config";
import { ERROR_CODES, problemType, type ErrorCode } from "@trendgate/contracts";
import type { Logger } from "@trendgate/logger";
import { requestIdFrom } from "./request-id.ts";

// The gateway's HTTP server: the node http server the Express app runs in, with what only the server level can do.
// - Timeouts: a request's headers must arrive within HTTP_HEADERS_TIMEOUT_MS and the whole request (with its body)
//   within HTTP_REQUEST_TIMEOUT_MS (Node's defaults, 60 s and 5 min, let a client that trickles bytes hold a
//   connection for minutes); idle keep-alive connections close after HTTP_KEEP_ALIVE_TIMEOUT_MS.
// - A declared Content-Length over BODY_LIMIT_BYTES is answered 413 at once: before authentication, before a byte
//   of the body is read (also for `Expect: 100-continue`, which then gets no 100).
// - Errors Node raises before Express sees a request (headers over HTTP_MAX_HEADER_BYTES: 431, a request that is not
//   HTTP: 400, a timeout: 408) are answered as problem+json like every other error, then the connection is closed.
// - Draining (SIGTERM): stop accepting connections, close idle keep-alive connections at once, answer every request
//   still running or arriving on an open connection with `Connection: close`, let in-flight requests finish, and
//   resolve once no connection is left. A connection that stalls while draining is cut after the same timeouts.

export interface HttpServerOptions {
  bodyLimitBytes: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxHeaderBytes: number;
  logger?: Logger;
}

export const httpServerOptions = (config: Config, logger?: Logger): HttpServerOptions => ({
  bodyLimitBytes: config.BODY_LIMIT_BYTES,
  headersTimeoutMs: config.HTTP_HEADERS_TIMEOUT_MS,
  requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS,
  keepAliveTimeoutMs: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
  maxHeaderBytes: config.HTTP_MAX_HEADER_BYTES,
  logger,
});

export interface GatewayServer {
  server: http.Server;
  /** Listens on host:port (0 = any free port); resolves with the address. */
  listen(port: number, host: string): Promise<AddressInfo>;
  /** True once drain() was called. */
  readonly draining: boolean;
  /** Stops accepting, closes idle connections, lets in-flight requests finish; resolves when every connection closed. */
  drain(): Promise<void>;
}

const STATUS_TEXT: Record<number, string> = { 400: "Bad Request", 408: "Request Timeout", 413: "Payload Too Large", 431: "Request Header Fields Too Large" };

// The id the app's request-id middleware set once the request reached it, else the same rule applied here.
const requestIdOf = (req: http.IncomingMessage) => (req as { id?: string }).id ?? requestIdFrom(req.headers["x-request-id"]);

function problemBody(status: number, code: ErrorCode, detail: string, requestId: string, instance?: string): string {
  return JSON.stringify({ type: problemType(code), title: ERROR_CODES[code].title, status, detail, ...(instance ? { instance } : {}), code, request_id: requestId });
}

/** Builds the gateway's HTTP server around a request handler (the Express app). */
export function createHttpServer(handler: http.RequestListener, o: HttpServerOptions): GatewayServer {
  // Node refuses a headers timeout longer than the request timeout; the request timeout covers the headers anyway.
  const headersTimeout = Math.min(o.headersTimeoutMs, o.requestTimeoutMs);
  // How often timeouts are checked (Node's default, 30 s, would let a 10 s timeout run to 40 s).
  const checkEveryMs = Math.max(100, Math.min(1000, Math.floor(headersTimeout / 4)));
  const server = http.createServer({
    headersTimeout,
    requestTimeout: o.requestTimeoutMs,
    maxHeaderSize: o.maxHeaderBytes,
    connectionsCheckingInterval: checkEveryMs,
  });
  server.keepAliveTimeout = o.keepAliveTimeoutMs;

  const sockets = new Set<Socket>();
  const current = new Map<Duplex, http.ServerResponse>(); // the response in progress on each connection
  let draining = false;
  let drained: Promise<void> | undefined;
  let closeIdleQueued = false;

  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => { sockets.delete(socket); current.delete(socket); });
  });

  const closeIdleSoon = () => {
    if (closeIdleQueued) return;
    closeIdleQueued = true;
    setImmediate(() => { closeIdleQueued = false; server.closeIdleConnections(); });
  };

  const track = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const socket = req.socket;
    current.set(socket, res);
    res.once("close", () => {
      if (current.get(socket) === res) current.delete(socket);
      if (draining) closeIdleSoon(); // a keep-alive response sent before draining leaves an idle connection: close it
    });
    if (draining) res.setHeader("Connection", "close");
  };

  const declaredTooLarge = (req: http.IncomingMessage) => {
    const cl = req.headers["content-length"];
    return typeof cl === "string" && /^\d+$/.test(cl) && Number(cl) > o.bodyLimitBytes;
  };

  const refuseTooLarge = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const requestId = requestIdOf(req);
    const instance = (req.url ?? "/").split("?")[0];
    const body = problemBody(413, "payload_too_large",
      `The request body (Content-Length ${req.headers["content-length"]}) exceeds ${o.bodyLimitBytes} bytes`, requestId, instance);
    // The body is not read: the connection is closed after the answer instead of being kept for the next request.
    res.writeHead(413, {
      "Content-Type": "application/problem+json",
      "Content-Length": Buffer.byteLength(body),
      "X-Request-Id": requestId,
      Connection: "close",
    });
    res.end(body);
    o.logger?.info({ request_id: requestId, method: req.method, path: instance, status: 413, content_length: req.headers["content-length"] }, "request refused: declared body too large");
  };

  server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    track(req, res);
    if (declaredTooLarge(req)) return refuseTooLarge(req, res);
    handler(req, res);
  });
  // With a listener here Node sends no automatic "100 Continue": an oversized upload is refused before it starts.
  server.on("checkContinue", (req: http.IncomingMessage, res: http.ServerResponse) => {
    track(req, res);
    if (declaredTooLarge(req)) return refuseTooLarge(req, res);
    res.writeContinue();
    handler(req, res);
  });

  // Errors before (or while) a request is parsed. Node's own answer would be a bare status line; ours is a problem.
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex) => {
    const res = current.get(socket);
    if (err.code === "ECONNRESET" || !socket.writable || res?.headersSent) {
      socket.destroy();
      return;
    }
    const [status, code, detail]: [number, ErrorCode, string] =
      err.code === "HPE_HEADER_OVERFLOW" ? [431, "headers_too_large", `The request headers exceed ${o.maxHeaderBytes} bytes`]
      : err.code === "ERR_HTTP_REQUEST_TIMEOUT" ? [408, "request_timeout", `The request was not received in time (headers within ${headersTimeout} ms, the whole request within ${o.requestTimeoutMs} ms)`]
      : err.code === "HPE_CHUNK_EXTENSIONS_OVERFLOW" ? [413, "payload_too_large", "The chunk extensions of the request body are too large"]
      : [400, "bad_request", "The request is not valid HTTP"];
    const req = res?.req;
    const requestId = req ? requestIdOf(req) : requestIdFrom(undefined);
    const body = problemBody(status, code, detail, requestId, req ? (req.url ?? "/").split("?")[0] : undefined);
    socket.end(`HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`);
    // Close once the answer is flushed; a peer that never reads cannot keep it open.
    socket.once("finish", () => socket.destroy());
    setTimeout(() => socket.destroy(), 1000).unref();
    o.logger?.info({ request_id: requestId, status, code, err: err.code }, "client error answered");
  });

  // While draining Node no longer checks its timeouts (server.close() stops that), so the drain does it: a connection
  // with no request running (half-sent headers) gets the headers timeout, a request whose body has not fully arrived
  // gets the request timeout, both counted from the start of the drain. A running handler is never cut here.
  const watchDrain = () => {
    const started = Date.now();
    const timer = setInterval(() => {
      const waited = Date.now() - started;
      for (const socket of sockets) {
        const res = current.get(socket);
        if (!res ? waited > headersTimeout : !res.req.complete && waited > o.requestTimeoutMs) socket.destroy();
      }
    }, checkEveryMs);
    timer.unref();
    return () => clearInterval(timer);
  };

  return {
    server,
    get draining() { return draining; },
    listen: (port, host) => new Promise<AddressInfo>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => { server.off("error", reject); resolve(server.address() as AddressInfo); });
    }),
    drain() {
      if (drained) return drained;
      draining = true;
      // Responses not yet started tell their client to go elsewhere for the next request.
      for (const res of current.values()) if (!res.headersSent) res.setHeader("Connection", "close");
      drained = new Promise<void>((resolve) => {
        const stopWatching = watchDrain();
        server.close(() => { stopWatching(); resolve(); }); // stops accepting; calls back once every connection closed
      });
      server.closeIdleConnections();
      return drained;
    },
  };
}
