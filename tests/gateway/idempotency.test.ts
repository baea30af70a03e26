import { QUEUES } from "@trendgate/contracts";
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
    const ttl = await gw.deps.redis.ttl(`${gw.deps.config.QUEUE_PREFIX}:idem:${accountId}:ttl`);
    expect(ttl).toBeGreaterThan(86_400 - 60);
  });
});
