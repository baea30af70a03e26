import http from "node:http";
import { loadConfig } from "@trendgate/config";
import { createHttpServer, httpServerOptions, type GatewayServer } from "../../apps/gateway/src/http/server.ts";
import { startGateway, type TestGateway } from "../helpers/gateway.ts";
import { RawClient, sleep, type RawResponse } from "../helpers/faults-proc-kit.ts";

// The HTTP server the gateway runs in (apps/gateway/src/http/server.ts), listening for real on 127.0.0.1, spoken to
// over raw sockets where a normal client would not behave like the one under test: a declared body over the limit
// is refused before anything is read, headers over the limit and non-HTTP bytes are answered as problems, and a
// client that trickles its headers or body is answered 408 and disconnected after the configured timeouts.

const LIMIT = 4096;
const HEADERS_TIMEOUT_MS = 800;
const REQUEST_TIMEOUT_MS = 1500;

let gw: TestGateway;
let srv: GatewayServer;
let port: number;
let key: string;

beforeAll(async () => {
  gw = await startGateway({
    BODY_LIMIT_BYTES: String(LIMIT),
    HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
    HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    HTTP_MAX_HEADER_BYTES: "8192",
  });
  srv = createHttpServer(gw.app, httpServerOptions(gw.deps.config));
  port = (await srv.listen(0, "127.0.0.1")).port;
  key = (await gw.account("pro")).key;
});
afterAll(async () => {
  srv.server.closeAllConnections();
  await new Promise((r) => srv.server.close(r));
  await gw.close();
});

const connect = () => RawClient.connect(port);

function expectProblem(res: RawResponse, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
  const body = JSON.parse(res.body);
  expect(body).toMatchObject({ type: `https://trendgate.dev/problems/${code}`, status, code });
  expect(typeof body.title).toBe("string");
  expect(typeof body.detail).toBe("string");
  expect(body.request_id).toMatch(/^req_[0-9a-f]{32}$|^[A-Za-z0-9._:-]+$/);
  expect(res.headers["x-request-id"]).toBe(body.request_id);
  return body;
}

describe("a declared Content-Length over BODY_LIMIT_BYTES", () => {
  test("is answered 413 problem+json at once, before authentication and without a byte of the body, and the connection is closed", async () => {
    const c = await connect();
    // Headers only: the server must answer without waiting for (or reading) the announced body.
    c.write(`POST /api/signals HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: ${LIMIT + 1}\r\nX-Request-Id: trace-413\r\n\r\n`);
    const res = await c.response(5000);
    const body = expectProblem(res, 413, "payload_too_large");
    expect(body).toMatchObject({ instance: "/api/signals", request_id: "trace-413", title: "Request body too large" });
    expect(body.detail).toContain(String(LIMIT));
    expect(res.headers.connection).toBe("close");
    await c.waitClosed(5000);
  });

  test("the same with a valid key and a 10 GB announcement, and with Expect: 100-continue (no 100 Continue is sent)", async () => {
    const a = await connect();
    a.write(`POST /api/keys HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 10000000000\r\n\r\n{"na`);
    expectProblem(await a.response(5000), 413, "payload_too_large");
    await a.waitClosed(5000);

    const b = await connect();
    b.write(`POST /api/signals HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${LIMIT * 10}\r\nExpect: 100-continue\r\n\r\n`);
    const res = await b.response(5000);
    expectProblem(res, 413, "payload_too_large"); // the first response is the refusal, not "100 Continue"
    await b.waitClosed(5000);
  });

  test("a body within the limit is still read and handled (100 Continue when asked for)", async () => {
    const body = JSON.stringify({ signals: [{ id: `lim-${Date.now()}`, source: "x", topic: "limits", category: "tech", count: 1, observed_at: new Date().toISOString() }] });
    const c = await connect();
    c.write(`POST /api/signals HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\n\r\n`);
    expect((await c.response(5000)).status).toBe(100);
    c.write(body);
    const res = await c.response(10_000);
    expect(res.status).toBe(202);
    expect(JSON.parse(res.body).accepted).toBe(1);
    c.destroy();
  });
});

test("headers over HTTP_MAX_HEADER_BYTES are answered 431 problem+json (headers_too_large) and the connection closed", async () => {
  const c = await connect();
  c.write(`GET /status HTTP/1.1\r\nHost: t\r\nX-Padding: ${"a".repeat(20_000)}\r\n\r\n`);
  const body = expectProblem(await c.response(5000), 431, "headers_too_large");
  expect(body.title).toBe("Request header fields too large");
  await c.waitClosed(5000);
});

test("bytes that are not HTTP are answered 400 problem+json (bad_request) and the connection closed", async () => {
  const c = await connect();
  c.write("HELLO THERE\r\n\r\n");
  expectProblem(await c.response(5000), 400, "bad_request");
  await c.waitClosed(5000);
});

describe("slow clients", () => {
  test("headers that never finish: 408 problem+json after HTTP_HEADERS_TIMEOUT_MS, connection closed", async () => {
    const c = await connect();
    const started = Date.now();
    c.write("GET /status HTTP/1.1\r\nHost: t\r\nX-Slow: ");
    const res = await c.response(10_000);
    expectProblem(res, 408, "request_timeout");
    const closedAt = await c.waitClosed(5000);
    const waited = closedAt - started;
    expect(waited).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 50);
    expect(waited).toBeLessThan(10_000); // Node's default would hold it for 60 s
  });

  test("headers and a few bytes of the body, then nothing: 408 problem+json after HTTP_REQUEST_TIMEOUT_MS, connection closed", async () => {
    const c = await connect();
    const started = Date.now();
    c.write(`POST /api/signals HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{"sig`);
    const res = await c.response(15_000);
    const body = expectProblem(res, 408, "request_timeout");
    expect(body.instance).toBe("/api/signals");
    const closedAt = await c.waitClosed(5000);
    const waited = closedAt - started;
    expect(waited).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
    expect(waited).toBeLessThan(15_000); // Node's default would hold it for 5 minutes
  });

  test("a normal keep-alive client is not affected: one connection serves several requests", async () => {
    const c = await connect();
    for (let i = 0; i < 3; i++) {
      c.write("GET /status HTTP/1.1\r\nHost: t\r\n\r\n");
      const res = await c.response(10_000);
      expect(res.status).toBe(200);
      expect(res.headers.connection).toBe("keep-alive");
    }
    c.destroy();
  });
});

test("the defaults are tight: headers 10 s, whole request 30 s, keep-alive 65 s, headers 16 KiB", () => {
  const config = loadConfig({ ...process.env, HTTP_HEADERS_TIMEOUT_MS: "", HTTP_REQUEST_TIMEOUT_MS: "", HTTP_KEEP_ALIVE_TIMEOUT_MS: "", HTTP_MAX_HEADER_BYTES: "" });
  expect(httpServerOptions(config)).toMatchObject({ headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 65_000, maxHeaderBytes: 16_384 });
  const s = createHttpServer(() => {}, httpServerOptions(config));
  expect(s.server.headersTimeout).toBe(10_000);
  expect(s.server.requestTimeout).toBe(30_000);
  expect(s.server.keepAliveTimeout).toBe(65_000);
  expect((s.server as http.Server & { maxHeaderSize?: number }).maxHeaderSize).toBe(16_384);
});

test("draining: idle keep-alive connections close at once, requests arriving on busy ones get Connection: close, in-flight ones finish", async () => {
  const s = createHttpServer((req, res) => {
    if (req.url === "/slow") setTimeout(() => res.end("slow done"), 800);
    else res.end("ok");
  }, httpServerOptions(gw.deps.config));
  const p = (await s.listen(0, "127.0.0.1")).port;

  const idle = await RawClient.connect(p);
  idle.write("GET /a HTTP/1.1\r\nHost: t\r\n\r\n");
  expect((await idle.response()).headers.connection).toBe("keep-alive");
  const slow = await RawClient.connect(p);
  slow.write("GET /slow HTTP/1.1\r\nHost: t\r\n\r\n");
  const arriving = await RawClient.connect(p);
  arriving.write("GET /b HTTP/1.1\r\nHost: t\r\n"); // half a request when the drain starts
  await sleep(200);

  const drained = s.drain();
  await idle.waitClosed(5000);
  expect(slow.isClosed).toBe(false);
  arriving.write("\r\n");
  const late = await arriving.response();
  expect(late.status).toBe(200);
  expect(late.headers.connection).toBe("close");
  await arriving.waitClosed(5000);

  const finished = await slow.response();
  expect(finished.body).toBe("slow done");
  expect(finished.headers.connection).toBe("close");
  await slow.waitClosed(5000);
  await drained;
  await expect(RawClient.connect(p)).rejects.toThrow(/ECONNREFUSED/);
});
