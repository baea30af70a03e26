import type { Job } from "bullmq";
import { waitFor } from "../helpers/config.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { seedTrendRow } from "../helpers/trend-row.ts";
import { startStack, trendEvent, webhookBody, type Stack } from "../helpers/stack.ts";
import { webhookTicks } from "../../apps/worker/src/processors/webhook-ticks.ts";

// Webhook ticks that overlap (one outlasting its interval, the next taken by another worker) decide each held firing
// once: without the tick's lock each would read the same due rows and record the suppressed one again.

let stack: Stack;
let rx: Receiver;
beforeAll(async () => {
  stack = await startStack({ SWEEP_INTERVAL_MS: "600000", WEBHOOK_TICK_SECONDS: "3600" });
  rx = await startReceiver();
});
afterAll(async () => { await stack.close(); await rx.close(); });

const BASE = "/api/integrations/webhooks";

test("ticks running at once deliver a held firing once and record a suppressed one once", async () => {
  const a = await stack.gw.account();
  const res = await stack.gw.http.post(BASE).set(a.auth)
    .send(webhookBody(rx.url("/w"), { trigger_type: "trend_detected", threshold_value: 0, cooldown_seconds: 3600, trigger_window_minutes: 1 }));
  expect(res.status).toBe(201);
  const sub = res.body.id as string;
  const { db } = stack.gw.deps;
  const lasting = await seedTrendRow(db, a.accountId, "Lasting");
  const fleeting = await seedTrendRow(db, a.accountId, "Fleeting");
  for (const t of [lasting, fleeting])
    await stack.publish(trendEvent(a.accountId, { type: "trend.detected", trend_id: t.id, trend_name: t.name, previous_severity: null, previous_velocity: null }));
  await waitFor(async () => (await db.heldFiring.count({ where: { subscriptionId: sub } })) === 2);
  await db.$executeRaw`UPDATE held_firings SET held_at = (now() AT TIME ZONE 'UTC') - interval '3 minutes', due_at = now() AT TIME ZONE 'UTC' WHERE subscription_id = ${sub}`;
  await db.trend.update({ where: { id: lasting.id }, data: { lastAnomalousAt: new Date() } });
  await db.trend.update({ where: { id: fleeting.id }, data: { lastAnomalousAt: new Date(Date.now() - 150_000) } });

  // Four workers' ticks at once (each its own processor, as in its own process).
  const deps = stack.workers[0].deps;
  await Promise.all([1, 2, 3, 4].map(() => webhookTicks.create(deps).process({} as Job)));
  await waitFor(async () => (await db.heldFiring.count({ where: { subscriptionId: sub } })) === 0, { timeoutMs: 20_000 });

  await waitFor(async () => rx.on("/w").length === 1);
  expect(JSON.parse(rx.on("/w")[0].body).trend_name).toBe("Lasting");
  const suppressed = await db.webhookExecution.findMany({ where: { subscriptionId: sub, outcome: "suppressed" } });
  expect(suppressed.map((x) => x.errorClass)).toEqual(["trigger_window"]);
  await new Promise((r) => setTimeout(r, 500));
  expect(rx.on("/w")).toHaveLength(1);
}, 40_000);
