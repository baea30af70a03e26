import { QUEUES } from "@trendgate/contracts";
import { masters } from "@trendgate/queues";
import { signal, startGateway, type TestGateway } from "../helpers/gateway.ts";

let gw: TestGateway;
beforeAll(async () => { gw = await startGateway(); });
afterAll(async () => { await gw.close(); });

const jobCount = () => gw.deps.queues.get(QUEUES.signals).count();

describe("Idempotency-Key", () => {
  test("a retry with the same key and body returns the first response and does the work once", async () => {
    const { auth } = await gw.account();
    const body = { signals: [signal({ id: "idem-1" })] };
    const before = await jobCount();
    const first = await gw.http.post("/api/signals").set(auth).set("Idempotency-Key", "k-1").send(body);
    const again = await gw.http.post("/api/signals").set(auth).set("Idempotency-Key", "k-1").send(body);
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(first.headers["idempotent-replayed"]).toBeUndefined();
    expect((await jobCount()) - before).toBe(1);
  });

  test("the same key with a different body is refused and does nothing", async () => {
    const { auth } = await gw.account();
    await gw.http.post("/api/signals").set(auth).set("Idempotency-Key", "k-2").send({ signals: [signal()] });
    const before = await jobCount();
    const res = await gw.http.post("/api/signals").set(auth).set("Idempotency-Key", "k-2").send({ signals: [signal({ count: 99 })] });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe("idempotency_key_reused");
    expect(await jobCount()).toBe(before);
  });

  test("keys are per account", async () => {
    const a = await gw.account();
    const b = await gw.account();
    const body = { name: "same" };
    const ra = await gw.http.post("/api/keys").set(a.auth).set("Idempotency-Key", "shared").send(body);
    const rb = await gw.http.post("/api/keys").set(b.auth).set("Idempotency-Key", "shared").send(body);
    expect(ra.status).toBe(201);
    expect(rb.status).toBe(201);
    expect(rb.body.id).not.toBe(ra.body.id);
    expect(rb.headers["idempotent-replayed"]).toBeUndefined();
  });

  test("a key still in progress answers 409; a malformed key answers 400", async () => {
    const { auth, accountId } = await gw.account();
    // Another gateway instance is midway through the first request with this key.
    await gw.deps.idempotency.begin(accountId, "busy", "some-other-request");
    const busy = await gw.http.post("/api/keys").set(auth).set("Idempotency-Key", "busy").send({ name: "x" });
    expect(busy.status).toBe(422); // different fingerprint wins over in-progress: it can never succeed
    const fp = (await import("../../apps/gateway/src/http/idempotency.ts")).IdempotencyStore.fingerprint("POST", "/api/keys", Buffer.from('{"name":"y"}'));
    await gw.deps.idempotency.begin(accountId, "busy2", fp);
    const inProgress = await gw.http.post("/api/keys").set(auth).set("Idempotency-Key", "busy2").set("Content-Type", "application/json").send('{"name":"y"}');
    expect(inProgress.status).toBe(409);
    expect(inProgress.body.code).toBe("idempotency_request_in_progress");
    const bad = await gw.http.post("/api/keys").set(auth).set("Idempotency-Key", "has space").send({ name: "x" });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("invalid_idempotency_key");
  });

  test("a failed request does not burn the key: the retry runs", async () => {
    const { auth } = await gw.account();
    const invalid = await gw.http.post("/api/keys").set(auth).set("Idempotency-Key", "k-3").send({ name: "" });
    expect(invalid.status).toBe(422);
    const valid = await gw.http.post("/api/keys").set(auth).set("Idempotency-Key", "k-3").send({ name: "ok" });
    expect(valid.status).toBe(201);
  });

  test("records are kept at least 24 hours", async () => {
    const { auth, accountId } = await gw.account();
    await gw.http.post("/api/keys").set(auth).set("Idempotency-Key", "ttl").send({ name: "ttl" });
    const [row] = await gw.deps.db.$queryRawUnsafe<{ seconds: number }[]>(
      `SELECT extract(epoch FROM expires_at - now())::float8 AS seconds FROM idempotency_keys WHERE account_id = $1 AND key = 'ttl'`, accountId);
    expect(row.seconds).toBeGreaterThan(86_400 - 60);
  });

  test("secrets shown once are not readable at rest: the recorded answer is sealed, and nothing is kept in Redis", async () => {
    const { auth, accountId } = await gw.account();
    const created = await gw.http.post("/api/keys").set(auth).set("Idempotency-Key", "secret-1").send({ name: "s" });
    const hook = await gw.http.post("/api/integrations/webhooks").set(auth).set("Idempotency-Key", "secret-2")
      .send({ url: "https://hooks.example.com/x", trigger_type: "trend_detected", delivery_mode: "instant_stream", threshold_value: 0, cooldown_seconds: 0 });
    const rotated = await gw.http.post(`/api/integrations/webhooks/${hook.body.id}/rotate-secret`).set(auth).set("Idempotency-Key", "secret-3").send({});
    const secrets = [created.body.key, hook.body.secret, rotated.body.secret];
    expect(secrets.every((x) => typeof x === "string" && x.length > 20)).toBe(true);

    // Redis: no key or value of this gateway's holds any of them.
    const dump: string[] = [];
    const keys = (await Promise.all(masters(gw.deps.redis).map((m) => m.keys("*")))).flat(); // every master of a cluster
    expect(keys.length).toBeGreaterThan(0);
    for (const k of keys) {
      dump.push(k);
      const type = await gw.deps.redis.type(k);
      if (type === "string") dump.push((await gw.deps.redis.get(k)) ?? "");
      if (type === "hash") dump.push(JSON.stringify(await gw.deps.redis.hgetall(k)));
    }
    for (const secret of secrets) expect(dump.join("\n")).not.toContain(secret);
    // Postgres: the records exist, sealed.
    const rows = await gw.deps.db.idempotencyKey.findMany({ where: { accountId } });
    expect(rows).toHaveLength(3);
    const stored = JSON.stringify(rows);
    for (const secret of secrets) expect(stored).not.toContain(secret);
    expect(rows.every((r) => r.responseSealed?.startsWith("v1."))).toBe(true);
    // The replay still gives the caller the answer it did not receive.
    const replay = await gw.http.post("/api/keys").set(auth).set("Idempotency-Key", "secret-1").send({ name: "s" });
    expect(replay.headers["idempotent-replayed"]).toBe("true");
    expect(replay.body.key).toBe(created.body.key);
  });

  test("a request whose lock ran out (its gateway died before committing) frees the key for the retry", async () => {
    const short = await startGateway({ IDEMPOTENCY_LOCK_SECONDS: "1" });
    try {
      const { auth, accountId } = await short.account();
      const body = '{"name":"after-crash"}';
      const fp = (await import("../../apps/gateway/src/http/idempotency.ts")).IdempotencyStore.fingerprint("POST", "/api/keys", Buffer.from(body));
      await short.deps.idempotency.begin(accountId, "crashed", fp); // the dead request's claim, never completed
      const during = await short.http.post("/api/keys").set(auth).set("Idempotency-Key", "crashed").set("Content-Type", "application/json").send(body);
      expect(during.status).toBe(409);
      await new Promise((r) => setTimeout(r, 1200));
      const after = await short.http.post("/api/keys").set(auth).set("Idempotency-Key", "crashed").set("Content-Type", "application/json").send(body);
      expect(after.status).toBe(201);
      expect(await short.deps.db.apiKey.count({ where: { accountId, name: "after-crash" } })).toBe(1);
    } finally {
      await short.close();
    }
  });
});
