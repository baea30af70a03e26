// A firing batch can be processed twice (a retried or stalled job): the drops it records (cooldown, trigger and
// recovery windows) must show once in the subscription's executions, or the execution log and the backtest disagree.
import { recordCooldownDrop, recordWindowDrop } from "@trendgate/db";
import { startGateway, type TestGateway } from "../helpers/gateway.ts";
import { webhookBody } from "../helpers/stack.ts";

let gw: TestGateway;
beforeAll(async () => { gw = await startGateway(); });
afterAll(async () => { await gw.close(); });

async function subscription(rules: Record<string, unknown>) {
  const a = await gw.account();
  const res = await gw.http.post("/api/integrations/webhooks").set(a.auth).send(webhookBody("https://receiver.example/hook", rules));
  expect(res.status).toBe(201);
  await gw.deps.db.webhookSubscription.update({ where: { id: res.body.id }, data: { lastFiredAt: new Date() } });
  return res.body.id as string;
}
const firing = (subscriptionId: string, eventId: string) =>
  ({ subscriptionId, eventId, velocity: 150, payload: { trend_name: "Edge AI", severity: "high", velocity: 150 } });
const drops = (subscriptionId: string) => gw.deps.db.webhookExecution.findMany({ where: { subscriptionId, outcome: "suppressed" } });

test("a cooldown drop recorded again for the same event is recorded once; another event's drop is its own", async () => {
  const id = await subscription({ trigger_type: "trend_velocity", threshold_value: 100, cooldown_seconds: 3600 });
  await recordCooldownDrop(gw.deps.db, firing(id, "evt_1"));
  await recordCooldownDrop(gw.deps.db, firing(id, "evt_1")); // the batch processed again
  expect(await drops(id)).toHaveLength(1);
  await recordCooldownDrop(gw.deps.db, firing(id, "evt_2"));
  expect((await drops(id)).map((d) => d.errorMessage!.split(", event ")[1]).sort()).toEqual(["evt_1", "evt_2"]);
});

test("a window drop recorded again for the same event is recorded once", async () => {
  const id = await subscription({ trigger_type: "trend_detected", threshold_value: 0, trigger_window_minutes: 30 });
  for (let i = 0; i < 3; i++) await recordWindowDrop(gw.deps.db, firing(id, "evt_w"), "trigger_window", "no longer anomalous at the window's end");
  const recorded = await drops(id);
  expect(recorded).toHaveLength(1);
  expect(recorded[0].errorClass).toBe("trigger_window");
});
