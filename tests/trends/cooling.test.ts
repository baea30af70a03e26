// trend.cooling: a trend whose burst has calmed says so once (per wave), with when it will end; only subscribers who
// ask for it by name receive it, and it never opens an operator item.
import { Webhook } from "standardwebhooks";
import { triggerFires } from "@trendgate/webhooks";
import { insertSignals } from "@trendgate/db";
import { itemRouteOf, opensItem } from "@trendgate/operator";
import { detectAccount, DEFAULT_DETECTION_CONFIG, type EngineOptions } from "@trendgate/trends";
import { waitFor } from "../helpers/config.ts";
import { signal } from "../helpers/gateway.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startStack, trendEvent, webhookBody, type Stack } from "../helpers/stack.ts";

let stack: Stack;
let rx: Receiver;
beforeAll(async () => { stack = await startStack(); rx = await startReceiver(); });
afterAll(async () => { await stack.close(); await rx.close(); });

const HOUR = 3600_000;
const MIN = 60_000;
const options: EngineOptions = { ...DEFAULT_DETECTION_CONFIG, publicBaseUrl: "https://trendgate.example" };

test("only an event_types subscription that lists trend.cooling is triggered by it", () => {
  const cooling = trendEvent("acct", { type: "trend.cooling", severity: "high", previous_severity: "high", velocity: 20, previous_velocity: 400 });
  const sub = (over: Record<string, unknown>) => ({ triggerType: "trend_detected", thresholdValue: 0, category: null, ...over });
  expect(triggerFires(sub({ triggerType: "event_types", eventTypes: ["trend.cooling"] }), cooling)).toBe(true);
  expect(triggerFires(sub({ triggerType: "event_types", eventTypes: ["trend.detected", "trend.ended"] }), cooling)).toBe(false);
  for (const triggerType of ["trend_detected", "trend_velocity", "severity_change", "trend_ended"]) {
    expect(triggerFires(sub({ triggerType, thresholdValue: 0 }), cooling)).toBe(false);
  }
});

test("a cooling trend opens no operator item, under a routing rule or the default route", async () => {
  const cooling = trendEvent("acct", { type: "trend.cooling", severity: "critical" });
  const settings = { minSeverity: "low" as const, categories: [] };
  expect(opensItem(settings, cooling)).toBe(false);
  expect(await itemRouteOf([{ match: {} }], settings, cooling)).toBeUndefined();
  expect(opensItem(settings, { ...cooling, type: "trend.severity_changed" })).toBe(true);
});

test("detection publishes one trend.cooling after the burst's hour, saying when the trend ends, and a subscriber listing it receives it signed", async () => {
  const a = await stack.gw.account();
  const listed = await stack.gw.http.post("/api/integrations/webhooks").set(a.auth)
    .send(webhookBody(rx.url("/cooling"), { trigger_type: "event_types", threshold_value: 0, event_types: ["trend.cooling"] }));
  const detections = await stack.gw.http.post("/api/integrations/webhooks").set(a.auth)
    .send(webhookBody(rx.url("/detected"), { trigger_type: "trend_detected", threshold_value: 0 }));
  expect([listed.status, detections.status]).toEqual([201, 201]);

  // A week of 100/h, a burst of 600 in one hour, then 100/h again; passes two minutes into each hour.
  const burst = Math.floor(Date.now() / HOUR) * HOUR - 5 * HOUR;
  const from = burst - 8 * 24 * HOUR;
  const counts = Array.from({ length: 8 * 24 + 5 }, (_, i) => (i === 8 * 24 ? 600 : 100));
  const signals = counts.map((count, i) => signal({ id: `cool-${i}`, topic: "Solar storms", category: "science", count, observed_at: new Date(from + i * HOUR + MIN).toISOString() }));
  expect(await insertSignals(stack.gw.deps.db, a.accountId, signals)).toBe(counts.length);
  for (let k = 1; k <= 4; k++) await detectAccount(stack.gw.deps, a.accountId, new Date(burst + k * HOUR + 2 * MIN), options);

  const events = await stack.gw.deps.db.trendEventRecord.findMany({ where: { accountId: a.accountId }, orderBy: { createdAt: "asc" } });
  const types = events.map((e) => (e.payload as { type: string }).type);
  expect(types.filter((t) => t === "trend.detected")).toHaveLength(1);
  expect(types.filter((t) => t === "trend.cooling")).toHaveLength(1);
  const cooling = events.find((e) => (e.payload as { type: string }).type === "trend.cooling")!.payload as { summary: string; timestamp: string };
  expect(cooling.summary).toMatch(/"Solar storms" \(science\) is cooling: .* no longer anomalous; it ends 12 h after its last anomalous hour unless it rises again/);
  expect(cooling.timestamp).toBe(new Date(burst + HOUR).toISOString()); // the first calm closed hour
  const trend = await stack.gw.deps.db.trend.findFirstOrThrow({ where: { accountId: a.accountId } });
  expect(trend).toMatchObject({ status: "active", stage: "cooling", coolingSince: new Date(burst + HOUR) });

  await waitFor(async () => rx.on("/cooling").length === 1 && rx.on("/detected").length === 1);
  const [received] = rx.on("/cooling");
  expect(received.headers["x-webhook-event-type"]).toBe("trend.cooling");
  const secret = listed.body.secret as string;
  expect(() => new Webhook(secret).verify(received.body, received.headers as Record<string, string>)).not.toThrow();
  await new Promise((r) => setTimeout(r, 500));
  expect(rx.on("/detected").map((r) => r.headers["x-webhook-event-type"])).toEqual(["trend.detected"]); // no cooling there
});
