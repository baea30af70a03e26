// End to end, as the "Done when" puts it: signals -> trend -> operator item -> Slack message -> signed
// "Acknowledge" -> item acknowledged and the Slack message updated (chat.update); a forged or stale interaction is
// refused with 401 and changes nothing. Everything goes through the public API, the workers and the Slack stand-in.
import { QUEUES } from "@trendgate/contracts";
import { waitFor } from "../helpers/config.ts";
import { signal } from "../helpers/gateway.ts";
import type { Stack } from "../helpers/stack.ts";
import { startSlackServer, type SlackServer } from "../peers/slack-server.ts";
import { connectChat, item, items, pressButton, startChatStack } from "./helpers.ts";

const HOUR = 3600_000;
let slack: SlackServer;
let stack: Stack;
beforeAll(async () => {
  slack = await startSlackServer();
  stack = await startChatStack(slack);
});
afterAll(async () => { await stack.close(); await slack.close(); });
afterEach(() => slack.assertConforming());

test("signals -> trend -> operator item -> Slack card -> signed Acknowledge -> acknowledged, card updated", async () => {
  // Connect Slack and choose the alerts channel (a public channel the bot is not in yet: it joins).
  slack.addChannel({ id: "C0E2EALERT1", name: "trend-alerts" });
  const a = await stack.gw.account();
  await connectChat(stack.gw, a);
  const channels = (await stack.gw.http.get("/api/integrations/chat/channels").set(a.auth)).body.data;
  expect(channels).toContainEqual({ id: "C0E2EALERT1", name: "trend-alerts", is_private: false, is_member: false });
  expect((await stack.gw.http.post("/api/integrations/chat/save-channel").set(a.auth).send({ channel_id: "C0E2EALERT1" })).body.joined).toBe(true);

  // 24 quiet hours of a topic, then a burst in the last complete hour.
  const last = Math.floor(Date.now() / HOUR) * HOUR - HOUR;
  const signals = Array.from({ length: 25 }, (_, i) => signal({
    id: `op-e2e-${i}`, topic: "Solid-state batteries", category: "tech/energy", count: i === 24 ? 600 : 100,
    observed_at: new Date(last - (24 - i) * HOUR + 1000).toISOString(),
  }));
  expect((await stack.gw.http.post("/api/signals").set(a.auth).send({ signals })).body.accepted).toBe(25);
  await waitFor(async () => (await stack.gw.deps.db.signal.count({ where: { accountId: a.accountId } })) === 25);
  await stack.gw.deps.queues.add(QUEUES.trendDetection, { account_id: a.accountId });

  // The trend event becomes an operator item, and its card is posted to the channel.
  const [opened] = (await waitFor(async () => { const l = await items(stack.gw, a); return l.data.length && l.data[0].chat.message_ts ? l : null; }, { timeoutMs: 20_000 })).data;
  expect(opened).toMatchObject({ state: "open", title: "Solid-state batteries", category: "tech/energy", version: 1, chat: { channel_id: "C0E2EALERT1" } });
  expect(["high", "critical"]).toContain(opened.severity);
  const [card] = slack.messages("C0E2EALERT1");
  expect(card.ts).toBe(opened.chat.message_ts);
  expect(JSON.stringify(card.blocks)).toContain("Solid-state batteries");

  // Forged (wrong secret) and stale (signed 10 minutes ago) presses: 401, nothing changes.
  const ack = slack.blockActionsBody("C0E2EALERT1", card.ts, "operator:acknowledge", { id: "U0OPERATOR1", username: "grace" });
  expect((await pressButton(stack.gw, ack, { secret: "forged-secret" })).status).toBe(401);
  expect((await pressButton(stack.gw, ack, { at: new Date(Date.now() - 10 * 60_000) })).status).toBe(401);
  expect(await item(stack.gw, a, opened.id)).toMatchObject({ state: "open", version: 1, history: [{ action: "opened" }] });
  const updates = () => slack.calls("chat.update").filter((c) => c.params.channel === "C0E2EALERT1");
  expect(updates()).toHaveLength(0);

  // The real press: acknowledged by that Slack user, and the card updated in place.
  expect((await pressButton(stack.gw, ack)).status).toBe(200);
  expect(await item(stack.gw, a, opened.id)).toMatchObject({ state: "acknowledged", version: 2, acknowledged_by: `chat:${slack.team.id}/U0OPERATOR1` });
  await waitFor(async () => updates().length === 1);
  const updated = slack.message("C0E2EALERT1", card.ts)!;
  expect(updated.edits).toHaveLength(1);
  expect(JSON.stringify(updated.blocks)).toContain("acknowledged by grace");
  expect(updated.blocks!.find((b) => b.type === "actions").elements.map((e: any) => e.action_id)).toEqual(["operator:resolve", "operator:snooze", "operator:mute"]);
  expect(slack.messages("C0E2EALERT1")).toHaveLength(1);
}, 60_000);
