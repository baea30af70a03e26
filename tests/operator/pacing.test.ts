// Posts to one channel are paced to one per CHAT_POST_INTERVAL_MS across the fleet (packages/delivery/src/pacing/pacer.ts). The
// interval here is longer than the test: the second post can only go out once the interval has passed, which the test
// stands in for by expiring the channel's slot and promoting the held job. (Its own file: another stack's outbox
// sweeper in the same database would take the held message and send it unpaced.)
import { QUEUES } from "@trendgate/contracts";
import { waitFor } from "../helpers/config.ts";
import type { Stack } from "../helpers/stack.ts";
import { startSlackServer, type SlackServer } from "../peers/slack-server.ts";
import { connectedAccount, event, item, posted, publishAndWait, startChatStack } from "./helpers.ts";

let slack: SlackServer;
let stack: Stack;
beforeAll(async () => {
  slack = await startSlackServer();
  stack = await startChatStack(slack, { CHAT_POST_INTERVAL_MS: "60000" });
});
afterAll(async () => { await stack.close(); await slack.close(); });
afterEach(() => slack.assertConforming());

test("a second post to a channel within the interval is held (not failed, no attempt counted), then sent", async () => {
  const a = await connectedAccount(stack, slack, { id: "C0PACED0001", name: "paced" });
  const first = await posted(stack, a, (await publishAndWait(stack, a, event(a.accountId))).id);
  const second = await publishAndWait(stack, a, event(a.accountId));
  const queue = stack.gw.deps.queues.get(QUEUES.chatMessages);
  // The second item's post, held: the first item may have a delayed job of its own (its reminder), so pick by subject.
  const heldOf = async () => {
    for (const j of await queue.getJobs(["delayed"])) {
      if (j.data.attempt !== 1) continue;
      const message = await stack.gw.deps.db.outboxMessage.findUnique({ where: { id: j.data.message_id } });
      if (message?.subjectId === second.id) return j;
    }
    return undefined;
  };
  const held = await waitFor(heldOf);
  expect(slack.messages(a.channelId).map((m) => m.ts)).toEqual([first.chat.message_ts]);
  const row = await stack.gw.deps.db.outboxMessage.findUniqueOrThrow({ where: { id: held.data.message_id } });
  expect(row).toMatchObject({ subjectId: second.id, status: "pending", attempts: 0 });
  expect((await item(stack.gw, a, second.id)).chat).toEqual({ provider: null, channel_id: null, message_ts: null, delivery_error: null });

  // Another channel of another account is not held by this one's slot.
  const b = await connectedAccount(stack, slack, { id: "C0PACED0002", name: "paced-2" });
  await posted(stack, b, (await publishAndWait(stack, b, event(b.accountId))).id);

  const conn = await stack.gw.deps.db.connection.findFirstOrThrow({ where: { accountId: a.accountId } });
  // Time passing, for the pacer: the channel's next free slot and the held message's ticket for it expire.
  const prefix = stack.gw.deps.config.QUEUE_PREFIX;
  { const tag = `${prefix}:pace:{chat:${conn.id}:${a.channelId}}`; await stack.gw.deps.queues.connection.del(tag); await stack.gw.deps.queues.connection.del(`${tag}:ticket:${row.id}`); }
  await held.promote();
  const sent = await posted(stack, a, second.id);
  expect(slack.messages(a.channelId).map((m) => m.ts)).toEqual([first.chat.message_ts, sent.chat.message_ts]);
  // The item shows the post once it is stored; the attempt's record is written right after it.
  const attempts = await waitFor(async () => {
    const rows = await stack.gw.deps.db.outboxAttempt.findMany({ where: { messageId: row.id } });
    return rows.length ? rows : null;
  });
  expect(attempts.map((x) => [x.attempt, x.outcome])).toEqual([[1, "succeeded"]]);
});
