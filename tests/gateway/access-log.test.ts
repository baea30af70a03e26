import express from "express";
import { pino } from "pino";
import { Registry } from "prom-client";
import supertest from "supertest";
import { REDACT_PATHS } from "@trendgate/logger";
import { observe } from "../../apps/gateway/src/http/observe.ts";
import { problemHandler } from "../../apps/gateway/src/http/problem.ts";
import { startGateway, type TestGateway } from "../helpers/gateway.ts";

// The gateway's logs at the default level (info), captured in memory.
type Line = { level: number; msg: string; [k: string]: unknown };
const lines: Line[] = [];
const logger = pino({ level: "info", redact: { paths: REDACT_PATHS, censor: "[redacted]" } }, { write: (l: string) => lines.push(JSON.parse(l)) });
const INFO = 30, WARN = 40, ERROR = 50;
const forRequest = (id: string) => lines.filter((l) => l.request_id === id);

let gw: TestGateway;
beforeAll(async () => { gw = await startGateway({}, { logger }); });
afterAll(async () => { await gw.close(); });
beforeEach(() => { lines.length = 0; });

test("a successful request logs one line at info: method, route template, path, status, duration, request id", async () => {
  const { auth, keyId } = await gw.account();
  const res = await gw.http.get(`/api/keys/${keyId}`).set(auth);
  expect(res.status).toBe(200);
  const mine = forRequest(res.headers["x-request-id"]);
  expect(mine).toHaveLength(1);
  expect(mine[0]).toMatchObject({ level: INFO, msg: "request", method: "GET", route: "/api/keys/:id", path: `/api/keys/${keyId}`, status: 200 });
  expect(typeof mine[0].duration_ms).toBe("number");
});

test("the query string (where a token may ride) and the credentials never reach the log", async () => {
  const { auth, key } = await gw.account();
  const res = await gw.http.get("/api/keys?limit=5&token=sekrit-query-token").set(auth);
  expect(res.status).toBe(200);
  const mine = forRequest(res.headers["x-request-id"]);
  expect(mine).toHaveLength(1);
  expect(mine[0].path).toBe("/api/keys");
  const all = JSON.stringify(lines);
  expect(all).not.toContain("sekrit-query-token");
  expect(all).not.toContain(key);
});

test("a client error logs at info, not as an error", async () => {
  const { auth } = await gw.account();
  const res = await gw.http.get("/api/keys/key_missing").set(auth);
  expect(res.status).toBe(404);
  const mine = forRequest(res.headers["x-request-id"]);
  expect(mine).toEqual([expect.objectContaining({ level: INFO, status: 404 })]);
});

test("501 provider_not_configured is an expected answer: one warn line, no error", async () => {
  const res = await gw.http.get("/.well-known/executor-keys");
  expect(res.status).toBe(501);
  expect(res.body.code).toBe("provider_not_configured");
  const mine = forRequest(res.headers["x-request-id"]);
  expect(mine).toEqual([expect.objectContaining({ level: WARN, msg: "request", status: 501 })]);
  expect(lines.filter((l) => l.level >= ERROR)).toEqual([]);
});

test("a real fault (500) logs as an error, with the stack", async () => {
  // The gateway's own middleware around a handler that fails unexpectedly.
  const app = express();
  app.use((req, _res, next) => { req.id = "req_fault"; next(); });
  app.use(observe(new Registry(), logger));
  app.get("/boom", () => { throw new Error("disk on fire"); });
  app.use(problemHandler(logger));
  const res = await supertest(app).get("/boom");
  expect(res.status).toBe(500);
  const mine = forRequest("req_fault");
  expect(mine.map((l) => [l.level, l.msg])).toEqual(expect.arrayContaining([[ERROR, "request failed"], [ERROR, "request"]]));
  expect(JSON.stringify(mine.find((l) => l.msg === "request failed"))).toContain("disk on fire");
});
