// Backtests: a subscription's rules (or chat settings) replayed over the account's stored trend events must give
// what real detection passes delivered to real subscriptions with the same rules.
import { insertSignals } from "@trendgate/db";
import { publishTrendEvents } from "../../packages/trends/src/events/publish.ts";
import { detectAccount, DEFAULT_DETECTION_CONFIG, type EngineOptions } from "@trendgate/trends";
import { waitFor } from "../helpers/config.ts";
import { signal } from "../helpers/gateway.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startStack, trendEvent, webhookBody, type Stack } from "../helpers/stack.ts";

let stack: Stack;
let rx: Receiver;
beforeAll(async () => { stack = await startStack(); rx = await startReceiver(); });
afterAll(async () => { await stack.close(); await rx.close(); });

const BASE = "/api/integrations/webhooks";
const MIN = 60_000;
const HOUR = 60 * MIN;
const options: EngineOptions = { ...DEFAULT_DETECTION_CONFIG, publicBaseUrl: "https://trendgate.example" };
type Auth = { accountId: string; auth: Record<string, string> };

/** `counts[i]` mentions in hour `from + i` (one signal a minute into the hour). */
async function seed(accountId: string, topic: string, from: number, counts: number[]) {
  const signals = counts.map((count, i) => signal({ id: `${topic}-${i}`, topic, category: "tech/ai", count, observed_at: new Date(from + i * HOUR + MIN).toISOString() }));
  expect(await insertSignals(stack.gw.deps.db, accountId, signals)).toBe(counts.length);
}

const flat = (n: number, v: number) => Array<number>(n).fill(v);

/**
 * Five topics over 52 hours (a burst that ends, a rise through the severities, a second wave, a mild bump, a quiet
 * one), detected by a pass two minutes into each hour.
 */
async function history(a: Auth) {
  const burst = Math.floor(Date.now() / HOUR) * HOUR - 28 * HOUR;
  const from = burst - 24 * HOUR;
  await seed(a.accountId, "Chips", from, [...flat(24, 100), 500, ...flat(27, 100)]);
  await seed(a.accountId, "Agents", from, [...flat(24, 100), 200, 300, 450, 600, 400, 250, ...flat(22, 100)]);
  await seed(a.accountId, "Waves", from, [...flat(24, 50), 300, ...flat(10, 50), 400, ...flat(16, 50)]);
  await seed(a.accountId, "Quiet", from, flat(52, 100));
  await seed(a.accountId, "Mild", from, [...flat(24, 100), 210, ...flat(27, 100)]);
  for (let k = 1; k <= 27; k++) await detectAccount(stack.gw.deps, a.accountId, new Date(burst + k * HOUR + 2 * MIN), options);
}

const RULES: Record<string, Record<string, unknown>> = {
  "every new trend": { trigger_type: "trend_detected", threshold_value: 0 },
  "new trends, normal sensitivity": { trigger_type: "trend_detected", threshold_value: 0, sensitivity: "normal" },
  "severity reaching high": { trigger_type: "severity_change", threshold_value: 3 },
  "velocity over 100, one an hour": { trigger_type: "trend_velocity", threshold_value: 100, cooldown_seconds: 3600 },
  "velocity over 100, digest": { trigger_type: "trend_velocity", threshold_value: 100, cooldown_seconds: 3600, delivery_mode: "cooldown_digest" },
  "detections and ends": { trigger_type: "event_types", threshold_value: 0, event_types: ["trend.detected", "trend.ended"] },
  "every event, ends recovered quietly": { trigger_type: "event_types", threshold_value: 0, event_types: ["trend.detected", "trend.severity_changed", "trend.velocity_changed", "trend.ended"], recovery_window_minutes: 60 },
};

test("for every kind of rule, the backtest's deliveries and drops equal what real passes delivered to a real subscription", async () => {
  const a = await stack.gw.account();
  const subs: Record<string, { id: string; path: string }> = {};
  let n = 0;
  for (const [name, rules] of Object.entries(RULES)) {
    const path = `/bt-${++n}`;
    const res = await stack.gw.http.post(BASE).set(a.auth).send(webhookBody(rx.url(path), rules));
    expect(res.status).toBe(201);
    subs[name] = { id: res.body.id, path };
  }
  await history(a);
  const events = await stack.gw.deps.db.trendEventRecord.count({ where: { accountId: a.accountId } });
  expect(events).toBeGreaterThan(5);
  // Everything routed and sent (digests are due an hour on: their count is what is held).
  // (30 s: the passes publish a few dozen events, and a loaded 2-core run took over 10 s to route them all.)
  await waitFor(async () => (await stack.gw.deps.db.trendEventRecord.count({ where: { accountId: a.accountId, dispatchedAt: null } })) === 0, { timeoutMs: 30_000 });
  await new Promise((r) => setTimeout(r, 1000));

  const live: Record<string, [number, number]> = {};
  const backtest: Record<string, [number, number]> = {};
  for (const [name, rules] of Object.entries(RULES)) {
    const { id, path } = subs[name];
    const executions = (await stack.gw.http.get(`${BASE}/${id}/executions?limit=100`).set(a.auth)).body.data as { outcome: string }[];
    const pending = await stack.gw.deps.db.webhookDelivery.count({ where: { subscriptionId: id, status: "pending" } });
    live[name] = [rx.on(path).length + pending, executions.filter((e) => e.outcome === "suppressed").length];
    const res = await stack.gw.http.post(`${BASE}/preview`).set(a.auth).send({ ...webhookBody("", rules), url: undefined, days: 2 });
    expect(res.status).toBe(200);
    expect(res.body.events_replayed).toBe(events);
    // A digest still held (due later) is in the live count as pending, in the backtest as not sent yet.
    const heldDigest = name.includes("digest") ? pending : 0;
    backtest[name] = [res.body.deliveries + heldDigest, res.body.suppressed.cooldown + res.body.suppressed.recovery_window + res.body.suppressed.trigger_window];
    expect(res.body.per_day.reduce((s: number, d: { deliveries: number }) => s + d.deliveries, 0)).toBe(res.body.deliveries);
  }
  expect(backtest).toEqual(live);
  // The rules really differ on this history.
  expect(new Set(Object.values(live).map((v) => v.join("/"))).size).toBeGreaterThan(3);
}, 90_000);

test("a digest subscription: the backtest names the trends the worker delivered (one pass's firings strongest first, the held one replaced by a faster one)", async () => {
  const a = await stack.gw.account();
  const rules = { trigger_type: "trend_detected", threshold_value: 0, cooldown_seconds: 4, delivery_mode: "cooldown_digest" };
  const path = "/bt-digest-names";
  expect((await stack.gw.http.post(BASE).set(a.auth).send(webhookBody(rx.url(path), rules))).status).toBe(201);
  const run = crypto.randomUUID();
  const ev = (n: number, name: string, severity: "low" | "medium" | "high", velocity: number) =>
    trendEvent(a.accountId, { id: `evt_${run}_${n}`, type: "trend.detected", trend_id: `trend_${run}_${name}`, trend_name: name, severity, velocity });
  // One pass publishes a medium and a high detection (stored medium first); a second pass, inside the cooldown, a faster low one.
  await publishTrendEvents(stack.gw.deps, [ev(1, "Medium", "medium", 500), ev(2, "High", "high", 100)]);
  await new Promise((r) => setTimeout(r, 500));
  await publishTrendEvents(stack.gw.deps, [ev(3, "Faster", "low", 900)]);
  await waitFor(async () => rx.on(path).length === 2, { timeoutMs: 15_000 });
  const live = rx.on(path).map((r) => JSON.parse(r.body).trend_name as string);
  expect(live).toEqual(["High", "Faster"]);
  const res = await stack.gw.http.post(`${BASE}/preview`).set(a.auth).send({ ...webhookBody("", rules), url: undefined, days: 1 });
  expect(res.body.deliveries).toBe(2);
  expect(res.body.trends.map((t: { trend_name: string }) => t.trend_name).sort()).toEqual([...live].sort());
});

test("the trigger window asks the detector: a sustained rise still anomalous at the window's end goes, a one-hour spike does not", async () => {
  const a = await stack.gw.account();
  const burst = Math.floor(Date.now() / HOUR) * HOUR - 10 * HOUR;
  const from = burst - 24 * HOUR;
  await seed(a.accountId, "Sustained", from, [...flat(24, 100), 500, 600, 650, 700, ...flat(6, 100)]);
  await seed(a.accountId, "Spike", from, [...flat(24, 100), 600, ...flat(9, 100)]);
  // Each pass's events are stamped with the pass's time, as if these passes had run then.
  for (let k = 1; k <= 9; k++) {
    const at = new Date(burst + k * HOUR + 2 * MIN);
    const before = new Date();
    await detectAccount(stack.gw.deps, a.accountId, at, options);
    await stack.gw.deps.db.trendEventRecord.updateMany({ where: { accountId: a.accountId, createdAt: { gte: before } }, data: { createdAt: at } });
  }
  const preview = async (window: number) => (await stack.gw.http.post(`${BASE}/preview`).set(a.auth)
    .send({ trigger_type: "trend_detected", threshold_value: 0, delivery_mode: "instant_stream", cooldown_seconds: 0, trigger_window_minutes: window, days: 1 })).body;
  const now = await preview(0);
  expect(now.trends.map((t: { trend_name: string }) => t.trend_name).sort()).toEqual(["Spike", "Sustained"]);
  const held = await preview(120);
  expect(held.trends.map((t: { trend_name: string }) => t.trend_name)).toEqual(["Sustained"]);
  expect(held.suppressed.trigger_window).toBe(1);
});

test("bad rules name their field; another account's history is not replayed", async () => {
  const a = await stack.gw.account();
  const bad = await stack.gw.http.post(`${BASE}/preview`).set(a.auth).send({ trigger_type: "trend_detected", threshold_value: 0, delivery_mode: "instant_stream", cooldown_seconds: 0, days: 30, sensitivity: "max" });
  expect(bad.status).toBe(422);
  expect(bad.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(["days", "sensitivity"]);
  const empty = await stack.gw.http.post(`${BASE}/preview`).set(a.auth).send({ trigger_type: "trend_detected", threshold_value: 0, delivery_mode: "instant_stream", cooldown_seconds: 0 });
  expect(empty.body).toMatchObject({ events_replayed: 0, deliveries: 0, trends: [] });
  expect(empty.body.per_day).toHaveLength(15); // 14 days back from now: 15 calendar days touched
});

test("chat settings: one item per trend at its first qualifying event; sensitivity and categories narrow it", async () => {
  const a = await stack.gw.account();
  await history(a);
  const preview = async (body: object, days = "") => (await stack.gw.http.post(`/api/integrations/chat/settings/preview${days}`).set(a.auth).send(body)).body;
  const all = await preview({ min_severity: "low" });
  const high = await preview({ sensitivity: "low" }); // high and up
  const items = await stack.gw.deps.db.trend.findMany({ where: { accountId: a.accountId } });
  expect(all.items_opened).toBe(items.length);
  expect(all.trends.map((t: { trend_name: string }) => t.trend_name)).toContain("Mild");
  expect(high.trends.map((t: { trend_name: string }) => t.trend_name)).not.toContain("Mild");
  expect(high.items_opened).toBeLessThan(all.items_opened);
  expect(high.trends.every((t: { severity: string }) => ["high", "critical"].includes(t.severity))).toBe(true);
  expect((await preview({ min_severity: "low", categories: ["retail"] })).items_opened).toBe(0);
  expect((await preview({}, "?days=0")).errors?.[0]?.path).toBe("days");
});
