// Operator routing rules and escalation, end to end against the Slack stand-in: a rule sends its category to its own
// channel and the rest takes the default route; an unacknowledged critical item escalates through its steps (a
// reply mentioning people, a webhook told, a wait, the next mention, a repeat), across a worker restart, and
// acknowledging stops it; subscribed webhooks hear of the acknowledgement.
import { createLogger } from "@trendgate/logger";
import { startWorkers } from "../../apps/worker/src/run-workers.ts";
import { catalogProblems } from "../helpers/account-events.ts";
import { waitFor } from "../helpers/config.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { DELIVERY_ENV, webhookBody, type Stack } from "../helpers/stack.ts";
import { startSlackServer, type SlackServer } from "../peers/slack-server.ts";
import { connectedAccount, event, eventsDrained, item, items, posted, publishAndWait, startChatStack } from "./helpers.ts";

let slack: SlackServer;
let stack: Stack;
let rx: Receiver;
let n = 0;
beforeAll(async () => {
  slack = await startSlackServer();
  rx = await startReceiver();
  stack = await startChatStack(slack, DELIVERY_ENV);
});
afterAll(async () => { await stack.close(); await slack.close(); await rx.close(); });
afterEach(() => slack.assertConforming());

const channel = (name: string) => {
  const c = { id: `C0RT${String(++n).padStart(7, "0")}`, name: `${name}-${n}` };
  slack.addChannel({ ...c, botMember: true });
  return c;
};
const putRoutes = (a: { auth: any }, body: object) => stack.gw.http.put("/api/operator/routes").set(a.auth).send(body);
const replies = (channelId: string, ts: string) => slack.messages(channelId).filter((m) => m.threadTs === ts).map((m) => m.text);

test("a rule sends its category to its channel (at its own severity); the rest takes the default route and its settings", async () => {
  const a = await connectedAccount(stack, slack, channel("default"));
  const finance = channel("finance");
  const put = await putRoutes(a, { routes: [{ name: "Finance desk", match: { categories: ["finance"] }, provider: "slack", channel_id: finance.id }] });
  expect(put.status).toBe(200);
  const route = put.body.routes[0];
  expect(put.body).toEqual({
    routes: [expect.objectContaining({ id: expect.stringMatching(/^rte_/), position: 0, name: "Finance desk", provider: "slack", channel_id: finance.id, escalation: [] })],
    default: { provider: "slack", channel_id: a.channelId, escalation: [] },
  });
  expect((await stack.gw.http.get("/api/operator/routes").set(a.auth)).body).toEqual(put.body);

  // A finance trend goes to the finance channel, even at low severity (the rule has no minimum).
  const fin = await posted(stack, a, (await publishAndWait(stack, a, event(a.accountId, { category: "finance/markets", severity: "low", trend_name: "Rate cut" }))).id);
  expect(fin).toMatchObject({ route_id: route.id, source: "trends", chat: { provider: "slack", channel_id: finance.id } });
  expect(slack.messages(finance.id)).toHaveLength(1);
  expect(fin.history[0]).toMatchObject({ action: "opened", data: { route_id: route.id, route: "Finance desk" } });

  // Anything else takes the default route: its channel, and its settings' min_severity (high by default).
  const tech = await posted(stack, a, (await publishAndWait(stack, a, event(a.accountId, { category: "tech/ai", severity: "high" }))).id);
  expect(tech).toMatchObject({ route_id: null, chat: { provider: "slack", channel_id: a.channelId } });
  await stack.publish(event(a.accountId, { category: "tech/ai", severity: "low", trend_name: "Too quiet" }));
  await eventsDrained(stack);
  expect((await items(stack.gw, a)).data.map((i: any) => i.title)).not.toContain("Too quiet");
  expect(slack.messages(a.channelId)).toHaveLength(1);
  expect(slack.messages(finance.id)).toHaveLength(1);
});

test("rules are checked against what they name: a provider the account is connected to, its webhooks, a repeat after a wait", async () => {
  const a = await connectedAccount(stack, slack, channel("checks"));
  const hooked = channel("hooked");
  const bad = await putRoutes(a, {
    routes: [
      { name: "Teams", match: {}, provider: "teams", channel_id: "19:abc@thread.tacv2" },
      { name: "Nope", match: {}, provider: "nope", channel_id: "x" },
      { name: "Hook", match: {}, provider: "slack", channel_id: hooked.id, escalation: [{ type: "notify_webhook", webhook_id: "wh_01kaq3m2b4c5d6e7f8g9h0jkmn" }] },
    ],
  });
  expect(bad.status).toBe(422);
  expect(bad.body.errors.map((e: any) => [e.path, e.code])).toEqual([
    ["routes.0.provider", "not_connected"], ["routes.1.provider", "invalid_value"], ["routes.2.escalation.0.webhook_id", "not_found"],
  ]);
  const loop = await putRoutes(a, { routes: [], default_escalation: [{ type: "notify", mentions: [{ kind: "channel" }] }, { type: "repeat", times: 2 }] });
  expect(loop.status).toBe(422);
  expect(loop.body.errors[0].path).toBe("default_escalation.1.type");
  const early = await putRoutes(a, { routes: [], default_escalation: [{ type: "repeat", times: 2 }, { type: "wait", minutes: 5 }] });
  expect(early.status).toBe(422);
  expect((await stack.gw.http.get("/api/operator/routes").set(a.auth)).body.default.escalation).toEqual([]); // nothing stored
});

test("an unacknowledged critical item escalates through its steps across a worker restart, and acknowledging stops it", async () => {
  const a = await connectedAccount(stack, slack, channel("oncall"));
  const webhook = await stack.gw.http.post("/api/integrations/webhooks").set(a.auth)
    .send(webhookBody(rx.url(`/esc-${n}`), { trigger_type: "event_types", event_types: ["operator.acknowledged", "operator.resolved"], threshold_value: 0 }));
  expect(webhook.status).toBe(201);
  const put = await putRoutes(a, {
    routes: [],
    default_escalation: [
      { type: "notify", mentions: [{ kind: "user", id: "U0PRIMARY1" }] },
      { type: "notify_webhook", webhook_id: webhook.body.id },
      { type: "wait", minutes: 0.25 },
      { type: "notify", mentions: [{ kind: "group", id: "S0BACKUP01" }], message: "Still open: backup on call, please look." },
      { type: "repeat", times: 1 },
    ],
  });
  expect(put.status).toBe(200);

  const opened = await publishAndWait(stack, a, event(a.accountId, { severity: "critical", trend_name: "Outage chatter" }));
  const it = await posted(stack, a, opened.id);
  const ts = it.chat.message_ts as string;
  // Step 0 at once: a reply in the card's thread mentioning the primary; step 1: the webhook hears operator.escalated.
  // (Waits allow a busy machine: the whole suite runs beside this test.)
  const busy = { timeoutMs: 30_000 };
  await waitFor(async () => replies(a.channelId, ts).length === 1, busy);
  expect(replies(a.channelId, ts)[0]).toMatch(/^<@U0PRIMARY1> This item is still open/);
  const escalated = await waitFor(async () => rx.on(`/esc-${n}`).find((r) => r.headers["x-webhook-event-type"] === "operator.escalated"), busy);
  expect(JSON.parse(escalated.body).data).toMatchObject({ item_id: it.id, step: 1, step_type: "notify_webhook", title: "Outage chatter", severity: "critical" });
  expect(catalogProblems(JSON.parse(escalated.body))).toEqual([]); // exactly the catalog's operator.escalated
  // No reminder loop beside the escalation.
  expect((await stack.gw.deps.db.operatorItem.findUniqueOrThrow({ where: { id: it.id } })).renotifyAt).toBeNull();

  // The worker goes away during the wait: nothing is lost, nothing is sent while it is down.
  await waitFor(async () => (await item(stack.gw, a, it.id)).history.some((h: any) => h.action === "escalated" && h.data.type === "wait"), busy);
  await Promise.all(stack.workers.map((w) => w.close()));
  stack.workers.length = 0;
  await new Promise((r) => setTimeout(r, 16_000));
  expect(replies(a.channelId, ts)).toHaveLength(1);
  stack.workers.push(startWorkers(stack.gw.deps.config, createLogger({ level: "silent" }), stack.gw.deps.config.WORKER_QUEUES));

  // The new worker takes the step the wait delayed, then the repeat starts the chain again (the primary once more).
  await waitFor(async () => replies(a.channelId, ts).length === 3, busy);
  expect(replies(a.channelId, ts).slice(1)).toEqual([
    "<!subteam^S0BACKUP01> Still open: backup on call, please look.",
    expect.stringMatching(/^<@U0PRIMARY1> /),
  ]);

  // Acknowledging stops it: the wait that follows ends in nothing.
  await waitFor(async () => (await item(stack.gw, a, it.id)).history.filter((h: any) => h.action === "escalated" && h.data.type === "wait").length === 2, busy);
  const ack = await stack.gw.http.post(`/api/operator/items/${it.id}/actions`).set(a.auth).send({ action: "acknowledge", version: 1 });
  expect(ack.status).toBe(200);
  const notice = await waitFor(async () => rx.on(`/esc-${n}`).find((r) => r.headers["x-webhook-event-type"] === "operator.acknowledged"), busy);
  expect(JSON.parse(notice.body).data).toMatchObject({ item_id: it.id, action: "acknowledge", actor: expect.stringMatching(/^key:/) });
  expect(catalogProblems(JSON.parse(notice.body))).toEqual([]);
  await new Promise((r) => setTimeout(r, 18_000));
  expect(replies(a.channelId, ts)).toHaveLength(3);

  const history = (await item(stack.gw, a, it.id)).history.map((h: any) => (h.action === "escalated" ? `escalated:${h.data.step}:${h.data.type}` : h.action));
  expect(history).toEqual([
    "opened", "escalation_started",
    "escalated:0:notify", "escalated:1:notify_webhook", "escalated:2:wait", "escalated:3:notify", "escalated:4:repeat",
    "escalated:0:notify", "escalated:1:notify_webhook", "escalated:2:wait",
    "acknowledge", "escalation_stopped",
  ]);
}, 180_000);

test("a reply the chat refuses for good does not silence the steps after it", async () => {
  const a = await connectedAccount(stack, slack, channel("refused"));
  expect((await putRoutes(a, {
    routes: [],
    default_escalation: [
      { type: "notify", mentions: [{ kind: "user", id: "U0GONE0001" }] },
      { type: "notify", mentions: [{ kind: "group", id: "S0NEXT0001" }] },
    ],
  })).status).toBe(200);
  // The card is posted as usual; the first reply under it is refused for good (Slack: the thread's channel was
  // archived meanwhile). Queued before the item opens: the first step may run as soon as the card is up.
  slack.inject("chat.postMessage", { delayMs: 0 });
  slack.inject("chat.postMessage", { error: "is_archived" });
  const opened = await publishAndWait(stack, a, event(a.accountId, { severity: "high" }));
  const it = await posted(stack, a, opened.id);
  const steps = await waitFor(async () => {
    const h = (await item(stack.gw, a, it.id)).history.filter((x: any) => x.action === "escalated");
    return h.length === 2 ? h : null;
  }, { timeoutMs: 30_000 });
  expect(steps.map((h: any) => [h.data.step, h.data.replied])).toEqual([[0, false], [1, true]]);
  expect(steps[0].data.error).toContain("is_archived");
  expect(replies(a.channelId, it.chat.message_ts)).toEqual([expect.stringMatching(/^<!subteam\^S0NEXT0001> /)]);
});
