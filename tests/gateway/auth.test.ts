import { execFileSync } from "node:child_process";
import { startGateway, type TestGateway } from "../helpers/gateway.ts";

let gw: TestGateway;
beforeAll(async () => { gw = await startGateway(); });
afterAll(async () => { await gw.close(); });

const expect401 = (res: { status: number; headers: Record<string, string>; body: any }) => {
  expect(res.status).toBe(401);
  expect(res.headers["www-authenticate"]).toMatch(/^Bearer /);
  expect(res.headers["content-type"]).toMatch(/application\/problem\+json/);
  expect(res.body.code).toBe("unauthorized");
};

describe("Bearer API keys", () => {
  test("missing, malformed and unknown keys answer 401 with WWW-Authenticate: Bearer", async () => {
    expect401(await gw.http.get("/api/keys"));
    expect401(await gw.http.get("/api/keys").set("Authorization", "Basic Zm9vOmJhcg=="));
    expect401(await gw.http.get("/api/keys").set("Authorization", "Bearer not-a-key"));
    expect401(await gw.http.get("/api/keys").set("Authorization", `Bearer tg_aaaaaaaaaaaa_${"A".repeat(43)}`));
    const { key } = await gw.account();
    expect401(await gw.http.get("/api/keys").set("Authorization", `Bearer ${key.slice(0, -1)}${key.endsWith("A") ? "B" : "A"}`));
  });

  test("/status, /openapi.json and /docs need no key", async () => {
    expect((await gw.http.get("/status")).status).toBe(200);
    expect((await gw.http.get("/openapi.json")).status).toBe(200);
    expect((await gw.http.get("/docs/")).status).toBe(200);
  });

  test("a created key is shown once, works, and is listed without its secret", async () => {
    const a = await gw.account();
    const created = await gw.http.post("/api/keys").set(a.auth).send({ name: "ci deploy" });
    expect(created.status).toBe(201);
    expect(created.body.key).toMatch(/^tg_[a-z2-7]{12}_/);
    expect(created.body.key.startsWith(created.body.prefix)).toBe(true);
    const withNew = await gw.http.get(`/api/keys/${created.body.id}`).set("Authorization", `Bearer ${created.body.key}`);
    expect(withNew.status).toBe(200);
    expect(withNew.body).not.toHaveProperty("key");
    const list = await gw.http.get("/api/keys").set(a.auth);
    expect(list.body.data.map((k: any) => k.name).sort()).toEqual(["ci deploy", "test key"]);
    expect(JSON.stringify(list.body)).not.toContain(created.body.key);
  });

  test("a revoked key answers 401 at once", async () => {
    const a = await gw.account();
    const other = await gw.http.post("/api/keys").set(a.auth).send({ name: "to revoke" });
    const auth = { Authorization: `Bearer ${other.body.key}` };
    expect((await gw.http.get("/api/keys").set(auth)).status).toBe(200); // now cached
    expect((await gw.http.delete(`/api/keys/${other.body.id}`).set(a.auth)).status).toBe(204);
    expect401(await gw.http.get("/api/keys").set(auth));
    const listed = await gw.http.get(`/api/keys/${other.body.id}`).set(a.auth);
    expect(listed.body.status).toBe("revoked");
  });

  test("an expired key answers 401", async () => {
    const a = await gw.account();
    const soon = new Date(Date.now() + 1500).toISOString();
    const k = await gw.http.post("/api/keys").set(a.auth).send({ name: "short", expires_at: soon });
    const auth = { Authorization: `Bearer ${k.body.key}` };
    expect((await gw.http.get("/api/keys").set(auth)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1700));
    expect401(await gw.http.get("/api/keys").set(auth));
  });

  test("rotation returns a new key; the old one works for the grace period, then not", async () => {
    const a = await gw.account();
    const rotated = await gw.http.post(`/api/keys/${a.keyId}/rotate`).set(a.auth).send({ grace_period_seconds: 2 });
    expect(rotated.status).toBe(201);
    expect(rotated.body.key).not.toBe(a.key);
    expect(rotated.body.previous_key.status).toBe("expiring");
    expect((await gw.http.get("/api/keys").set(a.auth)).status).toBe(200);
    expect((await gw.http.get("/api/keys").set("Authorization", `Bearer ${rotated.body.key}`)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2200));
    expect401(await gw.http.get("/api/keys").set(a.auth));
    expect((await gw.http.get("/api/keys").set("Authorization", `Bearer ${rotated.body.key}`)).status).toBe(200);
  });

  test("rotation with no grace period revokes the old key immediately", async () => {
    const a = await gw.account();
    const rotated = await gw.http.post(`/api/keys/${a.keyId}/rotate`).set(a.auth).send({ grace_period_seconds: 0 });
    expect(rotated.status).toBe(201);
    expect401(await gw.http.get("/api/keys").set(a.auth));
  });

  test("last_used_at is recorded", async () => {
    const a = await gw.account();
    await gw.http.get("/api/keys").set(a.auth);
    const deadline = Date.now() + 3000;
    let seen = null;
    while (!seen && Date.now() < deadline) {
      seen = (await gw.http.get(`/api/keys/${a.keyId}`).set(a.auth)).body.last_used_at;
    }
    expect(Date.parse(seen)).toBeGreaterThan(Date.now() - 60_000);
  });

  test("another account's key answers 404, never 403 or its data", async () => {
    const a = await gw.account();
    const b = await gw.account();
    for (const res of [
      await gw.http.get(`/api/keys/${a.keyId}`).set(b.auth),
      await gw.http.delete(`/api/keys/${a.keyId}`).set(b.auth),
      await gw.http.post(`/api/keys/${a.keyId}/rotate`).set(b.auth).send({}),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.code).toBe("not_found");
    }
    expect((await gw.http.get("/api/keys").set(a.auth)).status).toBe(200); // untouched
    const bList = await gw.http.get("/api/keys").set(b.auth);
    expect(bList.body.data.map((k: any) => k.id)).toEqual([b.keyId]);
  });

  test("a key revoked with the CLI answers 401 at once on a gateway that had it cached", async () => {
    const a = await gw.account();
    expect((await gw.http.get("/api/keys").set(a.auth)).status).toBe(200); // now cached
    const out = execFileSync("npm", ["run", "--silent", "api-key", "--", "revoke", "--id", a.keyId], {
      encoding: "utf8", env: { ...process.env, QUEUE_PREFIX: gw.deps.config.QUEUE_PREFIX },
    });
    expect(out.trim()).toBe(`revoked ${a.keyId}`);
    const deadline = Date.now() + 2000; // the invalidation travels over Redis pub/sub
    let status = 200;
    while (status === 200 && Date.now() < deadline) status = (await gw.http.get("/api/keys").set(a.auth)).status;
    expect(status).toBe(401);
  });

  test("the CLI creates a key and prints it alone on its last line", async () => {
    const out = execFileSync("npm", ["run", "--silent", "api-key", "--", "create", "--name", "cli key"], { encoding: "utf8", env: process.env });
    const key = out.trim().split("\n").at(-1)!;
    expect(key).toMatch(/^tg_[a-z2-7]{12}_[A-Za-z0-9_-]{43}$/);
    const res = await gw.http.get("/api/keys").set("Authorization", `Bearer ${key}`);
    expect(res.status).toBe(200);
    expect(res.body.data[0].name).toBe("cli key");
  });
});
