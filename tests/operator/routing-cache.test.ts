// The fan-out caches an account's chat and workflow connections for TREND_ROUTING_CACHE_MS (for latency): a
// chat connected meanwhile gets the account's events once that time is up, not before, and never loses one after.
import type { Stack } from "../helpers/stack.ts";
import { startSlackServer, type SlackServer } from "../peers/slack-server.ts";
import { connectChat, event, eventsDrained, items, publishAndWait, startChatStack } from "./helpers.ts";

const TTL = 3000;
let slack: SlackServer;
let stack: Stack;
beforeAll(async () => {
  slack = await startSlackServer();
  stack = await startChatStack(slack, { TREND_ROUTING_CACHE_MS: String(TTL) });
});
afterAll(async () => { await stack.close(); await slack.close(); });

test("a chat connected after the account's events were routed gets its events within TREND_ROUTING_CACHE_MS", async () => {
  const a = await stack.gw.account();
  const t0 = Date.now();
  await stack.publish(event(a.accountId)); // routed with no chat connection: cached as such
  await eventsDrained(stack);
  const routed = Date.now(); // the cached routing is from between t0 and now
  expect((await items(stack.gw, a)).data).toHaveLength(0);

  slack.addChannel({ id: "C0ROUTECACHE", name: "alerts-cache", botMember: true });
  await connectChat(stack.gw, a);
  expect((await stack.gw.http.post("/api/integrations/chat/save-channel").set(a.auth).send({ channel_id: "C0ROUTECACHE" })).status).toBe(200);
  await stack.publish(event(a.accountId));
  await eventsDrained(stack);
  // Routed inside the cache time (when it was: on a slow machine it may not be), it still went by the old routing.
  if (Date.now() - t0 < TTL) expect((await items(stack.gw, a)).data).toHaveLength(0);

  await new Promise((r) => setTimeout(r, Math.max(0, routed + TTL + 100 - Date.now())));
  const later = event(a.accountId);
  const it = await publishAndWait(stack, a, later);
  expect(it).toMatchObject({ state: "open", trend_id: later.trend_id });
}, 30_000);
