import { Webhook as StandardWebhook } from "standardwebhooks";
import { verifyOwnSignature } from "@trendgate/delivery";
import { QUEUES } from "@trendgate/contracts";
import { waitFor } from "../helpers/config.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startStack, trendEvent, webhookBody, type Stack } from "../helpers/stack.ts";

let stack: Stack;
let rx: Receiver;
beforeAll(async () => {
  stack = await startStack({ OUTBOUND_RESPONSE_MAX_BYTES: "64" });
  rx = await startReceiver();
});
afterAll(async () => { await stack.close(); await rx.close(); });

const BASE = "/api/integrations/webhooks";
let n = 0;
async function subscribe(over: Record<string, unknown> = {}) {
  const a = await stack.gw.account();
  const path = `/hook-${++n}`;
  const res = await stack.gw.http.post(BASE).set(a.auth).send(webhookBody(rx.url(path), over));
  expect(res.status).toBe(201);
  return { ...a, id: res.body.id as string, secret: res.body.secret as string, path };
}
const executions = async (s: { auth: any; id: string }, q = "") => (await stack.gw.http.get(`${BASE}/${s.id}/executions${q}`).set(s.auth)).body;
const delivery = (id: string) => stack.gw.deps.db.webhookDelivery.findUniqueOrThrow({ where: { id } });

describe("signed deliveries", () => {
  test("the test payload arrives signed; standardwebhooks and the X-Webhook-Signature recipe both verify it", async () => {
    const s = await subscribe();
    const res = await stack.gw.http.post(`${BASE}/${s.id}/test`).set(s.auth);
    expect(res.status).toBe(202);
    const [got] = await waitFor(async () => rx.on(s.path).length === 1 && rx.on(s.path));
    expect(got.headers["content-type"]).toBe("application/json");
    expect(got.headers["x-webhook-test"]).toBe("true");
    expect(got.headers["x-webhook-id"]).toBe(res.body.delivery_id);
    expect(got.headers["webhook-id"]).toBe(res.body.delivery_id);
    expect(Math.abs(Number(got.headers["x-webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(10);

    // Off-the-shelf verifier (Standard Webhooks reference library, written by others).
    const verified = new StandardWebhook(s.secret.slice("whsec_".length)).verify(got.body, {
      "webhook-id": String(got.headers["webhook-id"]), "webhook-timestamp": String(got.headers["webhook-timestamp"]), "webhook-signature": String(got.headers["webhook-signature"]),
    });
    expect(verified).toEqual(JSON.parse(got.body));
    // The documented recipe: sha256=<hex HMAC-SHA256(key = base64-decoded secret, "<timestamp>.<raw body>")>.
    const crypto = await import("node:crypto");
    const expected = "sha256=" + crypto.createHmac("sha256", Buffer.from(s.secret.slice(6), "base64")).update(`${got.headers["x-webhook-timestamp"]}.${got.body}`).digest("hex");
    expect(got.headers["x-webhook-signature"]).toBe(expected);
    expect(verifyOwnSignature(s.secret, String(got.headers["x-webhook-signature"]), String(got.headers["x-webhook-timestamp"]), got.body)).toBe(true);
    expect(() => new StandardWebhook(Buffer.alloc(32, 1).toString("base64")).verify(got.body, got.headers as any)).toThrow();

    // Exactly the spec's body fields.
    expect(Object.keys(JSON.parse(got.body))).toEqual(["trend_name", "category", "severity", "velocity", "timestamp", "summary", "source_link", "recommended_next_steps"]);
  });

  test("the test payload is the same body every time for a subscription", async () => {
    const s = await subscribe();
    await stack.gw.http.post(`${BASE}/${s.id}/test`).set(s.auth);
    await stack.gw.http.post(`${BASE}/${s.id}/test`).set(s.auth);
    const [a, b] = await waitFor(async () => rx.on(s.path).length === 2 && rx.on(s.path));
    expect(a.body).toBe(b.body);
    expect(a.headers["webhook-id"]).not.toBe(b.headers["webhook-id"]); // two deliveries
    expect(JSON.parse(a.body)).toMatchObject({ category: "test/webhook", trend_name: "Trendgate test event" });
    // Its link is this service's own event catalog, not a site outside it.
    expect(JSON.parse(a.body).source_link).toBe(`${stack.gw.deps.config.PUBLIC_BASE_URL.replace(/\/$/, "")}/docs/events`);
  });

  test("a trend event crossing the threshold is delivered with the spec payload", async () => {
    const s = await subscribe({ threshold_value: 100 });
    await stack.publish(trendEvent(s.accountId, { velocity: 150, previous_velocity: 80, severity: "high" }));
    const [got] = await waitFor(async () => rx.on(s.path).length === 1 && rx.on(s.path));
    expect(JSON.parse(got.body)).toEqual({
      trend_name: "AI agents", category: "tech/ai", severity: "high", velocity: 150, timestamp: "2026-11-22T06:00:00.000Z",
      summary: "Mentions of AI agents are 3x their usual rate.", source_link: "https://trendgate.dev/briefings/trend_ai_agents",
      recommended_next_steps: ["Push to the content workflow", "Raise the AI category bid"],
    });
    expect(got.headers["x-webhook-test"]).toBeUndefined();
  });

  test("during a secret rotation both secrets sign; after it only the new one", async () => {
    const s = await subscribe();
    const rot = await stack.gw.http.post(`${BASE}/${s.id}/rotate-secret`).set(s.auth).send({ grace_period_seconds: 3600 });
    expect(rot.status).toBe(200);
    expect(rot.body.secret).not.toBe(s.secret);
    await stack.gw.http.post(`${BASE}/${s.id}/test`).set(s.auth);
    const [got] = await waitFor(async () => rx.on(s.path).length === 1 && rx.on(s.path));
    expect(String(got.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    expect(String(got.headers["x-webhook-signature"]).split(" ")).toHaveLength(2);
    for (const secret of [s.secret, rot.body.secret]) {
      expect(() => new StandardWebhook(secret.slice(6)).verify(got.body, got.headers as any)).not.toThrow();
      expect(verifyOwnSignature(secret, String(got.headers["x-webhook-signature"]), String(got.headers["x-webhook-timestamp"]), got.body)).toBe(true);
    }
    const now = await stack.gw.http.post(`${BASE}/${s.id}/rotate-secret`).set(s.auth).send({ grace_period_seconds: 0 });
    await stack.gw.http.post(`${BASE}/${s.id}/test`).set(s.auth);
    const second = (await waitFor(async () => rx.on(s.path).length === 2 && rx.on(s.path)))[1];
    expect(String(second.headers["webhook-signature"]).split(" ")).toHaveLength(1);
    expect(() => new StandardWebhook(now.body.secret.slice(6)).verify(second.body, second.headers as any)).not.toThrow();
    expect(() => new StandardWebhook(rot.body.secret.slice(6)).verify(second.body, second.headers as any)).toThrow();
  });
});

describe("retries and failures", () => {
  test("5xx is retried on the schedule with the same X-Webhook-Id; Retry-After on 429 is honoured", async () => {
    const s = await subscribe();
    rx.setResponder((r, n) => r.path !== s.path ? { status: 204 } : n === 1 ? { status: 500, body: "boom" } : n === 2 ? { status: 429, headers: { "Retry-After": "3" } } : { status: 200, body: "ok" });
    const { body } = await stack.gw.http.post(`${BASE}/${s.id}/test`).set(s.auth);
    const got = await waitFor(async () => rx.on(s.path).length === 3 && rx.on(s.path), { timeoutMs: 15_000 });
    rx.setResponder(() => ({ status: 204 }));
    expect(new Set(got.map((g) => g.headers["webhook-id"]))).toEqual(new Set([body.delivery_id]));
    expect(got[1].at - got[0].at).toBeGreaterThanOrEqual(900); // schedule: 1 s (no jitter in tests)
    expect(got[2].at - got[1].at).toBeGreaterThanOrEqual(2900); // Retry-After: 3 beats the 1 s schedule
    await waitFor(async () => (await delivery(body.delivery_id)).status === "succeeded");
    const ex = (await executions(s)).data;
    expect(ex.map((e: any) => [e.attempt, e.outcome, e.response_status, e.error_class])).toEqual([
      [3, "succeeded", 200, null], [2, "retrying", 429, "http_429"], [1, "retrying", 500, "http_5xx"],
    ]);
    expect(ex[2].response_body).toBe("boom");
    expect(Date.parse(ex[1].next_retry_at) - Date.parse(ex[1].created_at)).toBeGreaterThanOrEqual(2900);
    expect(ex[0].request.headers["X-Webhook-Signature"]).toBe("[redacted]");
    expect(ex[0].request.headers["X-Webhook-Id"]).toBe(body.delivery_id);
    expect(ex[0].request.url).toBe(rx.url(s.path));
  });

  test("a failed attempt ends its BullMQ job as failed (with the reason), and the retry still happens exactly once", async () => {
    const s = await subscribe();
    rx.setResponder((r, n) => r.path !== s.path ? { status: 204 } : n === 1 ? { status: 503, body: "down" } : { status: 200, body: "ok" });
    const { body } = await stack.gw.http.post(`${BASE}/${s.id}/test`).set(s.auth);
    await waitFor(async () => (await delivery(body.delivery_id)).status === "succeeded", { timeoutMs: 15_000 });
    const queue = stack.gw.deps.queues.get(QUEUES.webhookDeliveries);
    const first = await waitFor(async () => { const j = await queue.getJob(`${body.delivery_id}-1`); return j && (await j.getState()) === "failed" && j; });
    expect(first.failedReason).toMatch(/^attempt 1 failed: http_5xx: HTTP 503; attempt 2 at \d{4}-/);
    expect(first.attemptsMade).toBe(1); // BullMQ did not run it again
    expect(first.opts.removeOnFail).toMatchObject({ count: expect.any(Number) }); // the failed set stays bounded
    expect((await queue.getFailed()).map((j) => j.id)).toContain(`${body.delivery_id}-1`);
    expect(await (await queue.getJob(`${body.delivery_id}-2`))?.getState()).toBe("completed");
    await new Promise((r) => setTimeout(r, 1500)); // a sweep (300 ms) and a schedule step (1 s) later: nothing more
    rx.setResponder(() => ({ status: 204 }));
    expect(rx.on(s.path)).toHaveLength(2);
    expect((await executions(s)).data.map((e: any) => [e.attempt, e.outcome, e.response_status])).toEqual([[2, "succeeded", 200], [1, "retrying", 503]]);
  });

  test("a 400 is not retried", async () => {
    const s = await subscribe();
    rx.setResponder((r) => r.path === s.path ? { status: 400, body: "bad" } : { status: 204 });
    const { body } = await stack.gw.http.post(`${BASE}/${s.id}/test`).set(s.auth);
    await waitFor(async () => (await delivery(body.delivery_id)).status === "failed");
    await new Promise((r) => setTimeout(r, 1500)); // longer than the retry schedule's first step
    rx.setResponder(() => ({ status: 204 }));
    expect(rx.on(s.path)).toHaveLength(1);
    const [e] = (await executions(s)).data;
    expect(e).toMatchObject({ outcome: "failed", response_status: 400, error_class: "http_4xx", next_retry_at: null });
  });

  test("retries stop when the schedule is exhausted", async () => {
    const s = await subscribe();
    rx.setResponder((r) => r.path === s.path ? { status: 503 } : { status: 204 });
    const { body } = await stack.gw.http.post(`${BASE}/${s.id}/test`).set(s.auth);
    await waitFor(async () => (await delivery(body.delivery_id)).status === "failed", { timeoutMs: 15_000 });
    rx.setResponder(() => ({ status: 204 }));
    expect(rx.on(s.path)).toHaveLength(4); // 1 + 3 retries (WEBHOOK_RETRY_SCHEDULE_SECONDS=1,1,1)
    expect((await executions(s)).data[0]).toMatchObject({ attempt: 4, outcome: "failed", next_retry_at: null });
    const last = await stack.gw.deps.queues.get(QUEUES.webhookDeliveries).getJob(`${body.delivery_id}-4`);
    expect(await last?.getState()).toBe("failed");
    expect(last?.failedReason).toBe("attempt 4 failed: http_5xx: HTTP 503; no retry (final)");
  });

  test("a late 410 from the URL a subscription had before an edit does not disable it", async () => {
    // The old endpoint answers 410 after 1.5 s; the owner moves the subscription to a working URL meanwhile.
    const s = await subscribe();
    const moved = `${s.path}-moved`;
    rx.setResponder((r) => r.path === s.path ? { status: 410, delayMs: 1500 } : { status: 204 });
    await stack.gw.http.post(`${BASE}/${s.id}/test`).set(s.auth);
    await waitFor(async () => rx.on(s.path).length === 1);
    expect((await stack.gw.http.patch(`${BASE}/${s.id}`).set(s.auth).send({ url: rx.url(moved) })).status).toBe(200);
    await waitFor(async () => (await executions(s)).data.some((e: { response_status: number | null }) => e.response_status === 410));
    rx.setResponder(() => ({ status: 204 }));
    expect((await stack.gw.http.get(`${BASE}/${s.id}`).set(s.auth)).body).toMatchObject({ status: "active" });
    // The next event goes to the new URL.
    await stack.gw.http.post(`${BASE}/${s.id}/test`).set(s.auth);
    await waitFor(async () => rx.on(moved).length === 1);
  });

  test("410 Gone disables the subscription and tells the account", async () => {
    const s = await subscribe();
    rx.setResponder((r) => r.path === s.path ? { status: 410 } : { status: 204 });
    await stack.gw.http.post(`${BASE}/${s.id}/test`).set(s.auth);
    await waitFor(async () => (await stack.gw.http.get(`${BASE}/${s.id}`).set(s.auth)).body.status === "disabled");
    rx.setResponder(() => ({ status: 204 }));
    const sub = (await stack.gw.http.get(`${BASE}/${s.id}`).set(s.auth)).body;
    expect(sub.disabled_reason).toMatch(/410/);
    const events = await stack.gw.http.get("/api/events").set(s.auth);
    expect(events.body.data).toEqual([expect.objectContaining({ type: "webhook.disabled", data: { webhook_id: s.id, reason: sub.disabled_reason } })]);
    // Events while disabled are recorded as failed deliveries, not sent; after resume, recover sends them.
    const since = new Date().toISOString();
    await stack.publish(trendEvent(s.accountId, { velocity: 150, previous_velocity: 10 }));
    await waitFor(() => stack.gw.deps.db.webhookDelivery.count({ where: { subscriptionId: s.id, status: "failed", lastError: "subscription disabled" } }));
    expect(rx.on(s.path)).toHaveLength(1);
    expect((await stack.gw.http.post(`${BASE}/${s.id}/resume`).set(s.auth)).body.status).toBe("active");
    expect((await stack.gw.http.post(`${BASE}/${s.id}/recover`).set(s.auth).send({ since })).body).toEqual({ recovered: 1 });
    await waitFor(async () => rx.on(s.path).length === 2);
    expect(JSON.parse(rx.on(s.path)[1].body).velocity).toBe(150);
  });

  test("a subscription failing continuously past the configured period is disabled", async () => {
    const s = await subscribe();
    await stack.gw.deps.db.webhookSubscription.update({ where: { id: s.id }, data: { failingSince: new Date(Date.now() - 6 * 86_400_000) } });
    rx.setResponder((r) => r.path === s.path ? { status: 500 } : { status: 204 });
    await stack.gw.http.post(`${BASE}/${s.id}/test`).set(s.auth);
    await waitFor(async () => (await stack.gw.http.get(`${BASE}/${s.id}`).set(s.auth)).body.status === "disabled");
    rx.setResponder(() => ({ status: 204 }));
    expect((await stack.gw.http.get(`${BASE}/${s.id}`).set(s.auth)).body.disabled_reason).toMatch(/failing continuously since/);
    expect((await stack.gw.http.get("/api/events?type=webhook.disabled").set(s.auth)).body.data).toHaveLength(1);
  });

  test("response bodies are kept only up to the limit; a timeout is recorded as such", async () => {
    const s = await subscribe();
    rx.setResponder((r) => r.path === s.path ? { status: 200, body: "x".repeat(500) } : { status: 204 });
    await stack.gw.http.post(`${BASE}/${s.id}/test`).set(s.auth);
    const [e] = await waitFor(async () => (await executions(s)).data.length === 1 && (await executions(s)).data);
    rx.setResponder(() => ({ status: 204 }));
    expect(e.response_body).toBe("x".repeat(64));
    expect(e.response_body_truncated).toBe(true);
  });
});

describe("executions, replay and recovery", () => {
  test("executions page newest first with a cursor", async () => {
    const s = await subscribe();
    for (let i = 0; i < 5; i++) await stack.gw.http.post(`${BASE}/${s.id}/test`).set(s.auth);
    await waitFor(async () => (await executions(s, "?limit=100")).data.length === 5);
    const p1 = await executions(s, "?limit=2");
    const p2 = await executions(s, `?limit=2&cursor=${p1.next_cursor}`);
    const p3 = await executions(s, `?limit=2&cursor=${p2.next_cursor}`);
    const all = (await executions(s, "?limit=100")).data.map((e: any) => e.id);
    expect([...p1.data, ...p2.data, ...p3.data].map((e: any) => e.id)).toEqual(all);
    expect(p3.next_cursor).toBeNull();
    expect([...all].sort().reverse()).toEqual(all);
    expect((await executions(s)).data).toHaveLength(5); // default limit 20
  });

  test("replay re-sends one execution's delivery with the same id; recover re-sends failed ones since a time", async () => {
    const s = await subscribe();
    rx.setResponder((r) => r.path === s.path ? { status: 422 } : { status: 204 });
    const first = (await stack.gw.http.post(`${BASE}/${s.id}/test`).set(s.auth)).body.delivery_id;
    const second = (await stack.gw.http.post(`${BASE}/${s.id}/test`).set(s.auth)).body.delivery_id;
    await waitFor(async () => (await delivery(first)).status === "failed" && (await delivery(second)).status === "failed");
    rx.setResponder(() => ({ status: 204 }));

    const exe = (await executions(s)).data.find((e: any) => e.delivery_id === first);
    const replay = await stack.gw.http.post(`${BASE}/${s.id}/executions/${exe.id}/replay`).set(s.auth);
    expect(replay.status).toBe(202);
    await waitFor(async () => (await delivery(first)).status === "succeeded");
    const sent = rx.on(s.path).filter((r) => r.headers["webhook-id"] === first);
    expect(sent).toHaveLength(2);
    // A replay of a test delivery is recorded as a replay, like any other's; the message is still the test (its header).
    expect(sent.map((r) => r.headers["x-webhook-test"])).toEqual(["true", "true"]);
    const attempts = async (id: string) => ((await executions(s, "?limit=100")).data as any[]).filter((e) => e.delivery_id === id)
      .map((e) => ({ attempt: e.attempt, trigger: e.trigger, outcome: e.outcome, test: e.request.headers["X-Webhook-Test"] })).reverse();
    expect(await attempts(first)).toEqual([
      { attempt: 1, trigger: "test", outcome: "failed", test: "true" },
      { attempt: 2, trigger: "replay", outcome: "succeeded", test: "true" },
    ]);
    expect(((await executions(s, "?trigger=replay")).data as any[]).map((e) => e.delivery_id)).toEqual([first]);

    const recover = await stack.gw.http.post(`${BASE}/${s.id}/recover`).set(s.auth).send({ since: new Date(Date.now() - 3600_000).toISOString() });
    expect(recover.body).toEqual({ recovered: 1 });
    await waitFor(async () => (await delivery(second)).status === "succeeded");
    expect((await attempts(second)).at(-1)).toEqual({ attempt: 2, trigger: "recovery", outcome: "succeeded", test: "true" });
    const tooOld = await stack.gw.http.post(`${BASE}/${s.id}/recover`).set(s.auth).send({ since: new Date(Date.now() - 15 * 86_400_000).toISOString() });
    expect(tooOld.status).toBe(422);
  });
});
