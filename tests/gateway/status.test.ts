// GET /status: anyone (a load balancer, docker's healthcheck) learns up or down and the version; queue depths,
// table sizes, latencies and dependency errors are for operators with the admin token.
import { startGateway, type TestGateway } from "../helpers/gateway.ts";
import { freePort } from "../helpers/free-port.ts";

let gw: TestGateway;
beforeAll(async () => { gw = await startGateway({ AUTH_FAILURES_PER_MINUTE: "3" }); });
afterAll(async () => { await gw.close(); });
const admin = () => ({ Authorization: `Bearer ${gw.deps.config.ADMIN_TOKEN}` });

test("without credentials: status, version and each dependency's up or down, nothing else", async () => {
  const res = await gw.http.get("/status");
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ status: "ok", version: expect.any(String), checks: { postgres: { status: "up" }, redis: { status: "up" } } });
});

test("with the admin token (Bearer or Basic): queue depths, table sizes, latencies and uptime", async () => {
  for (const auth of [admin(), { Authorization: `Basic ${Buffer.from(`ops:${gw.deps.config.ADMIN_TOKEN}`).toString("base64")}` }]) {
    const res = await gw.http.get("/status").set(auth);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(["checks", "queues", "status", "tables", "uptime_seconds", "version"]);
    expect(res.body.checks.postgres).toEqual({ status: "up", latency_ms: expect.any(Number) });
  }
});

test("an API key gets the public answer; a wrong admin token is 401, counted like any failed login", async () => {
  const { auth } = await gw.account();
  const withKey = await gw.http.get("/status").set(auth);
  expect(withKey.status).toBe(200);
  expect(withKey.body.queues).toBeUndefined();
  expect((await gw.http.get("/status").set({ Authorization: "Bearer wrong" })).status).toBe(401);
  expect((await gw.http.get("/status").set({ Authorization: "Bearer wrong" })).status).toBe(401);
  expect((await gw.http.get("/status").set({ Authorization: "Bearer wrong" })).status).toBe(401);
  expect((await gw.http.get("/status").set({ Authorization: "Bearer wrong" })).status).toBe(429);
  expect((await gw.http.get("/status")).status).toBe(200); // the public answer stays open
});

test("a dependency down: 503 for anyone, its error only for operators", async () => {
  const down = await startGateway({ DATABASE_URL: `postgresql://postgres@127.0.0.1:${await freePort()}/trendgate_test` });
  try {
    const pub = await down.http.get("/status");
    expect(pub.status).toBe(503);
    expect(pub.body.checks.postgres).toEqual({ status: "down" });
    expect(JSON.stringify(pub.body)).not.toMatch(/127\\.0\\.0\\.1|ECONNREFUSED|5432/);
    const ops = await down.http.get("/status").set({ Authorization: `Bearer ${down.deps.config.ADMIN_TOKEN}` });
    expect(ops.status).toBe(503);
    expect(ops.body.checks.postgres).toEqual({ status: "down", latency_ms: null, error: expect.any(String) });
  } finally {
    await down.close();
  }
});
