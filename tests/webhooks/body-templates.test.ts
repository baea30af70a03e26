import { Webhook as StandardWebhook } from "standardwebhooks";
import { waitFor } from "../helpers/config.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startStack, trendEvent, webhookBody, type Stack } from "../helpers/stack.ts";

// Body templates: a subscription renders its bodies for a chat incoming webhook (Slack, Discord, Teams presets) or
// through its own Mustache template; values are JSON-escaped, the result is signed, and a template that cannot render
// valid JSON is refused when saved.

let stack: Stack;
let rx: Receiver;
beforeAll(async () => {
  stack = await startStack();
  rx = await startReceiver();
});
afterAll(async () => { await stack.close(); await rx.close(); });

const BASE = "/api/integrations/webhooks";
let n = 0;
async function subscribe(body_template: object) {
  const a = await stack.gw.account();
  const path = `/tpl-${++n}`;
  const res = await stack.gw.http.post(BASE).set(a.auth).send(webhookBody(rx.url(path), { trigger_type: "trend_detected", threshold_value: 0, cooldown_seconds: 0, body_template }));
  return { ...a, path, res };
}
const detected = (accountId: string) => trendEvent(accountId, {
  type: "trend.detected", previous_severity: null, previous_velocity: null, trend_name: 'The "big" launch', summary: "Line one\nLine two with a \\ backslash",
});

test("the Slack preset sends a Slack message, escaped and signed over what was sent", async () => {
  const s = await subscribe({ format: "slack" });
  expect(s.res.status).toBe(201);
  expect(s.res.body.body_template).toEqual({ format: "slack" });
  await stack.publish(detected(s.accountId));
  const [got] = await waitFor(async () => rx.on(s.path).length === 1 && rx.on(s.path));
  const msg = JSON.parse(got.body);
  expect(msg.text).toBe('high: The "big" launch (tech/ai) — Line one\nLine two with a \\ backslash');
  expect(msg.blocks[0].text.text).toContain('*The "big" launch* · high · tech/ai');
  expect(msg.blocks[0].text.text).toContain("<https://trendgate.dev/briefings/trend_ai_agents|Open the briefing>");
  const verified = new StandardWebhook(s.res.body.secret.slice("whsec_".length)).verify(got.body, {
    "webhook-id": String(got.headers["webhook-id"]), "webhook-timestamp": String(got.headers["webhook-timestamp"]), "webhook-signature": String(got.headers["webhook-signature"]),
  });
  expect(verified).toEqual(msg);
});

test("a custom template renders the event's fields and type; the test delivery goes through it too", async () => {
  const s = await subscribe({ format: "custom", template: '{"title": "{{trend_name}}", "level": "{{severity}}", "kind": "{{event_type}}", "speed": {{velocity}}}' });
  expect(s.res.status).toBe(201);
  await stack.publish(detected(s.accountId));
  const [got] = await waitFor(async () => rx.on(s.path).length === 1 && rx.on(s.path));
  expect(JSON.parse(got.body)).toEqual({ title: 'The "big" launch', level: "high", kind: "trend.detected", speed: 120 });
  expect((await stack.gw.http.post(`${BASE}/${s.res.body.id}/test`).set(s.auth)).status).toBe(202);
  const [, test] = await waitFor(async () => rx.on(s.path).length === 2 && rx.on(s.path));
  expect(JSON.parse(test.body)).toMatchObject({ title: "Trendgate test event", kind: "" });
});

test("templates that could break JSON or reach outside are refused when saved (422 naming the template)", async () => {
  const refused = async (t: object) => {
    const s = await subscribe(t);
    expect(s.res.status).toBe(422);
    return s.res.body.errors.map((e: any) => `${e.path}: ${e.message}`).join(" | ");
  };
  expect(await refused({ format: "custom", template: '{"t": "{{{summary}}}"}' })).toMatch(/^body_template.template: unescaped tags/);
  expect(await refused({ format: "custom", template: '{"t": "{{& summary}}"}' })).toMatch(/unescaped tags/);
  expect(await refused({ format: "custom", template: '{"t": {{trend_name}}}' })).toMatch(/does not render valid JSON for a trend.detected event/);
  expect(await refused({ format: "custom", template: '{"t": "{{> other}}"}' })).toMatch(/partials/);
  expect(await refused({ format: "custom", template: '{{=<% %>=}}{"t": "<% summary %>"}' })).toMatch(/delimiter changes/);
  expect(await refused({ format: "custom", template: '{"t": "{{#trend_name}}"}' })).toMatch(/not a Mustache template/);
  expect(await refused({ format: "custom" })).toMatch(/^body_template.template: template goes with format custom/);
  expect(await refused({ format: "slack", template: "{}" })).toMatch(/template goes with format custom/);
  // Checked against the events the subscription receives: an operational event has no velocity to put there.
  const a = await stack.gw.account();
  const ops = await stack.gw.http.post(BASE).set(a.auth).send(webhookBody(rx.url("/tpl-ops"), {
    trigger_type: "event_types", event_types: ["trend.detected", "webhook.disabled"], threshold_value: 0,
    body_template: { format: "custom", template: '{"speed": {{velocity}}}' },
  }));
  expect(ops.status).toBe(422);
  expect(ops.body.errors[0].message).toMatch(/for a webhook.disabled event/);
});
