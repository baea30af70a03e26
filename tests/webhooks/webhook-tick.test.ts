import { recordAccountEvents } from "@trendgate/db";
import { waitFor } from "../helpers/config.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { seedTrendRow } from "../helpers/trend-row.ts";
import { startStack, trendEvent, webhookBody, type Stack } from "../helpers/stack.ts";

// Account events and held trigger-window firings are the webhook tick's (a job scheduler, WEBHOOK_TICK_SECONDS), not
// the outbox sweeper's: with the sweeper all but off (SWEEP_INTERVAL_MS at its 600 s maximum) both still go within
// seconds.

let stack: Stack;
let rx: Receiver;
beforeAll(async () => {
  stack = await startStack({ SWEEP_INTERVAL_MS: "600000", WEBHOOK_TICK_SECONDS: "1" });
  rx = await startReceiver();
});
afterAll(async () => { await stack.close(); await rx.close(); });

const BASE = "/api/integrations/webhooks";

test("an account event reaches a subscription that lists its type within seconds, with no sweep", async () => {
  const a = await stack.gw.account();
  const res = await stack.gw.http.post(BASE).set(a.auth)
    .send(webhookBody(rx.url("/ops"), { trigger_type: "event_types", event_types: ["connector.needs_reauth"], threshold_value: 0 }));
  expect(res.status).toBe(201);
  await recordAccountEvents(stack.gw.deps.db, [{ accountId: a.accountId, type: "connector.needs_reauth", data: { connection_id: "soc_tick", provider: "x", reason: "refused" } }]);
  const [got] = await waitFor(async () => rx.on("/ops").length > 0 && rx.on("/ops"), { timeoutMs: 10_000 });
  expect(got.headers["x-webhook-event-type"]).toBe("connector.needs_reauth");
  expect(JSON.parse(got.body)).toMatchObject({ type: "connector.needs_reauth", data: { provider: "x" } });
}, 20_000);

test("a held trigger-window firing is decided within seconds of its window's end, with no sweep", async () => {
  const a = await stack.gw.account();
  const res = await stack.gw.http.post(BASE).set(a.auth)
    .send(webhookBody(rx.url("/held"), { trigger_type: "trend_detected", threshold_value: 0, trigger_window_minutes: 1 }));
  expect(res.status).toBe(201);
  const { db } = stack.gw.deps;
  const trend = await seedTrendRow(db, a.accountId, "Lasting");
  const ev = trendEvent(a.accountId, { type: "trend.detected", trend_id: trend.id, trend_name: "Lasting", previous_severity: null, previous_velocity: null });
  await stack.publish(ev);
  await waitFor(async () => (await db.heldFiring.count({ where: { subscriptionId: res.body.id } })) === 1);
  // The window ends now, and a detection pass found the trend anomalous after it.
  await db.$executeRaw`UPDATE held_firings SET held_at = (now() AT TIME ZONE 'UTC') - interval '3 minutes', due_at = now() AT TIME ZONE 'UTC' WHERE subscription_id = ${res.body.id}`;
  await db.trend.update({ where: { id: trend.id }, data: { lastAnomalousAt: new Date() } });
  const [got] = await waitFor(async () => rx.on("/held").length > 0 && rx.on("/held"), { timeoutMs: 10_000 });
  expect(JSON.parse(got.body).trend_name).toBe("Lasting");
  expect(await db.heldFiring.count({ where: { subscriptionId: res.body.id } })).toBe(0);
}, 30_000);
