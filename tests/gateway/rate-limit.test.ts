import { startGateway, type TestGateway } from "../helpers/gateway.ts";

let a: TestGateway, b: TestGateway;
beforeAll(async () => {
  // Two gateway instances sharing one Redis (and one queue prefix): the quota must be shared between them.
  const env = { RATE_LIMIT_PLANS: "free:3,pro:5", RATE_LIMIT_WINDOW_SECONDS: "30", QUEUE_PREFIX: `rl${Date.now()}` };
  a = await startGateway(env);
  b = await startGateway(env);
});
afterAll(async () => { await a.close(); await b.close(); });

test("every authenticated response carries the rate-limit headers; over quota answers 429 with Retry-After", async () => {
  const { auth } = await a.account();
  const t0 = Math.floor(Date.now() / 1000);
  const r1 = await a.http.get("/api/keys").set(auth);
  const t1 = Math.ceil(Date.now() / 1000); // the window opened while r1 was handled: between t0 and t1
  const r2 = await b.http.get("/api/keys").set(auth);
  const r3 = await a.http.get("/api/keys").set(auth);
  expect([r1, r2, r3].map((r) => r.status)).toEqual([200, 200, 200]);
  expect([r1, r2, r3].map((r) => r.headers["x-ratelimit-remaining"])).toEqual(["2", "1", "0"]);
  expect(r1.headers["x-ratelimit-limit"]).toBe("3");
  const reset = Number(r1.headers["x-ratelimit-reset"]);
  expect(reset).toBeGreaterThanOrEqual(t0 + 29);
  expect(reset).toBeLessThanOrEqual(t1 + 31);

  const over = await b.http.get("/api/keys").set(auth);
  expect(over.status).toBe(429);
  expect(over.body.code).toBe("rate_limited");
  expect(Number(over.headers["retry-after"])).toBeGreaterThan(0);
  expect(Number(over.headers["retry-after"])).toBeLessThanOrEqual(30);
  expect(over.headers["x-ratelimit-remaining"]).toBe("0");
});

test("the quota depends on the account's plan and is counted per account", async () => {
  const pro = await a.account("pro");
  const res = await a.http.get("/api/keys").set(pro.auth);
  expect(res.headers["x-ratelimit-limit"]).toBe("5");
  const free = await a.account("free");
  for (let i = 0; i < 3; i++) await a.http.get("/api/keys").set(free.auth);
  expect((await a.http.get("/api/keys").set(free.auth)).status).toBe(429);
  expect((await a.http.get("/api/keys").set(pro.auth)).status).toBe(200); // another account, its own quota
});

test("all keys of an account share its quota: minting keys adds none", async () => {
  const acct = await a.account("pro");
  const second = (await a.http.post("/api/keys").set(acct.auth).send({ name: "second" })).body.key; // request 1 of 5
  const other = { Authorization: `Bearer ${second}` };
  for (const auth of [acct.auth, other, acct.auth, other]) expect((await b.http.get("/api/keys").set(auth)).status).toBe(200);
  const over = await a.http.get("/api/keys").set(other);
  expect(over.status).toBe(429);
  expect(over.headers["x-ratelimit-limit"]).toBe("5");
  expect((await b.http.get("/api/keys").set(acct.auth)).status).toBe(429);
});

test("public endpoints are not rate limited and carry no quota headers", async () => {
  const res = await a.http.get("/status");
  expect(res.headers["x-ratelimit-limit"]).toBeUndefined();
});
