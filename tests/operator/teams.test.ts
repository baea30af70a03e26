// Microsoft Teams as the operator queue's chat, end to end: connected through the tenant's OAuth, channels listed
// and saved at /api/integrations/chat/teams/..., cards posted through the Bot Framework (the stand-in,
// tests/peers/teams-server.ts), and a card's Action.Execute acknowledging its item under the same version rule as
// Slack's buttons: a stale card changes nothing, tells the presser, and is refreshed.
import { waitFor } from "../helpers/config.ts";
import { startStack, type Stack } from "../helpers/stack.ts";
import { startTeamsServer, type TeamsServer } from "../peers/teams-server.ts";
import { event, item, posted, publishAndWait, type Account } from "./helpers.ts";

const BASE = "/api/integrations/chat/teams";
let ms: TeamsServer;
let stack: Stack;
beforeAll(async () => {
  ms = await startTeamsServer();
  stack = await startStack({ ...ms.env, OUTBOX_RETRY_SCHEDULE_SECONDS: "1,1", CHAT_POST_INTERVAL_MS: "0" });
});
afterAll(async () => { await stack.close(); await ms.close(); });

/** Every Action.Execute of a card (actions sit at its root and in action sets). */
function actionsOf(node: unknown): { verb: string; data: Record<string, unknown>; title: string }[] {
  if (Array.isArray(node)) return node.flatMap(actionsOf);
  if (!node || typeof node !== "object") return [];
  const o = node as Record<string, unknown>;
  return [...(o.type === "Action.Execute" ? [o as never] : []), ...Object.values(o).flatMap(actionsOf)];
}
const press = async (activity: Record<string, unknown>) => {
  const signed = await ms.signedInvoke(activity);
  return stack.gw.http.post(`${BASE}/interactivity`).set(signed.headers).send(signed.body);
};

async function teamsAccount(): Promise<Account & { channelId: string }> {
  const a = await stack.gw.account();
  const start = await stack.gw.http.get(`${BASE}/auth`).set(a.auth);
  expect(start.status).toBe(200);
  const back = await ms.oauth.browse(start.body.authorization_url);
  const cb = await stack.gw.http.get(`${back.pathname}${back.search}`);
  expect(cb.status).toBe(200);
  const team = ms.addTeam({ displayName: `Marketing ${a.accountId.slice(-4)}`, installed: true });
  const channel = ms.addChannel(team.id, { displayName: "Alerts" });
  const channelId = `${team.id}/${channel.id}`;
  const listed = await stack.gw.http.get(`${BASE}/channels`).set(a.auth);
  expect(listed.status).toBe(200);
  expect(listed.body.data).toContainEqual({ id: channelId, name: expect.stringContaining("Alerts"), is_private: false, is_member: true });
  const saved = await stack.gw.http.post(`${BASE}/save-channel`).set(a.auth).send({ channel_id: channelId });
  expect(saved.status).toBe(200);
  return { ...a, channelId };
}

test("a Teams card's action acknowledges its item with the same version rule as Slack", async () => {
  const a = await teamsAccount();
  const it = await posted(stack, a, (await publishAndWait(stack, a, event(a.accountId, { trend_name: "Heat pumps", severity: "high" }))).id);
  expect(it.chat.provider).toBe("teams");
  const thread = [...ms.threads.values()].find((t) => JSON.stringify(t.activity).includes(it.id))!;
  expect(thread.conversationId).toBe(it.chat.channel_id);
  expect(JSON.stringify(thread.activity)).toContain("Heat pumps");
  const ack = actionsOf(thread.activity).find((x) => x.verb.endsWith("acknowledge"))!;
  expect(ack.data).toMatchObject({ item_id: it.id, version: 1 });

  // The press acknowledges it, as the presser (the tenant's user), and answers with an invoke response.
  const first = await press(ms.invokeActivity({ action: ack, conversationId: thread.conversationId }));
  expect(first.status).toBe(200);
  expect(first.body).toMatchObject({ statusCode: 200, type: "application/vnd.microsoft.activity.message" });
  const acked = await item(stack.gw, a, it.id);
  expect(acked).toMatchObject({ state: "acknowledged", version: 2, acknowledged_by: `chat:${ms.tenant.id}/5e7c0a2d-1111-4b8e-9c3a-2f6d8e9a0b1c` });
  await waitFor(async () => ms.threads.get(thread.conversationId)!.edits.length >= 1);

  // The same (now stale) card pressed again: nothing changes, the presser is told, and the card is refreshed.
  const edits = ms.threads.get(thread.conversationId)!.edits.length;
  const stale = await press(ms.invokeActivity({ action: ack, conversationId: thread.conversationId }));
  expect(stale.status).toBe(200);
  expect(stale.body.value).toMatch(/changed meanwhile: it is now acknowledged/);
  expect((await item(stack.gw, a, it.id)).version).toBe(2);
  await waitFor(async () => ms.threads.get(thread.conversationId)!.edits.length > edits);

  // A press signed for another bot, or from another tenant, changes nothing.
  const resolve = actionsOf(ms.threads.get(thread.conversationId)!.edits.at(-1)).find((x) => x.verb.endsWith("resolve"))!;
  const forged = await ms.signedInvoke(ms.invokeActivity({ action: resolve, conversationId: thread.conversationId }), { aud: "another-bot" });
  expect((await stack.gw.http.post(`${BASE}/interactivity`).set(forged.headers).send(forged.body)).status).toBe(401);
  const elsewhere = await press(ms.invokeActivity({ action: resolve, conversationId: thread.conversationId, tenantId: "00000000-0000-4000-8000-000000000000" }));
  expect(elsewhere.body.value).toMatch(/not available in this workspace/);
  expect((await item(stack.gw, a, it.id)).state).toBe("acknowledged");
});

test("a channel whose team has not installed the app is refused with what to do", async () => {
  const a = await teamsAccount();
  const team = ms.addTeam({ displayName: "Sales", installed: false });
  const channel = ms.addChannel(team.id, { displayName: "General" });
  const res = await stack.gw.http.post(`${BASE}/save-channel`).set(a.auth).send({ channel_id: `${team.id}/${channel.id}` });
  expect(res.status).toBe(422);
  expect(res.body).toMatchObject({ code: "bot_not_in_channel", errors: [{ path: "channel_id" }] });
  expect(res.body.detail).toMatch(/install/i);
});
