// A chat setup's trigger window (a new item's card is posted only once its trend has lasted) and recovery window (a
// re-detection right after a trend ended opens nothing), and the settings' backtest honouring both.
import { QUEUES } from "@trendgate/contracts";
import { waitFor } from "../helpers/config.ts";
import { seedTrendRow } from "../helpers/trend-row.ts";
import type { Stack } from "../helpers/stack.ts";
import { startSlackServer, type SlackServer } from "../peers/slack-server.ts";
import { connectedAccount, event, eventsDrained, items, startChatStack } from "./helpers.ts";

let slack: SlackServer;
let stack: Stack;
let n = 0;
beforeAll(async () => { slack = await startSlackServer(); stack = await startChatStack(slack); });
afterAll(async () => { await stack.close(); await slack.close(); });
afterEach(() => slack.assertConforming());

const account = () => connectedAccount(stack, slack, { id: `C0WINDOW${String(++n).padStart(3, "0")}`, name: `windows-${n}` });


test("trigger window: items open at once, a card goes only for the trend still anomalous at the window's end", async () => {
  const a = await account();
  expect((await stack.gw.http.put("/api/integrations/chat/settings").set(a.auth).send({ min_severity: "low", trigger_window_minutes: 1 })).body)
    .toMatchObject({ trigger_window_minutes: 1, recovery_window_minutes: 0 });
  const lasting = await seedTrendRow(stack.gw.deps.db, a.accountId, "Lasting");
  const fleeting = await seedTrendRow(stack.gw.deps.db, a.accountId, "Fleeting");
  for (const t of [lasting, fleeting]) await stack.publish(event(a.accountId, { trend_id: t.id, trend_name: t.name, severity: "high" }));
  await waitFor(async () => (await items(stack.gw, a)).data.length === 2);
  await eventsDrained(stack);
  await new Promise((r) => setTimeout(r, 500));
  expect(slack.messages(a.channelId)).toHaveLength(0); // held for the window

  // The window ends (its messages made due now): a pass found "Lasting" anomalous after it, "Fleeting" only before.
  const { db } = stack.gw.deps;
  await db.trend.update({ where: { id: lasting.id }, data: { lastAnomalousAt: new Date(Date.now() + 5 * 60_000) } });
  await db.trend.update({ where: { id: fleeting.id }, data: { lastAnomalousAt: new Date(Date.now() - 60_000) } });
  await db.$executeRaw`UPDATE outbox_messages SET next_attempt_at = now() AT TIME ZONE 'UTC' WHERE account_id = ${a.accountId} AND queue = ${QUEUES.chatMessages}`;
  for (const job of await stack.gw.deps.queues.get(QUEUES.chatMessages).getDelayed()) await job.promote().catch(() => {});
  await waitFor(async () => slack.messages(a.channelId).length === 1, { timeoutMs: 20_000 });
  await new Promise((r) => setTimeout(r, 500));
  expect(slack.messages(a.channelId)).toHaveLength(1);
  expect(JSON.stringify(slack.messages(a.channelId)[0].blocks)).toContain("Lasting");
  const listed = (await items(stack.gw, a)).data as { title: string; chat: unknown }[];
  expect(listed.find((i) => i.title === "Fleeting")).toMatchObject({ chat: { channel_id: null, message_ts: null } }); // in the queue, no card
});

test("recovery window: a re-detection soon after its trend ended opens no item; a later one does", async () => {
  const a = await account();
  await stack.gw.http.put("/api/integrations/chat/settings").set(a.auth).send({ min_severity: "low", recovery_window_minutes: 60 });
  const ago = (min: number) => new Date(Date.now() - min * 60_000).toISOString();
  await stack.publish(event(a.accountId, { type: "trend.detected", trend_name: "Back soon", previous_ended_at: ago(10) }));
  await stack.publish(event(a.accountId, { type: "trend.detected", trend_name: "Back later", previous_ended_at: ago(90) }));
  await waitFor(async () => (await items(stack.gw, a)).data.length >= 1);
  await eventsDrained(stack);
  expect((await items(stack.gw, a)).data.map((i: { title: string }) => i.title)).toEqual(["Back later"]);

  // The settings' backtest says the same of the stored history.
  const preview = await stack.gw.http.post("/api/integrations/chat/settings/preview?days=1").set(a.auth).send({ min_severity: "low", recovery_window_minutes: 60 });
  expect(preview.body).toMatchObject({ items_opened: 1, cards_held_back: 0 });
  expect(preview.body.trends.map((t: { trend_name: string }) => t.trend_name)).toEqual(["Back later"]);
});
