// Issue 7: each hostile input seen in the field, as a test. Every answer is a clear 4xx problem+json naming the field,
// and nothing is written.
import { execFileSync } from "node:child_process";
import { startGateway, signal, type TestGateway } from "../helpers/gateway.ts";

let gw: TestGateway;
let auth: { Authorization: string };
let accountId: string;
beforeAll(async () => {
  gw = await startGateway({ OUTBOUND_ALLOWLIST: "" });
  ({ auth, accountId } = await gw.account());
});
afterAll(async () => { await gw.close(); });

const BASE = "/api/integrations/webhooks";
const hook = (over: Record<string, unknown> = {}) => ({
  url: "https://hooks.example.com/in", trigger_type: "trend_detected", delivery_mode: "instant_stream", threshold_value: 0, cooldown_seconds: 0, ...over,
});
const NUL = "a\u0000b";
const SURROGATE = "a\ud800b";

function isProblem(res: { status: number; headers: Record<string, string>; body: any }, status: number, code?: string) {
  expect(res.status).toBe(status);
  expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
  expect(res.body.status).toBe(status);
  if (code) expect(res.body.code).toBe(code);
}
const fieldsOf = (res: { body: any }) => res.body.errors.map((e: any) => `${e.location}:${e.path}`);

describe("1. strings Postgres cannot store", () => {
  test.each([["NUL", NUL], ["lone surrogate", SURROGATE]])("%s in stored strings: 422 naming the field, nothing written", async (_what, bad) => {
    const keysBefore = await gw.deps.db.apiKey.count({ where: { accountId } });
    isProblem(await gw.http.post("/api/keys").set(auth).send({ name: bad }), 422, "validation_failed");
    expect(await gw.deps.db.apiKey.count({ where: { accountId } })).toBe(keysBefore);

    const created = await gw.http.post(BASE).set(auth).send(hook({ description: bad }));
    isProblem(created, 422, "validation_failed");
    expect(fieldsOf(created)).toEqual(["body:description"]);
    const ok = await gw.http.post(BASE).set(auth).send(hook());
    const patched = await gw.http.patch(`${BASE}/${ok.body.id}`).set(auth).send({ description: bad });
    expect(fieldsOf(patched)).toEqual(["body:description"]);

    const social = await gw.http.put("/api/integrations/social/google_trends/connection").set(auth)
      .send({ credentials: { access_token: "t" }, terms: ["ok", bad], options: { geo: { type: "country", code: bad } } });
    isProblem(social, 422, "validation_failed");
    expect(fieldsOf(social).sort()).toEqual(["body:options.geo.code", "body:terms.1"]);
    expect(await gw.deps.db.socialConnection.count({ where: { accountId } })).toBe(0);
  });

  test("a signal with NUL or a lone surrogate is rejected on its own, the rest accepted", async () => {
    const res = await gw.http.post("/api/signals").set(auth).send({ signals: [signal(), signal({ topic: NUL }), signal({ id: SURROGATE })] });
    expect(res.status).toBe(202);
    expect(res.body.accepted).toBe(1);
    expect(res.body.rejections.map((r: any) => [r.index, r.errors[0].path])).toEqual([[1, "topic"], [2, "id"]]);
  });
});

describe("2. path and query values", () => {
  test.each(["%00", "%ff", "%", "%E0%A4%A"])("a path id %s answers 4xx problem+json, with or without a key", async (bad) => {
    for (const path of [`${BASE}/${bad}`, `${BASE}/${bad}/executions`, `/api/keys/${bad}`, `${BASE}/${bad}/executions/${bad}/replay`]) {
      const method = path.endsWith("replay") ? "post" : "get";
      const withKey = await gw.http[method](path).set(auth);
      expect([400, 404]).toContain(withKey.status);
      isProblem(withKey, withKey.status);
      const without = await gw.http[method](path);
      expect(without.status).toBeLessThan(500);
      isProblem(without, without.status);
    }
  });

  test("malformed percent-encoding is 400 bad_request; an id that cannot exist is 404 naming the segment", async () => {
    isProblem(await gw.http.get(`${BASE}/%ff`).set(auth), 400, "bad_request");
    const nul = await gw.http.get(`${BASE}/%00`).set(auth);
    isProblem(nul, 404, "not_found");
    expect(fieldsOf(nul)).toEqual(["path:webhook_id"]);
  });
});

describe("3. dates out of range", () => {
  test.each([["0000-01-01T00:00:00Z"], ["+275760-09-13T00:00:00Z"], ["2020-01-01T00:00:00Z"]])("expires_at %s is refused", async (at) => {
    const res = await gw.http.post("/api/keys").set(auth).send({ name: "k", expires_at: at });
    isProblem(res, 422, "validation_failed");
    expect(fieldsOf(res)).toEqual(["body:expires_at"]);
  });

  test("a signal observed far in the future or in year 0000 is rejected, with the bound said", async () => {
    const res = await gw.http.post("/api/signals").set(auth).send({ signals: [signal({ observed_at: "9999-12-31T00:00:00Z" }), signal({ observed_at: "0000-01-01T00:00:00Z" })] });
    expect(res.body.accepted).toBe(0);
    expect(res.body.rejections[0].errors[0].message).toMatch(/3600 seconds in the future/);
    expect(res.body.rejections[1].errors[0].message).toMatch(/1970-01-01/);
  });

  test("a signal dated 1970 (a zero timestamp) or older than 30 days is rejected naming the bound; 29 days back is accepted", async () => {
    const day = 86_400_000;
    const res = await gw.http.post("/api/signals").set(auth).send({ signals: [
      signal({ id: "epoch", observed_at: "1970-01-01T00:00:00Z" }), signal({ id: "old", observed_at: new Date(Date.now() - 31 * day).toISOString() }),
      signal({ id: "ok", observed_at: new Date(Date.now() - 29 * day).toISOString() }),
    ] });
    expect(res.body.accepted).toBe(1);
    expect(res.body.rejections.map((r: any) => [r.id, r.errors[0].path, r.errors[0].message])).toEqual([
      ["epoch", "observed_at", "must not be more than 30 days in the past"], ["old", "observed_at", "must not be more than 30 days in the past"],
    ]);
  });
});

describe("7. one rule for outbound URLs", () => {
  test.each([
    ["http://127.0.0.1:0/", /port/],
    ["http://hooks.example.com:0/x", /port/],
    ["http://hooks.example.com:4931\\@10.0.0.1/", /backslash/],
    ["https://user:pass@hooks.example.com/", /credentials/],
    ["ftp://hooks.example.com/", /http/],
  ])("%s is refused", async (url, message) => {
    const res = await gw.http.post(BASE).set(auth).send(hook({ url }));
    isProblem(res, 422, "validation_failed");
    expect(res.body.errors[0].path).toBe("url");
    expect(res.body.errors[0].message).toMatch(message);
  });

  test("URLs are stored normalised: what is shown is what is called", async () => {
    const res = await gw.http.post(BASE).set(auth).send(hook({ url: "HTTPS://Hooks.Example.COM:443/a/../in?x=1" }));
    expect(res.status).toBe(201);
    expect(res.body.url).toBe("https://hooks.example.com/in?x=1");
  });

  test("provider base URLs follow the same rule (no credentials)", async () => {
    const res = await gw.http.put("/api/integrations/social/youtube/connection").set(auth)
      .send({ credentials: { api_key: "k" }, terms: ["a"], base_url: "https://user:pass@api.example.com/" });
    isProblem(res, 422, "validation_failed");
    expect(fieldsOf(res)).toEqual(["body:base_url"]);
  });

  test("a non-public destination is refused without pointing an API user at operator settings", async () => {
    const res = await gw.http.post(BASE).set(auth).send(hook({ url: "http://10.0.0.1/x" }));
    isProblem(res, 422, "validation_failed");
    expect(res.body.errors[0].code).toBe("blocked_destination");
    expect(JSON.stringify(res.body)).not.toMatch(/OUTBOUND_ALLOWLIST/);
  });
});

describe("8. paging and numbers", () => {
  test.each([`${BASE}`, "/api/keys", "/api/events"])("a garbage cursor on %s is 422 naming cursor", async (path) => {
    const res = await gw.http.get(`${path}?cursor=not-a-cursor`).set(auth);
    isProblem(res, 422, "validation_failed");
    expect(fieldsOf(res)).toEqual(["query:cursor"]);
  });

  test("executions and trends refuse garbage cursors too", async () => {
    const ok = await gw.http.post(BASE).set(auth).send(hook());
    isProblem(await gw.http.get(`${BASE}/${ok.body.id}/executions?cursor=%00`).set(auth), 422, "validation_failed");
    isProblem(await gw.http.get("/api/trends?cursor=bm90LWpzb24").set(auth), 422, "validation_failed");
  });

  test.each(["0x10", "+5", "%205", "5%20", "1e1", "-1", "5.0", ""])("limit=%s is refused: plain decimal integers only", async (limit) => {
    const res = await gw.http.get(`/api/keys?limit=${limit}`).set(auth);
    isProblem(res, 422, "validation_failed");
    expect(fieldsOf(res)).toEqual(["query:limit"]);
  });

  test("limit=5 works", async () => {
    expect((await gw.http.get("/api/keys?limit=5").set(auth)).status).toBe(200);
  });
});

describe("9. brute force", () => {
  test("failed authentications are limited per client address, across gateway instances", async () => {
    const a = await startGateway({ AUTH_FAILURES_PER_MINUTE: "5" });
    const b = await startGateway({ AUTH_FAILURES_PER_MINUTE: "5", QUEUE_PREFIX: a.deps.config.QUEUE_PREFIX });
    try {
      const { auth: good } = await a.account();
      const bad = { Authorization: "Bearer tg_aaaaaaaaaaaa_" + "x".repeat(43) };
      for (let i = 0; i < 3; i++) expect((await a.http.get("/api/keys").set(bad)).status).toBe(401);
      for (let i = 0; i < 2; i++) expect((await b.http.get("/api/keys").set(bad)).status).toBe(401);
      const limited = await a.http.get("/api/keys").set(bad);
      isProblem(limited, 429, "rate_limited");
      expect(Number(limited.headers["retry-after"])).toBeGreaterThan(0);
      // Over the limit, a valid key from that address still passes (a neighbour behind the same NAT)...
      expect((await b.http.get("/api/keys").set(good)).status).toBe(200);
      // ...while a bad one, or no key at all, keeps getting 429.
      expect((await b.http.get("/api/keys").set(bad)).status).toBe(429);
      expect((await b.http.get("/api/keys")).status).toBe(429);
    } finally {
      await a.close();
      await b.close();
    }
  });

  test("a key verified by this gateway is not slowed by another client's failures from the same address", async () => {
    const g = await startGateway({ AUTH_FAILURES_PER_MINUTE: "2" });
    try {
      const { auth: good } = await g.account();
      expect((await g.http.get("/api/keys").set(good)).status).toBe(200); // verified, cached
      for (let i = 0; i < 3; i++) await g.http.get("/api/keys").set({ Authorization: "Bearer nope" });
      expect((await g.http.get("/api/keys").set({ Authorization: "Bearer nope" })).status).toBe(429);
      expect((await g.http.get("/api/keys").set(good)).status).toBe(200);
    } finally {
      await g.close();
    }
  });
});

describe("10. plans", () => {
  test("the CLI refuses an unknown plan instead of falling back to free", () => {
    let err: any;
    try {
      execFileSync("npm", ["run", "--silent", "api-key", "--", "create", "--name", "x", "--plan", "tiny"], { encoding: "utf8", env: process.env, stdio: "pipe" });
    } catch (e) { err = e; }
    expect(err?.status).toBe(64);
    expect(String(err?.stderr)).toMatch(/--plan must be one of free, pro, enterprise/);
  });
});
