import { QUEUES } from "@trendgate/contracts";
import { waitFor } from "../helpers/config.ts";
import type { Stack } from "../helpers/stack.ts";
import { cardsPerItem } from "../faults/chat-outbox-kit.ts";
import { connectedAccount, event, item, posted, publishAndWait, startChatStack } from "../operator/helpers.ts";
import { startSlackServer, type SlackServer } from "../peers/slack-server.ts";

// Slack as it fails in production, through the product's real path (trend event -> operator item -> chat outbox ->
// @slack/web-api -> the Slack stand-in). Slack answers an outage with HTTP 5xx or with HTTP 200 and
// {ok:false, error: fatal_error | internal_error | service_unavailable | request_timeout}, throttles with 429 and
// Retry-After, and drops connections while it restarts. chat.postMessage has no idempotency key: a post whose answer
// is lost (after Slack stored it) and is sent again makes a second message.

let slack: SlackServer;
let stack: Stack;
beforeEach(async () => { slack = await startSlackServer(); });
afterEach(async () => {
  await stack?.close();
  slack.assertConforming();
  await slack.close();
});

const start = async () => {
  stack = await startChatStack(slack, { OUTBOX_RETRY_SCHEDULE_SECONDS: "1,1,1,1" });
  return connectedAccount(stack, slack);
};

/** The attempts of the card post once it succeeded (its record is written just after the card is stored on the item). */
const succeededAttempts = (itemId: string) =>
  waitFor(async () => { const l = await postAttempts(itemId); return l.at(-1)?.outcome === "succeeded" ? l : null; }, { timeoutMs: 10_000, everyMs: 50 });

/** The attempts of the item's card post, oldest first. */
async function postAttempts(itemId: string) {
  const msg = await stack.gw.deps.db.outboxMessage.findFirstOrThrow({ where: { subjectId: itemId, queue: QUEUES.chatMessages } });
  return stack.gw.deps.db.outboxAttempt.findMany({ where: { messageId: msg.id }, orderBy: { attempt: "asc" }, select: { attempt: true, outcome: true, responseStatus: true, errorClass: true, errorMessage: true } });
}

test("an outage (HTTP 503, then Slack's own fatal_error and service_unavailable) delays the card; it is posted once", async () => {
  const a = await start();
  slack.inject("chat.postMessage", { status: 503 });
  slack.inject("chat.postMessage", { error: "fatal_error" });
  slack.inject("chat.postMessage", { error: "service_unavailable" });
  const it = await publishAndWait(stack, a, event(a.accountId, { severity: "high" }));
  const shown = await posted(stack, a, it.id);

  expect(cardsPerItem(slack, [a.channelId]).get(it.id)).toEqual([shown.chat.message_ts]);
  expect(slack.calls("chat.postMessage").map((c) => c.status)).toEqual([503, 200, 200, 200]);
  expect((await succeededAttempts(it.id)).map((x) => [x.outcome, x.errorClass])).toEqual([
    ["retrying", "unavailable"], ["retrying", "unavailable"], ["retrying", "unavailable"], ["succeeded", null],
  ]);
}, 60_000);

test("a 429 with Retry-After is waited out as Slack asks; the card is posted once", async () => {
  const a = await start();
  slack.inject("chat.postMessage", { status: 429, retryAfter: 2 });
  const it = await publishAndWait(stack, a, event(a.accountId, { severity: "high" }));
  const shown = await posted(stack, a, it.id);

  expect(cardsPerItem(slack, [a.channelId]).get(it.id)).toEqual([shown.chat.message_ts]);
  const attempts = await succeededAttempts(it.id);
  expect(attempts.map((x) => [x.outcome, x.responseStatus, x.errorClass])).toEqual([["retrying", 429, "rate_limited"], ["succeeded", 200, null]]);
  const msg = await stack.gw.deps.db.outboxMessage.findFirstOrThrow({ where: { subjectId: it.id, queue: QUEUES.chatMessages } });
  const rows = await stack.gw.deps.db.outboxAttempt.findMany({ where: { messageId: msg.id }, orderBy: { attempt: "asc" } });
  // The retry came no earlier than Slack asked (the schedule alone would have retried after 1 s).
  expect(rows[1].createdAt.getTime() - rows[0].createdAt.getTime()).toBeGreaterThanOrEqual(1900);
}, 60_000);

test("a connection reset and a restart window (connections refused) delay the card; it is posted once", async () => {
  const a = await start();
  slack.inject("chat.postMessage", { reset: true });
  const down = slack.restart(2500); // refuses connections meanwhile
  const it = await publishAndWait(stack, a, event(a.accountId, { severity: "high" }));
  await down;
  const shown = await posted(stack, a, it.id);

  expect(cardsPerItem(slack, [a.channelId]).get(it.id)).toEqual([shown.chat.message_ts]);
  const attempts = await succeededAttempts(it.id);
  expect(attempts.at(-1)!.outcome).toBe("succeeded");
  expect(attempts.slice(0, -1).every((x) => x.outcome === "retrying" && x.errorClass === "unavailable" && x.responseStatus === null)).toBe(true);
  expect(attempts.length).toBeGreaterThanOrEqual(2);
}, 60_000);

test("a post Slack stored but answered after our timeout is never sent again: one card, the post recorded as unknown", async () => {
  const a = await start();
  slack.inject("chat.postMessage", { delayMs: 12_000 }); // past the client's 10 s timeout
  const it = await publishAndWait(stack, a, event(a.accountId, { severity: "high" }));
  const msg = await waitFor(async () => {
    const m = await stack.gw.deps.db.outboxMessage.findFirst({ where: { subjectId: it.id, queue: QUEUES.chatMessages } });
    return m && m.status !== "pending" ? m : null;
  }, { timeoutMs: 30_000, everyMs: 200 });
  await new Promise((r) => setTimeout(r, 3000)); // a retry, had there been one, would have posted by now

  expect(slack.calls("chat.postMessage")).toHaveLength(1);
  expect(cardsPerItem(slack, [a.channelId]).get(it.id)).toHaveLength(1); // the one Slack stored
  expect(msg.status).toBe("unknown");
  expect((await postAttempts(it.id)).map((x) => [x.outcome, x.errorClass])).toEqual([["unknown", "unavailable"]]);
  // The item's history tells an operator to look in the channel rather than wait for a card.
  const history = (await item(stack.gw, a, it.id)).history.map((h: { action: string }) => h.action);
  expect(history).toContain("delivery_unknown");
}, 60_000);

test("an edit Slack made but answered after our timeout is sent again: harmless, still one card showing the latest state", async () => {
  const a = await start();
  const first = event(a.accountId, { severity: "high" });
  const it = await publishAndWait(stack, a, first);
  const shown = await posted(stack, a, it.id);
  slack.inject("chat.update", { delayMs: 12_000 });
  await publishAndWait(stack, a, event(a.accountId, { trend_id: first.trend_id, severity: "critical" })); // the card changes
  await waitFor(async () => slack.calls("chat.update").filter((c) => c.status === 200).length >= 2 ? true : null, { timeoutMs: 30_000, everyMs: 200 });
  await waitFor(async () => {
    const m = await stack.gw.deps.db.outboxMessage.findMany({ where: { subjectId: it.id, queue: QUEUES.chatMessages } });
    return m.every((x) => x.status === "succeeded") ? m : null;
  }, { timeoutMs: 30_000, everyMs: 200 });

  expect(slack.calls("chat.postMessage")).toHaveLength(1);
  expect(cardsPerItem(slack, [a.channelId]).get(it.id)).toEqual([shown.chat.message_ts]);
  expect(slack.message(a.channelId, shown.chat.message_ts)!.text).toMatch(/^Critical:/);
}, 60_000);
