import { QUEUES, UpdateWebhookBody } from "@trendgate/contracts";
import { startGateway, type TestGateway } from "../helpers/gateway.ts";
import { webhookBody } from "../helpers/stack.ts";

let gw: TestGateway;
beforeAll(async () => { gw = await startGateway(); });
afterAll(async () => { await gw.close(); });

const BASE = "/api/integrations/webhooks";

describe("webhook subscriptions API", () => {
  test("create answers with the spec's fields and an id, and the secret once", async () => {
    const { auth } = await gw.account();
    const res = await gw.http.post(BASE).set(auth).send(webhookBody("https://hooks.example.com/t", { threshold_value: 2.5, cooldown_seconds: 600 }));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      url: "https://hooks.example.com/t", trigger_type: "trend_velocity", delivery_mode: "instant_stream",
      threshold_value: 2.5, cooldown_seconds: 600, status: "active",
    });
    expect(res.body.id).toMatch(/^wh_/);
    expect(res.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(res.body.secret.slice(6), "base64")).toHaveLength(32);
    expect(res.headers.location).toBe(`${BASE}/${res.body.id}`);

    const got = await gw.http.get(`${BASE}/${res.body.id}`).set(auth);
    expect(got.status).toBe(200);
    expect(got.body).not.toHaveProperty("secret");
    const list = await gw.http.get(BASE).set(auth);
    expect(list.body.data.map((w: any) => w.id)).toEqual([res.body.id]);
    expect(JSON.stringify(list.body)).not.toContain(res.body.secret.slice(6));
    const stored = await gw.deps.db.webhookSubscription.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(stored.secretCiphertext).not.toContain(res.body.secret.slice(6)); // encrypted at rest
  });

  test.each([
    [{ url: "ftp://example.com/x" }, "url"],
    [{ url: "https://user:pw@example.com/x" }, "url"],
    [{ url: "not a url" }, "url"],
    [{ trigger_type: "whenever" }, "trigger_type"],
    [{ delivery_mode: "carrier_pigeon" }, "delivery_mode"],
    [{ threshold_value: -1 }, "threshold_value"],
    [{ threshold_value: "high" }, "threshold_value"],
    [{ cooldown_seconds: 1.5 }, "cooldown_seconds"],
    [{ cooldown_seconds: 8 * 86_400 }, "cooldown_seconds"],
    [{ category: "Not A Path" }, "category"],
  ])("invalid %j answers 422 naming %s, and creates nothing", async (over, field) => {
    const { auth } = await gw.account();
    const res = await gw.http.post(BASE).set(auth).send(webhookBody("https://hooks.example.com/t", over));
    expect(res.status).toBe(422);
    expect(res.body.code).toBe("validation_failed");
    expect(res.body.errors.map((e: any) => e.path)).toEqual([field]);
    expect((await gw.http.get(BASE).set(auth)).body.data).toEqual([]);
  });

  test("a literal private or metadata IP is refused at creation (unless allow-listed)", async () => {
    const { auth } = await gw.account();
    for (const url of ["http://10.0.0.1/x", "http://169.254.169.254/latest/meta-data", "http://[::1]:8080/x", "http://127.0.0.1/x"]) {
      const res = await gw.http.post(BASE).set(auth).send(webhookBody(url));
      expect(res.status).toBe(422);
      expect(res.body.errors[0]).toMatchObject({ path: "url", code: "blocked_destination" });
    }
    const allowed = await startGateway({ OUTBOUND_ALLOWLIST: "127.0.0.1" });
    const a = await allowed.account();
    expect((await allowed.http.post(BASE).set(a.auth).send(webhookBody("http://127.0.0.1:9/x"))).status).toBe(201);
    await allowed.close();
  });

  test("update, pause, resume and delete; another account sees 404 for all of them", async () => {
    const a = await gw.account();
    const b = await gw.account();
    const id = (await gw.http.post(BASE).set(a.auth).send(webhookBody("https://hooks.example.com/t"))).body.id;
    for (const res of [
      await gw.http.get(`${BASE}/${id}`).set(b.auth),
      await gw.http.patch(`${BASE}/${id}`).set(b.auth).send({ threshold_value: 1 }),
      await gw.http.post(`${BASE}/${id}/test`).set(b.auth),
      await gw.http.get(`${BASE}/${id}/executions`).set(b.auth),
      await gw.http.post(`${BASE}/${id}/pause`).set(b.auth),
      await gw.http.post(`${BASE}/${id}/rotate-secret`).set(b.auth).send({}),
      await gw.http.delete(`${BASE}/${id}`).set(b.auth),
    ]) expect(res.status).toBe(404);

    const patched = await gw.http.patch(`${BASE}/${id}`).set(a.auth).send({ threshold_value: 7, category: "tech" });
    expect(patched.body).toMatchObject({ threshold_value: 7, category: "tech", trigger_type: "trend_velocity" });
    expect((await gw.http.patch(`${BASE}/${id}`).set(a.auth).send({})).status).toBe(422);
    expect((await gw.http.post(`${BASE}/${id}/pause`).set(a.auth)).body.status).toBe("paused");
    expect((await gw.http.post(`${BASE}/${id}/resume`).set(a.auth)).body.status).toBe("active");
    expect((await gw.http.delete(`${BASE}/${id}`).set(a.auth)).status).toBe(204);
    expect((await gw.http.get(`${BASE}/${id}`).set(a.auth)).status).toBe(404);
  });

  test("a subscription read back writes back as it is: PATCH with the read's rule fields, or POST them as a copy", async () => {
    const { auth } = await gw.account();
    const created = await gw.http.post(BASE).set(auth).send(webhookBody("https://hooks.example.com/rt", { trigger_type: "trend_detected", threshold_value: 0 }));
    expect(created.status).toBe(201);
    const read = (await gw.http.get(`${BASE}/${created.body.id}`).set(auth)).body;
    expect(read.event_types).toEqual([]);
    const writable = Object.fromEntries(Object.entries(read).filter(([k]) => k in UpdateWebhookBody.shape));
    const patched = await gw.http.patch(`${BASE}/${created.body.id}`).set(auth).send(writable);
    expect([patched.status, patched.body.event_types]).toEqual([200, []]);
    expect({ ...patched.body, updated_at: null }).toEqual({ ...read, updated_at: null });
    const copy = await gw.http.post(BASE).set(auth).send(writable);
    expect(copy.status).toBe(201);
    // An empty list is still refused where it is the trigger: event_types needs at least one type.
    const none = await gw.http.patch(`${BASE}/${created.body.id}`).set(auth).send({ trigger_type: "event_types", event_types: [] });
    expect(none.status).toBe(422);
    expect(none.body.errors).toEqual([expect.objectContaining({ path: "event_types" })]);
  });

  test("executions: limit is validated against its documented maximum", async () => {
    const { auth } = await gw.account();
    const id = (await gw.http.post(BASE).set(auth).send(webhookBody("https://hooks.example.com/t"))).body.id;
    const res = await gw.http.get(`${BASE}/${id}/executions?limit=101`).set(auth);
    expect(res.status).toBe(422);
    expect(res.body.errors[0]).toMatchObject({ location: "query", path: "limit" });
    const ok = await gw.http.get(`${BASE}/${id}/executions?limit=100`).set(auth);
    expect(ok.body).toEqual({ data: [], next_cursor: null });
  });

  test("the dashboard is behind the admin credential", async () => {
    expect((await gw.http.get("/admin/queues")).status).toBe(401);
    const { auth } = await gw.account();
    expect((await gw.http.get("/admin/queues").set(auth)).status).toBe(401);
    const basic = "Basic " + Buffer.from(`admin:${gw.deps.config.ADMIN_TOKEN}`).toString("base64");
    const page = await gw.http.get("/admin/queues").set("Authorization", basic);
    expect(page.status).toBe(200);
    expect(page.text).toContain("<html");
    const api = await gw.http.get("/admin/queues/api/queues").set("Authorization", basic);
    expect(api.body.queues.map((q: any) => q.name).sort()).toEqual(Object.values(QUEUES).sort()); // every queue, new ones included
  });
});
