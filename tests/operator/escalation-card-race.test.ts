// An escalation's first notify step replies under the item's card. The card's post may complete between the moment
// the chat worker read the item (no card yet) and the moment it asks whether a post is still on its way (none any
// more): the step must then read the item again and reply under the card, not skip as "no card to reply under".
import { createLogger } from "@trendgate/logger";
import { QUEUES, type ChatMessagePayload } from "@trendgate/contracts";
import { findOperatorItem } from "@trendgate/db";
import { chatSetupOf, targetOf } from "@trendgate/operator";
import { escalationSteps } from "../../apps/worker/src/processors/escalation-steps.ts";
import { DELIVERY_ENV, type Stack } from "../helpers/stack.ts";
import { startSlackServer, type SlackServer } from "../peers/slack-server.ts";
import { connectedAccount, event, publishAndWait, startChatStack } from "./helpers.ts";

let slack: SlackServer;
let stack: Stack;
beforeAll(async () => {
  slack = await startSlackServer();
  // Only the trend-events worker runs: the item opens and its post and first step are queued, not sent.
  stack = await startChatStack(slack, { ...DELIVERY_ENV, WORKER_QUEUES: QUEUES.trendEvents });
});
afterAll(async () => { await stack.close(); await slack.close(); });

test("a notify step whose card was posted after the item was read replies under the card", async () => {
  const a = await connectedAccount(stack, slack);
  const put = await stack.gw.http.put("/api/operator/routes").set(a.auth)
    .send({ routes: [], default_escalation: [{ type: "notify", mentions: [{ kind: "user", id: "U0PRIMARY1" }] }] });
  expect(put.status).toBe(200);
  const opened = await publishAndWait(stack, a, event(a.accountId, { severity: "critical", trend_name: "Card race" }));
  const { db } = stack.gw.deps;

  const stale = (await findOperatorItem(db, opened.id))!; // what the chat worker read: no card yet
  expect(stale.chatMessageTs).toBeNull();
  const step = await db.outboxMessage.findFirstOrThrow({ where: { subjectId: opened.id, payload: { path: ["type"], equals: "escalate_item" } } });
  // Meanwhile the card's post completes: its message is done and the item has its card.
  await db.outboxMessage.updateMany({ where: { subjectId: opened.id, payload: { path: ["type"], equals: "post_item" } }, data: { status: "succeeded", completedAt: new Date() } });
  await db.operatorItem.update({ where: { id: opened.id }, data: { chatChannelId: a.channelId, chatMessageTs: "1700000000.000100", chatProvider: "slack" } });

  const deps = { ...stack.gw.deps, logger: createLogger({ level: "silent" }) } as unknown as Parameters<typeof escalationSteps>[0];
  const setup = (await chatSetupOf(db, stack.gw.deps.registry, a.accountId, stack.gw.deps.config.OPERATOR_RENOTIFY_SECONDS))!;
  const plan = await escalationSteps(deps).plan(stale, step.payload as ChatMessagePayload, targetOf(setup, stale)!);
  expect(plan).toMatchObject({ reply: { text: expect.stringMatching(/still open/), mentions: [expect.objectContaining({ id: "U0PRIMARY1" })] }, card: { channelId: a.channelId, ts: "1700000000.000100" } });
});
