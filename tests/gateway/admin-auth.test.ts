// Failed admin logins (/metrics, the queue dashboard) are limited per client address like failed API keys, and
// share their count: guessing the admin token is as slow as guessing a key.
import { startGateway, type TestGateway } from "../helpers/gateway.ts";

let gw: TestGateway;
beforeEach(async () => { gw = await startGateway({ AUTH_FAILURES_PER_MINUTE: "5" }); });
afterEach(async () => { await gw.close(); });

const wrong = { Authorization: "Bearer not-the-admin-token-at-all-000000" };
const right = () => ({ Authorization: `Bearer ${gw.deps.config.ADMIN_TOKEN}` });

test("over the limit, wrong admin tokens get 429 with Retry-After, and the right one is not even compared", async () => {
  expect((await gw.http.get("/metrics").set(right())).status).toBe(200);
  for (let i = 0; i < 3; i++) expect((await gw.http.get("/metrics").set(wrong)).status).toBe(401);
  const basic = { Authorization: `Basic ${Buffer.from("admin:guess").toString("base64")}` };
  for (let i = 0; i < 2; i++) expect((await gw.http.get("/admin/queues").set(basic)).status).toBe(401);
  const limited = await gw.http.get("/metrics").set(wrong);
  expect(limited.status).toBe(429);
  expect(limited.body).toMatchObject({ code: "rate_limited" });
  expect(Number(limited.headers["retry-after"])).toBeGreaterThan(0);
  expect((await gw.http.get("/metrics").set(right())).status).toBe(429);
  expect((await gw.http.get("/admin/queues").set(right())).status).toBe(429);
});

test("failed API keys and failed admin tokens from one address share the count", async () => {
  for (let i = 0; i < 3; i++) expect((await gw.http.get("/api/keys").set({ Authorization: "Bearer nope" })).status).toBe(401);
  for (let i = 0; i < 2; i++) expect((await gw.http.get("/metrics").set(wrong)).status).toBe(401);
  expect((await gw.http.get("/metrics").set(wrong)).status).toBe(429);
  expect((await gw.http.get("/api/keys").set({ Authorization: "Bearer nope" })).status).toBe(429);
});

test("right admin tokens do not count", async () => {
  for (let i = 0; i < 8; i++) expect((await gw.http.get("/metrics").set(right())).status).toBe(200);
  expect((await gw.http.get("/metrics").set(wrong)).status).toBe(401);
});
