// Operator cards in the channel (the chat-messages outbox queue) against the Slack stand-in: posted once, updated on
// every change, retried on 429, and failures shown on the item. Pacing: pacing.test.ts.
import { waitFor } from "../helpers/config.ts";
import type { Stack } from "../helpers/stack.ts";
import type { SlackServer } from "../peers/slack-server.ts";
import { connectedAccount, event, item, posted, publishAndWait, useChatStack } from "./helpers.ts";

let slack: SlackServer;
let stack: Stack;
let n = 0;
useChatStack((c) => ({ slack, stack } = c));

const channel = () => ({ id: `C0DELIV${String(++n).padStart(4, "0")}`, name: `alerts-${n}` });
const texts = (blocks: any[] | null) => JSON.stringify(blocks ?? []);
const buttonIds = (blocks: any[] | null) => (blocks ?? []).filter((b) => b.type === "actions").flatMap((b) => b.elements.map((e: any) => e.action_id));

test("a new item's card is posted once with its buttons; every change updates that same message", async () => {
  const a = await connectedAccount(stack, slack, channel());
  const e = event(a.accountId, { trend_name: "Heat pumps", summary: "Mentions of heat pumps tripled.", velocity: 240 });
  const it = await posted(stack, a, (await publishAndWait(stack, a, e)).id);
  expect(it.chat.channel_id).toBe(a.channelId);
  const [msg] = slack.messages(a.channelId);
  expect(msg.ts).toBe(it.chat.message_ts);
  expect(texts(msg.blocks)).toContain("Heat pumps");
  expect(texts(msg.blocks)).toContain(it.id);
  // The item is about a trend: feedback buttons after the actions, in every state.
  expect(buttonIds(msg.blocks)).toEqual(["operator:acknowledge", "operator:resolve", "operator:snooze", "operator:mute", "feedback:not_a_trend", "feedback:useful"]);

  const res = await stack.gw.http.post(`/api/operator/items/${it.id}/actions`).set(a.auth).send({ action: "resolve", version: 1 });
  expect(res.status).toBe(200);
  await waitFor(async () => slack.message(a.channelId, msg.ts)!.edits.length === 1);
  const updated = slack.message(a.channelId, msg.ts)!;
  expect(buttonIds(updated.blocks)).toEqual(["operator:reopen", "feedback:not_a_trend", "feedback:useful"]);
  expect(texts(updated.blocks)).toContain("Resolved");
  expect(slack.messages(a.channelId)).toHaveLength(1); // updated in place, never posted again
  // This card's channel only: the assertion is about this card, whatever else reached the stand-in.
  const updates = slack.calls("chat.update").filter((c) => c.params.channel === a.channelId);
  expect(updates.length).toBeGreaterThanOrEqual(1);
  expect(updates.every((c) => c.params.ts === msg.ts)).toBe(true);
});

test("a repeat of the trend updates the card's figures (velocity_alerts on by default)", async () => {
  const a = await connectedAccount(stack, slack, channel());
  const e = event(a.accountId, { velocity: 100 });
  const it = await posted(stack, a, (await publishAndWait(stack, a, e)).id);
  await publishAndWait(stack, a, { ...e, id: `${e.id}-2`, velocity: 333 });
  await waitFor(async () => texts(slack.message(a.channelId, it.chat.message_ts)!.blocks).includes("+333"));
  expect(texts(slack.message(a.channelId, it.chat.message_ts)!.blocks)).toContain("*Occurrences*\\n2");
});

test("Slack's 429 is retried after its Retry-After; the card arrives and no error is shown", async () => {
  const a = await connectedAccount(stack, slack, channel());
  slack.inject("chat.postMessage", { status: 429, retryAfter: 1 });
  const it = await posted(stack, a, (await publishAndWait(stack, a, event(a.accountId))).id);
  expect(it.chat.delivery_error).toBeNull();
  // The succeeded attempt's record is written just after the card is stored on the item.
  const attempts = await waitFor(async () => {
    const rows = await stack.gw.deps.db.outboxAttempt.findMany({ where: { accountId: a.accountId }, orderBy: { attempt: "asc" } });
    return rows.at(-1)?.outcome === "succeeded" ? rows : null;
  });
  expect(attempts.map((x) => [x.attempt, x.outcome, x.errorClass, x.responseStatus])).toEqual([[1, "retrying", "rate_limited", 429], [2, "succeeded", null, 200]]);
});

test("a post Slack refuses for good is shown on the item (delivery_error) and in its history", async () => {
  const a = await connectedAccount(stack, slack, channel());
  slack.inject("chat.postMessage", { error: "is_archived" });
  const { id } = await publishAndWait(stack, a, event(a.accountId));
  const failed = await waitFor(async () => { const it = await item(stack.gw, a, id); return it.chat.delivery_error ? it : null; });
  expect(failed.chat).toMatchObject({ message_ts: null, delivery_error: expect.stringContaining("is_archived") });
  await waitFor(async () => (await item(stack.gw, a, id)).history.some((h: any) => h.action === "delivery_failed"));
  const h = (await item(stack.gw, a, id)).history.find((x: any) => x.action === "delivery_failed");
  expect(h).toMatchObject({ actor: "system", data: { type: "post_item", error: expect.stringContaining("is_archived") } });
  expect((await stack.gw.http.get(`/api/operator/items?limit=1`).set(a.auth)).body.data[0].chat.delivery_error).toContain("is_archived");
});

test("credentials Slack refuses while posting: the connection is marked needs_reauth and the item says why", async () => {
  const a = await connectedAccount(stack, slack, channel());
  slack.inject("chat.postMessage", { error: "invalid_auth" });
  const { id } = await publishAndWait(stack, a, event(a.accountId));
  await waitFor(async () => (await item(stack.gw, a, id)).chat.delivery_error);
  expect((await item(stack.gw, a, id)).chat.delivery_error).toContain("invalid_auth");
  expect((await stack.gw.http.get("/api/integrations/chat/connection").set(a.auth)).body.status).toBe("needs_reauth");
});
