// The operator queue's clock (QUEUES.operatorTicks): an open critical item nobody acknowledged is re-notified in its
// card's thread with the configured mention, and a snooze that ended reopens its item. Time is moved by setting the
// due instants in the past (what the passage of OPERATOR_RENOTIFY_SECONDS or a snooze's minutes would do).
import { QUEUES } from "@trendgate/contracts";
import { waitFor } from "../helpers/config.ts";
import type { Stack } from "../helpers/stack.ts";
import { startSlackServer, type SlackServer } from "../peers/slack-server.ts";
import { connectedAccount, event, item, posted, publishAndWait, startChatStack } from "./helpers.ts";

let slack: SlackServer;
let stack: Stack;
let n = 0;
beforeAll(async () => {
  slack = await startSlackServer();
  stack = await startChatStack(slack, { OPERATOR_RENOTIFY_SECONDS: "600" });
});
afterAll(async () => { await stack.close(); await slack.close(); });
afterEach(() => slack.assertConforming());

const past = () => new Date(Date.now() - 1000);
/** Runs one tick now, as the job scheduler would, and waits for it to finish. */
async function tick() {
  const job = await stack.gw.deps.queues.add(QUEUES.operatorTicks, {}, { jobId: `tick-${Date.now()}-${++n}` });
  await waitFor(async () => (await job.getState()) === "completed");
}
const replies = (channelId: string, ts: string) => slack.messages(channelId).filter((m) => m.threadTs === ts);

async function criticalCard(mention: string | null) {
  const a = await connectedAccount(stack, slack, { id: `C0TICK${String(++n).padStart(5, "0")}`, name: `tick-${n}` });
  await stack.gw.http.put("/api/integrations/chat/settings").set(a.auth).send({ critical_mention: mention });
  const opened = await publishAndWait(stack, a, event(a.accountId, { severity: "critical" }));
  const it = await posted(stack, a, opened.id);
  return { a, it, ts: it.chat.message_ts as string };
}

test("an open critical item is re-notified in its thread with the mention, then again only after the delay", async () => {
  const { a, it, ts } = await criticalCard("<!here>");
  const row = await stack.gw.deps.db.operatorItem.findUniqueOrThrow({ where: { id: it.id } });
  expect(row.renotifyAt!.getTime() - row.createdAt.getTime()).toBeGreaterThanOrEqual(600_000 - 1000); // due after the delay

  await tick(); // not due yet
  expect(replies(a.channelId, ts)).toHaveLength(0);

  await stack.gw.deps.db.operatorItem.update({ where: { id: it.id }, data: { renotifyAt: past() } });
  await tick();
  await waitFor(async () => replies(a.channelId, ts).length === 1);
  expect(replies(a.channelId, ts)[0].text).toMatch(/^<!here> /);
  const after = await stack.gw.deps.db.operatorItem.findUniqueOrThrow({ where: { id: it.id } });
  expect(after.renotifyCount).toBe(1);
  expect(after.renotifyAt!.getTime()).toBeGreaterThan(Date.now() + 500_000); // pushed forward by the delay
  expect((await item(stack.gw, a, it.id)).history.map((h: any) => h.action)).toEqual(["opened", "renotified"]);

  await tick(); // nothing due any more
  expect(replies(a.channelId, ts)).toHaveLength(1);
});

test("acknowledging stops the reminders; a high (not critical) item never gets one", async () => {
  const { a, it, ts } = await criticalCard(null);
  expect((await stack.gw.http.post(`/api/operator/items/${it.id}/actions`).set(a.auth).send({ action: "acknowledge", version: 1 })).status).toBe(200);
  expect((await stack.gw.deps.db.operatorItem.findUniqueOrThrow({ where: { id: it.id } })).renotifyAt).toBeNull();
  await tick();
  expect(replies(a.channelId, ts)).toHaveLength(0);

  const high = await posted(stack, a, (await publishAndWait(stack, a, event(a.accountId, { severity: "high" }))).id);
  expect((await stack.gw.deps.db.operatorItem.findUniqueOrThrow({ where: { id: high.id } })).renotifyAt).toBeNull();
});

test("a snooze that ended reopens the item (by the system) and its card shows it open again", async () => {
  const { a, it, ts } = await criticalCard("<!channel>");
  const snoozed = await stack.gw.http.post(`/api/operator/items/${it.id}/actions`).set(a.auth).send({ action: "snooze", version: 1, snooze_minutes: 30 });
  expect(snoozed.body.state).toBe("snoozed");
  await waitFor(async () => JSON.stringify(slack.message(a.channelId, ts)!.blocks).includes("Snoozed"));

  await tick(); // the snooze has not ended
  expect((await item(stack.gw, a, it.id)).state).toBe("snoozed");

  await stack.gw.deps.db.operatorItem.update({ where: { id: it.id }, data: { snoozedUntil: past() } });
  await tick();
  const back = await item(stack.gw, a, it.id);
  expect(back).toMatchObject({ state: "open", version: 3, snoozed_until: null });
  expect(back.history.at(-1)).toMatchObject({ action: "unsnoozed", from_state: "snoozed", to_state: "open", actor: "system" });
  await waitFor(async () => { const b = slack.message(a.channelId, ts)!.blocks; return JSON.stringify(b).includes("*Open*"); });
  // Open and critical again: reminders resume after the delay.
  const row = await stack.gw.deps.db.operatorItem.findUniqueOrThrow({ where: { id: it.id } });
  expect(row.renotifyAt!.getTime()).toBeGreaterThan(Date.now() + 500_000);
});
