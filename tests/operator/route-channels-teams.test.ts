// Routing rules on Microsoft Teams fail loud as on Slack: a rule's channel is checked with Graph when the rules are
// saved (422 naming the rule's channel field), and an item whose rule's channel was deleted since goes to the default
// channel (the Bot Connector answers 404 ConversationNotFound), with `route_failed` in its history and the account
// event operator.route_failed.
import { waitFor } from "../helpers/config.ts";
import type { Stack } from "../helpers/stack.ts";
import type { TeamsServer } from "../peers/teams-server.ts";
import { event, item, posted, publishAndWait, teamsAccount, useChatStacks } from "./helpers.ts";

let ms: TeamsServer;
let stack: Stack;
useChatStacks((c) => ({ ms, stack } = c));

const rule = (name: string, channelId: string) => ({ name, match: { categories: ["finance"] }, provider: "teams", channel_id: channelId });
const putRoutes = (a: { auth: any }, routes: object[]) => stack.gw.http.put("/api/operator/routes").set(a.auth).send({ routes });

test("a Teams channel Graph does not know is refused at save, naming the rule; nothing is saved", async () => {
  const a = await teamsAccount(stack, ms, "Routes");
  const res = await putRoutes(a, [rule("Nowhere", `${a.teamId}/19:nosuchchannel@thread.tacv2`)]);
  expect(res.status).toBe(422);
  expect(res.body.errors).toEqual([expect.objectContaining({ path: "routes.0.channel_id", code: "not_found", message: expect.stringContaining('rule "Nowhere"') })]);
  expect((await stack.gw.http.get("/api/operator/routes").set(a.auth)).body.routes).toEqual([]);
});

test("a rule's Teams channel deleted after the save: the card goes to the default channel, the item and the account say why", async () => {
  const a = await teamsAccount(stack, ms, "Routes");
  const desk = ms.addChannel(a.teamId, { displayName: "Finance desk" });
  const deskId = `${a.teamId}/${desk.id}`;
  const saved = await putRoutes(a, [rule("Finance desk", deskId)]);
  expect(saved.status).toBe(200);
  const routeId = saved.body.routes[0].id;
  const team = ms.teams.get(a.teamId)!;
  team.channels.splice(team.channels.findIndex((c) => c.id === desk.id), 1);

  const opened = await publishAndWait(stack, a, event(a.accountId, { category: "finance/markets", severity: "high", trend_name: "Rate cut" }));
  const it = await posted(stack, a, opened.id);
  expect(it).toMatchObject({ route_id: routeId, chat: { provider: "teams" } });
  const threads = [...ms.threads.values()];
  expect(threads.filter((t) => JSON.stringify(t.activity).includes(it.id)).map((t) => t.channelId)).toEqual([a.channelId.split("/")[1]]);
  const failed = (await item(stack.gw, a, it.id)).history.find((h: any) => h.action === "route_failed");
  expect(failed).toMatchObject({ actor: "system", data: { route_id: routeId, channel_id: deskId } });

  const events = await waitFor(async () => {
    const list = ((await stack.gw.http.get("/api/events").set(a.auth)).body.data as any[]).filter((e) => e.type === "operator.route_failed");
    return list.length ? list : null;
  });
  expect(events).toEqual([expect.objectContaining({
    data: expect.objectContaining({ item_id: it.id, route_id: routeId, channel_id: deskId, posted_to: { provider: "teams", channel_id: a.channelId } }),
  })]);
});
