// Routing rules that fail loud (issue 49): a rule's channel is checked with the provider when the rules are saved
// (422 naming the rule's channel field; a public channel the bot is not in is joined), and an item whose rule's
// channel stopped taking posts later goes to the default channel, with `route_failed` in its history and the
// account event operator.route_failed.
import { catalogProblemsOf } from "../helpers/account-events.ts";
import { waitFor } from "../helpers/config.ts";
import type { Stack } from "../helpers/stack.ts";
import type { SlackServer } from "../peers/slack-server.ts";
import { connectedAccount, event, item, posted, publishAndWait, useChatStack } from "./helpers.ts";

let slack: SlackServer;
let stack: Stack;
let n = 0;
useChatStack((c) => ({ slack, stack } = c));

const channel = (name: string, seed: { botMember?: boolean; isPrivate?: boolean; isArchived?: boolean } = { botMember: true }) => {
  const c = { id: `C0RC${String(++n).padStart(7, "0")}`, name: `${name}-${n}` };
  slack.addChannel({ ...c, ...seed });
  return c;
};
const rule = (name: string, channelId: string) => ({ name, match: { categories: ["finance"] }, provider: "slack", channel_id: channelId });
const putRoutes = (a: { auth: any }, routes: object[]) => stack.gw.http.put("/api/operator/routes").set(a.auth).send({ routes });

test("a channel Slack does not show the app, an archived one or a private one without the bot is refused, naming the rule; nothing is saved", async () => {
  const a = await connectedAccount(stack, slack, channel("alerts"));
  const ok = channel("ok");
  const archived = channel("archived", { botMember: true, isArchived: true });
  const secret = channel("secret", { isPrivate: true, botMember: false });
  const res = await putRoutes(a, [rule("Fine", ok.id), rule("Nowhere", "C0NOSUCH001"), rule("Old", archived.id), rule("Hidden", secret.id)]);
  expect(res.status).toBe(422);
  expect(res.body.errors).toEqual([
    expect.objectContaining({ path: "routes.1.channel_id", code: "not_found", message: expect.stringContaining('rule "Nowhere"') }),
    expect.objectContaining({ path: "routes.2.channel_id", code: "not_found", message: expect.stringContaining("archived") }),
    // Slack hides a private channel from a bot that is not in it: to the app it is a channel that does not exist.
    expect.objectContaining({ path: "routes.3.channel_id", code: "not_found", message: expect.stringContaining("invite the bot") }),
  ]);
  expect((await stack.gw.http.get("/api/operator/routes").set(a.auth)).body.routes).toEqual([]);
});

test("a public channel the bot is not in is joined at save; a Slack that cannot answer does not block the save", async () => {
  const a = await connectedAccount(stack, slack, channel("alerts"));
  const open = channel("open", { botMember: false });
  expect((await putRoutes(a, [rule("Open", open.id)])).status).toBe(200);
  expect(slack.channel(open.id)!.botMember).toBe(true);

  const later = channel("later");
  slack.inject("conversations.info", { status: 503 });
  const saved = await putRoutes(a, [rule("Later", later.id)]);
  expect(saved.status).toBe(200);
  expect(saved.body.routes).toEqual([expect.objectContaining({ name: "Later", channel_id: later.id })]);
});

test("a rule's channel archived after the save: the card goes to the default channel, the item and the account say why", async () => {
  const a = await connectedAccount(stack, slack, channel("alerts"));
  const desk = channel("desk");
  const saved = await putRoutes(a, [rule("Finance desk", desk.id)]);
  expect(saved.status).toBe(200);
  const routeId = saved.body.routes[0].id;
  slack.archive(desk.id);

  const opened = await publishAndWait(stack, a, event(a.accountId, { category: "finance/markets", severity: "high", trend_name: "Rate cut" }));
  const it = await posted(stack, a, opened.id);
  expect(it).toMatchObject({ route_id: routeId, chat: { provider: "slack", channel_id: a.channelId } });
  expect(slack.messages(a.channelId)).toHaveLength(1);
  expect(slack.messages(desk.id)).toEqual([]);
  const failed = (await item(stack.gw, a, it.id)).history.find((h: any) => h.action === "route_failed");
  expect(failed).toMatchObject({ actor: "system", data: { route_id: routeId, channel_id: desk.id, error: expect.stringContaining("is_archived") } });

  const events = await waitFor(async () => {
    const list = (await stack.gw.http.get("/api/events").set(a.auth)).body.data as any[];
    return list.filter((e) => e.type === "operator.route_failed").length ? list.filter((e) => e.type === "operator.route_failed") : null;
  });
  expect(events).toEqual([expect.objectContaining({
    data: expect.objectContaining({ item_id: it.id, route_id: routeId, route: "Finance desk", channel_id: desk.id, posted_to: { provider: "slack", channel_id: a.channelId } }),
  })]);
  expect(catalogProblemsOf(events!)).toEqual([]); // exactly the catalog's operator.route_failed
});
