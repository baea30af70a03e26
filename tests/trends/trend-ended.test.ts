// A trend's end reaches every outlet a receiver opened something in: a `trend_ended` webhook subscription (with the
// event type and trend id as headers, the body as the API fixes it), the WebSocket stream, the operator item's chat
// card (updated in place, reminders stopped) and the selected n8n workflow. Subscriptions of the other trigger types
// are not fired by an end.
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { WebSocket } from "ws";
import type { TrendEvent } from "@trendgate/contracts";
import { attachStream, type TrendStream } from "../../apps/gateway/src/stream/index.ts";
import { waitFor } from "../helpers/config.ts";
import { startReceiver } from "../helpers/receiver.ts";
import type { Stack } from "../helpers/stack.ts";
import { webhookBody } from "../helpers/stack.ts";
import { startN8nServer, type N8nServer } from "../peers/n8n-server.ts";
import { startSlackServer, type SlackServer } from "../peers/slack-server.ts";
import { connectedAccount, event, item, publishAndWait, startChatStack } from "../operator/helpers.ts";

let slack: SlackServer;
let n8n: N8nServer;
let stack: Stack;
let server: Server;
let stream: TrendStream;
beforeAll(async () => {
  slack = await startSlackServer();
  n8n = await startN8nServer();
  stack = await startChatStack(slack);
  server = await new Promise<Server>((resolve) => { const s = stack.gw.app.listen(0, "127.0.0.1", () => resolve(s)); });
  stream = attachStream(server, stack.gw.deps);
});
afterAll(async () => {
  await stream.close();
  await new Promise((r) => server.close(r));
  await stack.close();
  await slack.close();
  await n8n.close();
});

test("trend.ended reaches the trend_ended webhook (type and trend id headers), the stream, the chat card and the workflow", async () => {
  const a = await connectedAccount(stack, slack);
  const receiver = await startReceiver();
  const ended = (await stack.gw.http.post("/api/integrations/webhooks").set(a.auth)
    .send(webhookBody(receiver.url("/ended"), { trigger_type: "trend_ended", threshold_value: 0 }))).body;
  const detected = (await stack.gw.http.post("/api/integrations/webhooks").set(a.auth)
    .send(webhookBody(receiver.url("/detected"), { trigger_type: "trend_detected", threshold_value: 0 }))).body;
  const velocity = (await stack.gw.http.post("/api/integrations/webhooks").set(a.auth)
    .send(webhookBody(receiver.url("/velocity"), { trigger_type: "trend_velocity", threshold_value: 1 }))).body;
  expect([ended.id, detected.id, velocity.id].every(Boolean)).toBe(true);

  // n8n with an active webhook workflow, selected with automatic trend pushes.
  const wf = n8n.addWorkflow({ name: "Trend lifecycle", webhook: { path: "trend-lifecycle" } });
  expect((await stack.gw.http.post("/api/integrations/workflow/connect").set(a.auth)
    .send({ api_key: n8n.apiKey, api_base_url: n8n.url, include_metadata: true })).status).toBe(200);
  expect((await stack.gw.http.put("/api/integrations/workflow/selection").set(a.auth)
    .send({ workflow_id: wf.id, workflow_name: wf.name, default_event: "trend_lifecycle", api_base_url: n8n.url })).status).toBe(200);

  const ws = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/api/stream`, { headers: { Authorization: `Bearer ${a.key}` } });
  const streamed: { event: TrendEvent }[] = [];
  ws.on("message", (d) => streamed.push(JSON.parse(String(d))));
  await new Promise((resolve, reject) => { ws.once("open", resolve); ws.once("error", reject); });

  const opened = event(a.accountId, { type: "trend.detected", severity: "critical", previous_severity: null, velocity: 150, previous_velocity: null });
  const opening = await publishAndWait(stack, a, opened);
  await waitFor(async () => (await item(stack.gw, a, opening.id)).chat?.message_ts);
  const close = event(a.accountId, {
    type: "trend.ended", trend_id: opened.trend_id, trend_name: opened.trend_name, severity: "critical", previous_severity: "critical",
    velocity: 2, previous_velocity: 150, summary: `${opened.trend_name} has ended: back to its usual rate.`,
  });
  await publishAndWait(stack, a, close);

  // Webhooks: the end goes to trend_ended only; the detection to trend_detected only.
  await waitFor(async () => receiver.received.some((r) => r.path === "/ended") && receiver.received.some((r) => r.path === "/detected"));
  await waitFor(async () => n8n.pushes.length >= 2, { timeoutMs: 15_000 });
  const [end] = receiver.received.filter((r) => r.path === "/ended");
  expect(end.headers["x-webhook-event-type"]).toBe("trend.ended");
  expect(end.headers["x-webhook-trend-id"]).toBe(opened.trend_id);
  expect(Object.keys(JSON.parse(end.body))).toEqual(["trend_name", "category", "severity", "velocity", "timestamp", "summary", "source_link", "recommended_next_steps"]);
  expect(JSON.parse(end.body).summary).toContain("has ended");
  const [det] = receiver.received.filter((r) => r.path === "/detected");
  expect(det.headers["x-webhook-event-type"]).toBe("trend.detected");
  expect(det.headers["x-webhook-trend-id"]).toBe(opened.trend_id);
  expect(receiver.received.filter((r) => r.path === "/ended")).toHaveLength(1);
  expect(receiver.received.filter((r) => r.path === "/detected")).toHaveLength(1);
  expect(receiver.received.filter((r) => r.path === "/velocity").map((r) => r.headers["x-webhook-event-type"])).toEqual(["trend.detected"]);

  // The stream carries both events of the trend.
  await waitFor(async () => streamed.length >= 2);
  expect(streamed.map((m) => [m.event.type, m.event.trend_id])).toEqual([["trend.detected", opened.trend_id], ["trend.ended", opened.trend_id]]);
  ws.close();

  // The chat card says so in place; the open critical item is no longer re-notified.
  await waitFor(async () => slack.calls("chat.update").some((c) => JSON.stringify(c.params).includes("has ended")));
  const after = await item(stack.gw, a, opening.id);
  expect(after.state).toBe("open");
  expect(after.summary).toContain("has ended");
  expect((await stack.gw.deps.db.operatorItem.findUnique({ where: { id: opening.id } }))!.renotifyAt).toBeNull();

  // The workflow got both, the end with its type and trend id.
  const bodies = n8n.pushes.map((p) => p.body);
  expect(bodies.map((b) => b.data?.type)).toEqual(["trend.detected", "trend.ended"]);
  expect(bodies[1].data.trend_id).toBe(opened.trend_id);
  await receiver.close();
}, 60_000);

test("a replayed trend.ended delivery still names its type and trend (read from the stored event)", async () => {
  const a = await connectedAccount(stack, slack, { id: "C0ALERTS002", name: "alerts-2" });
  const receiver = await startReceiver((r, n) => ({ status: n === 1 ? 500 : 204 }));
  const sub = (await stack.gw.http.post("/api/integrations/webhooks").set(a.auth)
    .send(webhookBody(receiver.url("/ended"), { trigger_type: "trend_ended", threshold_value: 3 }))).body;
  const low = event(a.accountId, { type: "trend.ended", severity: "medium" });
  const high = event(a.accountId, { type: "trend.ended", severity: "high" });
  await stack.publish(low);
  await stack.publish(high);
  // threshold 3 (high): only the high one fires; its first attempt fails (500) and the retry carries the headers.
  await waitFor(async () => receiver.received.length >= 2, { timeoutMs: 20_000 });
  expect(receiver.received.map((r) => r.headers["x-webhook-trend-id"])).toEqual([high.trend_id, high.trend_id]);
  expect(receiver.received.every((r) => r.headers["x-webhook-event-type"] === "trend.ended")).toBe(true);
  await waitFor(async () => (await stack.gw.deps.db.webhookDelivery.findFirst({ where: { subscriptionId: sub.id } }))?.status === "succeeded");
  const execs = (await stack.gw.http.get(`/api/integrations/webhooks/${sub.id}/executions?limit=10`).set(a.auth)).body.data;
  expect((await stack.gw.http.post(`/api/integrations/webhooks/${sub.id}/executions/${execs[0].id}/replay`).set(a.auth)).status).toBeLessThan(300);
  await waitFor(async () => receiver.received.length >= 3, { timeoutMs: 20_000 });
  expect(receiver.received[2].headers).toMatchObject({ "x-webhook-event-type": "trend.ended", "x-webhook-trend-id": high.trend_id });
  await receiver.close();
}, 60_000);
