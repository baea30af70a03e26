import { catalogProblemsOf } from "../helpers/account-events.ts";
import { waitFor } from "../helpers/config.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startStack, trendEvent, webhookBody, type Stack } from "../helpers/stack.ts";

// Operational events (what the service tells an account: a subscription disabled, a delivery that exhausted its
// retries, ...) are pushed to the subscriptions that list them, signed like any delivery, and stay in /api/events.

let stack: Stack;
let rx: Receiver;
const answers = new Map<string, number>(); // path -> status (default 204)
beforeAll(async () => {
  stack = await startStack(); // retries 1 s apart, three of them; the sweeper every 300 ms
  rx = await startReceiver((r) => ({ status: answers.get(r.path) ?? 204 }));
});
afterAll(async () => { await stack.close(); await rx.close(); });

const BASE = "/api/integrations/webhooks";

test("a subscription disabled by 410 Gone, and one whose delivery exhausts its retries, reach the ops endpoint that lists those events", async () => {
  const a = await stack.gw.account();
  const sub = async (path: string, over: Record<string, unknown>) => {
    const res = await stack.gw.http.post(BASE).set(a.auth).send(webhookBody(rx.url(path), { cooldown_seconds: 0, ...over }));
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const ops = await sub("/ops", { trigger_type: "event_types", event_types: ["webhook.disabled", "webhook.delivery_failed"], threshold_value: 0 });
  answers.set("/gone", 410);
  answers.set("/down", 503);
  const gone = await sub("/gone", { trigger_type: "trend_detected", threshold_value: 0 });
  const down = await sub("/down", { trigger_type: "trend_detected", threshold_value: 0 });
  await stack.publish(trendEvent(a.accountId, { type: "trend.detected", previous_severity: null, previous_velocity: null }));

  // The 410 fails its delivery for good and disables its subscription; the 503 fails after its retries.
  const got = await waitFor(async () => rx.on("/ops").length >= 3 && rx.on("/ops"), { timeoutMs: 20_000 });
  const pushed = got.map((r) => ({ headers: r.headers, body: JSON.parse(r.body) }));
  const of = (type: string, webhookId: string) => pushed.filter((p) => p.headers["x-webhook-event-type"] === type && p.body.data.webhook_id === webhookId);
  const disabled = of("webhook.disabled", gone);
  expect(disabled.map((p) => p.body)).toEqual([{ id: expect.stringMatching(/^evt_/), type: "webhook.disabled", created_at: expect.any(String), data: { webhook_id: gone, reason: expect.stringContaining("410") } }]);
  expect(of("webhook.delivery_failed", gone).map((p) => p.body.data)).toEqual([expect.objectContaining({ attempts: 1, error: "HTTP 410" })]);
  expect(of("webhook.delivery_failed", down).map((p) => p.body.data)).toEqual([expect.objectContaining({ attempts: 4, error: "HTTP 503", event_type: "trend.detected" })]);
  // Each body is exactly its type's published schema (data typed per type, no field more or less).
  expect(catalogProblemsOf(pushed.map((p) => p.body))).toEqual([]);
  const byType = { "webhook.disabled": disabled[0] };
  // Signed, with no trend header (they are about no trend); the trend event itself did not reach the ops endpoint.
  expect(byType["webhook.disabled"].headers["webhook-signature"]).toMatch(/^v1,/);
  expect(byType["webhook.disabled"].headers["x-webhook-trend-id"]).toBeUndefined();
  expect(rx.on("/ops").some((r) => r.headers["x-webhook-event-type"] === "trend.detected")).toBe(false);

  // The same events are in the account's events, once each.
  const events = (await stack.gw.http.get("/api/events").set(a.auth)).body.data as any[];
  expect(events.filter((e) => e.type.startsWith("webhook.")).map((e) => e.id).sort()).toEqual(pushed.map((p) => p.body.id).sort());
  expect(catalogProblemsOf(events)).toEqual([]);
  // And the ops endpoint's own executions show them like any delivery.
  const execs = (await stack.gw.http.get(`${BASE}/${ops}/executions`).set(a.auth)).body.data as any[];
  expect(execs.map((x) => x.trigger)).toEqual(["account_event", "account_event", "account_event"]);
  await new Promise((r) => setTimeout(r, 1000));
  expect(rx.on("/ops")).toHaveLength(3); // each pushed once

  // A replay sends the same account event again, still naming its type.
  const replay = await stack.gw.http.post(`${BASE}/${ops}/executions/${execs[0].id}/replay`).set(a.auth);
  expect(replay.status).toBe(202);
  const again = await waitFor(async () => rx.on("/ops").length === 4 && rx.on("/ops")[3]);
  const original = got.find((r) => r.headers["webhook-id"] === again.headers["webhook-id"])!;
  expect(again.body).toBe(original.body);
  expect(again.headers["x-webhook-event-type"]).toBe(original.headers["x-webhook-event-type"]);
}, 40_000);

test("another account's operational events never reach a subscription", async () => {
  const a = await stack.gw.account();
  const b = await stack.gw.account();
  const res = await stack.gw.http.post(BASE).set(a.auth).send(webhookBody(rx.url("/ops-a"), { trigger_type: "event_types", event_types: ["webhook.disabled"], threshold_value: 0, cooldown_seconds: 0 }));
  expect(res.status).toBe(201);
  answers.set("/gone-b", 410);
  await stack.gw.http.post(BASE).set(b.auth).send(webhookBody(rx.url("/gone-b"), { trigger_type: "trend_detected", threshold_value: 0, cooldown_seconds: 0 }));
  await stack.publish(trendEvent(b.accountId, { type: "trend.detected", previous_severity: null, previous_velocity: null }));
  await waitFor(async () => ((await stack.gw.http.get("/api/events").set(b.auth)).body.data as any[]).some((e) => e.type === "webhook.disabled"), { timeoutMs: 15_000 });
  await new Promise((r) => setTimeout(r, 1500)); // several sweeps
  expect(rx.on("/ops-a")).toEqual([]);
});
