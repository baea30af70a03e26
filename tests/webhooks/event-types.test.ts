import { TREND_EVENT_TYPES, type TrendEvent } from "@trendgate/contracts";
import { waitFor } from "../helpers/config.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startStack, trendEvent, webhookBody, type Stack } from "../helpers/stack.ts";

// Subscribers choose what they receive: several event types on one endpoint (trigger_type event_types), filters on
// the event's fields, and custom request headers stored sealed. The spec's trigger types keep working beside them.

let stack: Stack;
let rx: Receiver;
beforeAll(async () => {
  stack = await startStack();
  rx = await startReceiver();
});
afterAll(async () => { await stack.close(); await rx.close(); });

const BASE = "/api/integrations/webhooks";
let n = 0;
async function subscribe(over: Record<string, unknown>, account?: Awaited<ReturnType<Stack["gw"]["account"]>>) {
  const a = account ?? await stack.gw.account();
  const path = `/types-${++n}`;
  const res = await stack.gw.http.post(BASE).set(a.auth).send(webhookBody(rx.url(path), { cooldown_seconds: 0, ...over }));
  expect(res.status).toBe(201);
  return { ...a, id: res.body.id as string, path, body: res.body };
}
const create = async (over: Record<string, unknown>) => {
  const a = await stack.gw.account();
  return stack.gw.http.post(BASE).set(a.auth).send(webhookBody(rx.url("/never"), over));
};
const lifecycle = (accountId: string, trendId: string, over: Partial<TrendEvent> = {}): TrendEvent[] => [
  trendEvent(accountId, { type: "trend.detected", trend_id: trendId, previous_severity: null, previous_velocity: null, velocity: 150, ...over }),
  trendEvent(accountId, { type: "trend.severity_changed", trend_id: trendId, severity: "high", previous_severity: "medium", ...over }),
  trendEvent(accountId, { type: "trend.velocity_changed", trend_id: trendId, velocity: 400, previous_velocity: 150, ...over }),
  trendEvent(accountId, { type: "trend.cooling", trend_id: trendId, velocity: 20, previous_velocity: 400, ...over }),
  trendEvent(accountId, { type: "trend.ended", trend_id: trendId, ...over }),
];
/** Publishes the events and waits until the deliveries they make have all been answered (ends with a marker). */
async function deliver(s: { accountId: string; path: string }, events: TrendEvent[], expected: number) {
  for (const e of events) await stack.publish(e);
  return waitFor(async () => rx.on(s.path).length >= expected && rx.on(s.path), { timeoutMs: 15_000 });
}
const settle = () => new Promise((r) => setTimeout(r, 800));

describe("event types", () => {
  test("a subscription listing two types receives exactly those, each naming its type and trend in headers", async () => {
    const s = await subscribe({ trigger_type: "event_types", event_types: ["trend.detected", "trend.ended"], threshold_value: 0 });
    expect(s.body).toMatchObject({ trigger_type: "event_types", event_types: ["trend.detected", "trend.ended"], filter: null, header_names: [] });
    const got = await deliver(s, lifecycle(s.accountId, "trend_two_types"), 2);
    await settle();
    // Deliveries are concurrent, not ordered: each says what it is.
    expect(rx.on(s.path).map((r) => r.headers["x-webhook-event-type"]).sort()).toEqual(["trend.detected", "trend.ended"]);
    expect(got.map((r) => r.headers["x-webhook-trend-id"])).toEqual(["trend_two_types", "trend_two_types"]);
    // The body keeps exactly the spec's fields.
    expect(Object.keys(JSON.parse(got[0].body))).toEqual(["trend_name", "category", "severity", "velocity", "timestamp", "summary", "source_link", "recommended_next_steps"]);
  });

  test("every type listed: the whole lifecycle arrives; the spec's trigger types beside it are unchanged", async () => {
    const a = await stack.gw.account();
    const all = await subscribe({ trigger_type: "event_types", event_types: [...TREND_EVENT_TYPES], threshold_value: 0 }, a);
    const spec = await subscribe({ trigger_type: "trend_detected", threshold_value: 0 }, a);
    expect(spec.body.event_types).toEqual([]);
    await deliver(all, lifecycle(a.accountId, "trend_all"), TREND_EVENT_TYPES.length);
    await settle();
    expect(rx.on(all.path).map((r) => r.headers["x-webhook-event-type"]).sort()).toEqual([...TREND_EVENT_TYPES].sort());
    expect(rx.on(spec.path).map((r) => r.headers["x-webhook-event-type"])).toEqual(["trend.detected"]);
  });

  test("bad combinations answer 422 naming the field; PATCH checks the subscription as it will be", async () => {
    const missing = await create({ trigger_type: "event_types", threshold_value: 0 });
    expect(missing.status).toBe(422);
    expect(missing.body.errors.map((e: any) => e.path)).toEqual(["event_types"]);
    const stray = await create({ trigger_type: "trend_velocity", event_types: ["trend.detected"] });
    expect(stray.body.errors.map((e: any) => e.path)).toEqual(["event_types"]);
    const threshold = await create({ trigger_type: "event_types", event_types: ["trend.ended"], threshold_value: 50 });
    expect(threshold.body.errors.map((e: any) => e.path)).toEqual(["threshold_value"]);
    const unknown = await create({ trigger_type: "event_types", event_types: ["trend.exploded"], threshold_value: 0 });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors.map((e: any) => e.path)).toEqual(["event_types.0"]);

    const s = await subscribe({ trigger_type: "trend_detected", threshold_value: 0 });
    const patch = (body: object) => stack.gw.http.patch(`${BASE}/${s.id}`).set(s.auth).send(body);
    expect((await patch({ trigger_type: "event_types" })).body.errors.map((e: any) => e.path)).toEqual(["event_types"]);
    const moved = await patch({ trigger_type: "event_types", event_types: ["trend.ended"] });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ trigger_type: "event_types", event_types: ["trend.ended"] });
    // Back to a spec trigger: the list goes with it.
    const back = await patch({ trigger_type: "severity_change", threshold_value: 3 });
    expect(back.status).toBe(200);
    expect(back.body.event_types).toEqual([]);
  });
});

describe("filters", () => {
  test("minimum severity, a sentiment range and a match query each select exactly the events they describe", async () => {
    const a = await stack.gw.account();
    const types = { trigger_type: "event_types", event_types: ["trend.detected"], threshold_value: 0 };
    const severe = await subscribe({ ...types, filter: { min_severity: "high" } }, a);
    const negative = await subscribe({ ...types, filter: { sentiment: { max: -0.3 } } }, a);
    const fastAi = await subscribe({ ...types, filter: { match: { velocity: { $gte: 200 }, category: { $in: ["tech/ai", "tech/chips"] } } } }, a);
    const either = await subscribe({ ...types, filter: { match: { $or: [{ severity: "critical" }, { trend_name: "Solar" }] } } }, a);
    const detected = (name: string, over: Partial<TrendEvent>) =>
      trendEvent(a.accountId, { type: "trend.detected", trend_id: `trend_${name}`, trend_name: name, previous_severity: null, previous_velocity: null, ...over });
    const events = [
      detected("Calm", { severity: "low", velocity: 50, category: "tech/ai", sentiment: 0.1 }),
      detected("Angry", { severity: "medium", velocity: 80, category: "food", sentiment: -0.7 }),
      detected("Chips", { severity: "high", velocity: 250, category: "tech/chips", sentiment: null }),
      detected("Solar", { severity: "critical", velocity: 180, category: "energy", sentiment: -0.3 }),
      detected("Old", { severity: "high", velocity: 500, category: "tech/ai" }), // no sentiment field at all
    ];
    for (const e of events) await stack.publish(e);
    await waitFor(async () => rx.on(either.path).length >= 1 && rx.on(severe.path).length >= 3, { timeoutMs: 15_000 });
    await settle();
    const names = (s: { path: string }) => rx.on(s.path).map((r) => JSON.parse(r.body).trend_name).sort();
    expect(names(severe)).toEqual(["Chips", "Old", "Solar"]);
    expect(names(negative)).toEqual(["Angry", "Solar"]); // no sentiment: outside any range
    expect(names(fastAi)).toEqual(["Chips", "Old"]);
    expect(names(either)).toEqual(["Solar"]);
    // Filters narrow the spec's trigger types too, and are shown back as saved.
    const spec = await subscribe({ trigger_type: "trend_detected", threshold_value: 0, filter: { min_severity: "critical" } }, a);
    expect(spec.body.filter).toEqual({ min_severity: "critical" });
  });

  test("a query is checked when saved: unknown fields and operators, code and regular expressions answer 422 naming where", async () => {
    const bad = async (match: unknown) => {
      const res = await create({ trigger_type: "trend_detected", threshold_value: 0, filter: { match } });
      expect(res.status).toBe(422);
      return res.body.errors.map((e: any) => e.path);
    };
    expect(await bad({ velocty: 10 })).toEqual(["filter.match.velocty"]);
    expect(await bad({ trend_name: { $where: "this.x" } })).toEqual(["filter.match.trend_name.$where"]);
    expect(await bad({ trend_name: { $regex: "(a+)+$" } })).toEqual(["filter.match.trend_name.$regex"]);
    expect(await bad({ $where: "sleep(1000)" })).toEqual(["filter.match.$where"]);
    expect(await bad({ $or: [{ severity: "high" }, { velocity: { $in: [] } }] })).toEqual(["filter.match.$or.1.velocity.$in"]);
    expect(await bad({ velocity: { $gt: { nested: 1 } } })).toEqual(["filter.match.velocity.$gt"]);
    const range = await create({ trigger_type: "trend_detected", threshold_value: 0, filter: { sentiment: { min: 0.5, max: -0.5 } } });
    expect(range.body.errors.map((e: any) => e.path)).toEqual(["filter.sentiment.min"]);
  });
});

describe("custom headers", () => {
  test("arrive with every delivery, are shown back by name only, and never appear in executions or listings", async () => {
    const token = "Bearer gw-secret-0123456789";
    const s = await subscribe({ trigger_type: "trend_detected", threshold_value: 0, headers: { Authorization: token, "X-Team": "growth" } });
    expect(s.body.header_names).toEqual(["Authorization", "X-Team"]);
    expect(JSON.stringify(s.body)).not.toContain("gw-secret");
    const [got] = await deliver(s, [lifecycle(s.accountId, "trend_headers")[0]], 1);
    expect(got.headers.authorization).toBe(token);
    expect(got.headers["x-team"]).toBe("growth");
    expect(got.headers["x-webhook-event-type"]).toBe("trend.detected");

    const test = await stack.gw.http.post(`${BASE}/${s.id}/test`).set(s.auth);
    expect(test.status).toBe(202);
    await waitFor(async () => rx.on(s.path).length === 2);
    expect(rx.on(s.path)[1].headers.authorization).toBe(token);

    const execs = await waitFor(async () => {
      const b = (await stack.gw.http.get(`${BASE}/${s.id}/executions`).set(s.auth)).body;
      return b.data.length === 2 && b;
    });
    expect(execs.data[0].request.headers.Authorization).toBe("(set; not shown)");
    const everything = JSON.stringify([execs, (await stack.gw.http.get(`${BASE}/${s.id}`).set(s.auth)).body, (await stack.gw.http.get(BASE).set(s.auth)).body]);
    expect(everything).not.toContain("gw-secret");
    const row = await stack.gw.deps.db.webhookSubscription.findUniqueOrThrow({ where: { id: s.id } });
    expect(JSON.stringify(row)).not.toContain("gw-secret"); // sealed at rest

    // Replaced by PATCH, cleared with null.
    const patched = await stack.gw.http.patch(`${BASE}/${s.id}`).set(s.auth).send({ headers: { "X-Api-Key": "k2" } });
    expect(patched.body.header_names).toEqual(["X-Api-Key"]);
    const cleared = await stack.gw.http.patch(`${BASE}/${s.id}`).set(s.auth).send({ headers: null });
    expect(cleared.body.header_names).toEqual([]);
  });

  test("headers the service sets itself, bad names and values, and too many answer 422 naming the header", async () => {
    const bad = async (headers: Record<string, string>) => {
      const res = await create({ headers });
      expect(res.status).toBe(422);
      return res.body.errors.map((e: any) => e.path);
    };
    expect(await bad({ "Content-Type": "text/plain" })).toEqual(["headers.Content-Type"]);
    expect(await bad({ "webhook-signature": "v1,forged" })).toEqual(["headers.webhook-signature"]);
    expect(await bad({ "X-Webhook-Event-Type": "trend.detected" })).toEqual(["headers.X-Webhook-Event-Type"]);
    expect(await bad({ "X-Ok": "line\r\nInjected: yes" })).toEqual(["headers.X-Ok"]);
    expect(await bad({ "Bad Name": "v" })).toEqual(["headers.Bad Name"]);
    expect(await bad(Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`X-H${i}`, "v"])))).toEqual(["headers"]);
    expect(await bad({ "X-Dup": "a", "x-dup": "b" })).toEqual(["headers"]);
  });
});
