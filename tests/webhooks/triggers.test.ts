import { triggerFires } from "@trendgate/webhooks";
import { publishTrendEvents } from "../../packages/trends/src/events/publish.ts";
import { waitFor } from "../helpers/config.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startStack, trendEvent, webhookBody, type Stack } from "../helpers/stack.ts";

let stack: Stack;
let rx: Receiver;
beforeAll(async () => { stack = await startStack(); rx = await startReceiver(); });
afterAll(async () => { await stack.close(); await rx.close(); });

const BASE = "/api/integrations/webhooks";
let n = 0;
async function subscribe(accountAuth: { auth: any }, over: Record<string, unknown>) {
  const path = `/t-${++n}`;
  const res = await stack.gw.http.post(BASE).set(accountAuth.auth).send(webhookBody(rx.url(path), over));
  expect(res.status).toBe(201);
  return { id: res.body.id as string, path };
}
const executions = async (a: { auth: any }, id: string) => (await stack.gw.http.get(`${BASE}/${id}/executions`).set(a.auth)).body.data as any[];
// Under a loaded run (the suite's other worker busy) a dispatch has taken over 10 s: give it 20.
const dispatched = (id: string) => waitFor(async () => (await stack.gw.deps.db.trendEventRecord.findUnique({ where: { id } }))?.dispatchedAt, { timeoutMs: 20_000 });

describe("trigger matching", () => {
  const sub = (triggerType: string, thresholdValue: number, category: string | null = null) => ({ triggerType, thresholdValue, category });
  const e = (over = {}) => trendEvent("acct", over);

  test("trend_velocity fires on an upward crossing only", () => {
    expect(triggerFires(sub("trend_velocity", 100), e({ velocity: 100, previous_velocity: 99 }))).toBe(true);
    expect(triggerFires(sub("trend_velocity", 100), e({ velocity: 150, previous_velocity: null }))).toBe(true);
    expect(triggerFires(sub("trend_velocity", 100), e({ velocity: 150, previous_velocity: 120 }))).toBe(false); // already above
    expect(triggerFires(sub("trend_velocity", 100), e({ velocity: 99, previous_velocity: 10 }))).toBe(false);
  });

  test("severity_change compares severity ranks; trend_detected fires for new trends", () => {
    expect(triggerFires(sub("severity_change", 3), e({ severity: "high", previous_severity: "medium" }))).toBe(true);
    expect(triggerFires(sub("severity_change", 3), e({ severity: "critical", previous_severity: "high" }))).toBe(false);
    expect(triggerFires(sub("trend_detected", 0), e({ type: "trend.detected" }))).toBe(true);
    expect(triggerFires(sub("trend_detected", 0), e({ type: "trend.severity_changed" }))).toBe(false);
  });

  test("a category filter matches the category and its sub-categories only", () => {
    expect(triggerFires(sub("trend_velocity", 100, "tech"), e({ category: "tech/ai" }))).toBe(true);
    expect(triggerFires(sub("trend_velocity", 100, "tech"), e({ category: "tech" }))).toBe(true);
    expect(triggerFires(sub("trend_velocity", 100, "tech"), e({ category: "technology" }))).toBe(false);
  });
});

describe("events to deliveries", () => {
  test("an event is delivered once to each matching subscription of its account only", async () => {
    const a = await stack.gw.account();
    const b = await stack.gw.account();
    const hit = await subscribe(a, { threshold_value: 100 });
    const miss = await subscribe(a, { threshold_value: 500 });
    const other = await subscribe(b, { threshold_value: 1 });
    const ev = trendEvent(a.accountId, { velocity: 150, previous_velocity: 50 });
    expect(await stack.publish(ev)).toBe(true);
    expect(await stack.publish(ev)).toBe(false); // the same event id again: published once
    await dispatched(ev.id);
    await waitFor(async () => rx.on(hit.path).length === 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.on(hit.path)).toHaveLength(1);
    expect(rx.on(miss.path)).toHaveLength(0);
    expect(rx.on(other.path)).toHaveLength(0);
  });

  test("instant_stream: a second crossing inside the cooldown is dropped", async () => {
    const a = await stack.gw.account();
    const s = await subscribe(a, { threshold_value: 100, cooldown_seconds: 3600 });
    const e1 = trendEvent(a.accountId, { velocity: 150, previous_velocity: 50 });
    const e2 = trendEvent(a.accountId, { velocity: 180, previous_velocity: 60, trend_id: "other" });
    await stack.publish(e1);
    await dispatched(e1.id);
    await stack.publish(e2);
    await dispatched(e2.id);
    await waitFor(async () => rx.on(s.path).length === 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.on(s.path)).toHaveLength(1);
    expect(JSON.parse(rx.on(s.path)[0].body).velocity).toBe(150);
    // The drop is on record: an execution `suppressed` by the cooldown, naming the trend and until when.
    const ex = await waitFor(async () => { const list = await executions(a, s.id); return list.length === 2 && list; });
    const sent = ex.find((e) => e.outcome === "succeeded");
    const until = new Date(Date.parse(sent.created_at) + 3600_000);
    expect(ex.find((e) => e.outcome === "suppressed")).toMatchObject({
      attempt: 0, trigger: "trend_event", error_class: "cooldown", response_status: null, next_retry_at: null,
      error_message: expect.stringMatching(new RegExp(`^suppressed by the cooldown \\(3600 s\\) until ${until.toISOString().slice(0, 15)}.*: trend "AI agents" \\(severity high, velocity 180\\), event ${e2.id}$`)),
    });
    expect(ex.find((e) => e.outcome === "suppressed").delivery_id).not.toBe(sent.delivery_id);
  });

  test("instant_stream: of two events in one batch that only one may pass, the more severe is delivered; the other is on record", async () => {
    const a = await stack.gw.account();
    const s = await subscribe(a, { trigger_type: "severity_change", threshold_value: 3, cooldown_seconds: 3600 });
    // The weaker one first in the batch, as in the run that reported it.
    const high = trendEvent(a.accountId, { severity: "high", previous_severity: "medium", velocity: 400, trend_id: "t-high" });
    const critical = trendEvent(a.accountId, { severity: "critical", previous_severity: "medium", velocity: 300, trend_id: "t-critical", trend_name: "Critical one" });
    expect(await publishTrendEvents(stack.gw.deps, [high, critical])).toEqual([high.id, critical.id]); // one fan-out job
    await dispatched(critical.id);
    await waitFor(async () => rx.on(s.path).length === 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.on(s.path)).toHaveLength(1);
    expect(JSON.parse(rx.on(s.path)[0].body)).toMatchObject({ severity: "critical", trend_name: "Critical one" });
    const ex = await waitFor(async () => { const list = await executions(a, s.id); return list.length === 2 && list; });
    expect(ex.find((e) => e.outcome === "suppressed").error_message).toContain(`severity high, velocity 400), event ${high.id}`);
  });

  test("cooldown_digest: the first firing goes at once, the strongest of the rest when the cooldown ends", async () => {
    const a = await stack.gw.account();
    const s = await subscribe(a, { threshold_value: 100, cooldown_seconds: 2, delivery_mode: "cooldown_digest" });
    const events = [150, 300, 200].map((v) => trendEvent(a.accountId, { velocity: v, previous_velocity: 50, trend_id: `t${v}` }));
    for (const ev of events) { await stack.publish(ev); await dispatched(ev.id); }
    const got = await waitFor(async () => rx.on(s.path).length === 2 && rx.on(s.path), { timeoutMs: 8000 });
    expect(got.map((g) => JSON.parse(g.body).velocity)).toEqual([150, 300]);
    expect(got[1].at - got[0].at).toBeGreaterThanOrEqual(1500);
    // The 200 that the stronger 300 replaced in the digest is on record, as is no other drop.
    const dropped = (await executions(a, s.id)).filter((e) => e.outcome === "suppressed");
    expect(dropped).toHaveLength(1);
    expect(dropped[0]).toMatchObject({ error_class: "cooldown", attempt: 0 });
    expect(dropped[0].error_message).toMatch(/merged into the digest due .*, which holds a stronger firing \(trend "AI agents" \(severity high, velocity 300\), event /);
    expect(dropped[0].error_message).toContain(`velocity 200), event ${events[2].id}`);
  }, 60_000);

  test("paused subscriptions hold deliveries and send them on resume", async () => {
    const a = await stack.gw.account();
    const s = await subscribe(a, { threshold_value: 100 });
    await stack.gw.http.post(`${BASE}/${s.id}/pause`).set(a.auth);
    const ev = trendEvent(a.accountId, { velocity: 150, previous_velocity: 50 });
    await stack.publish(ev);
    await dispatched(ev.id);
    await new Promise((r) => setTimeout(r, 1500)); // sweeper runs meanwhile: nothing is sent while paused
    expect(rx.on(s.path)).toHaveLength(0);
    await stack.gw.http.post(`${BASE}/${s.id}/resume`).set(a.auth);
    await waitFor(async () => rx.on(s.path).length === 1);
  }, 60_000);
});
