// An ads plan approved from its operator card: the preview's plan opens an item whose Slack card lists the changes
// and an approve button bound to the plan's hash; a press applies it once, through the apply path, records who
// approved and resolves the item; a second press (or a press on a card of an older plan) applies nothing.
import { waitFor } from "../helpers/config.ts";
import type { Stack } from "../helpers/stack.ts";
import { addTrend, googleConnected } from "../ads/kit.ts";
import { startGoogleAdsServer, type GoogleAdsServer } from "../peers/google-ads-server.ts";
import { startSlackServer, type SlackServer } from "../peers/slack-server.ts";
import { connectChat, item, posted, pressButton, startChatStack } from "./helpers.ts";

const BASE = "/api/integrations/ads/google_ads";
let slack: SlackServer;
let google: GoogleAdsServer;
let stack: Stack;
beforeAll(async () => {
  slack = await startSlackServer();
  google = await startGoogleAdsServer();
  stack = await startChatStack(slack, {
    OUTBOUND_ALLOWLIST: "127.0.0.1", GOOGLE_ADS_CLIENT_ID: "cid", GOOGLE_ADS_CLIENT_SECRET: "secret", GOOGLE_ADS_API_URL: google.url,
  });
});
afterAll(async () => { await stack.close(); await slack.close(); await google.close(); });
afterEach(() => slack.assertConforming());

/** An account with Google Ads and Slack, a previewed plan adding the trends' keywords, and its approval item's posted card. */
async function approvalCard(trends: string[], channelId: string) {
  const { gw } = stack;
  const a = await googleConnected(gw, google);
  await connectChat(gw, a);
  slack.addChannel({ id: channelId, name: `ads-${channelId}`, botMember: true });
  expect((await gw.http.post("/api/integrations/chat/save-channel").set(a.auth).send({ channel_id: channelId })).status).toBe(200);
  const campaign = google.addCampaign({ customerId: a.customer.id, name: "Search" });
  const group = google.addAdGroup({ campaignId: campaign.id, name: "AI" });
  for (const name of trends) await addTrend(gw, a.accountId, name);
  expect((await gw.http.put(`${BASE}/selection`).set(a.auth).send({ trend_category: "tech", account_id: a.customer.id })).status).toBe(200);
  expect((await gw.http.put(`${BASE}/mappings`).set(a.auth).send({ entities: [{ id: group.id, field: "keywords" }] })).status).toBe(200);
  const plan = (await gw.http.post(`${BASE}/preview`).set(a.auth)).body;
  const asked = await gw.http.post(`${BASE}/plans/${plan.id}/request-approval`).set(a.auth);
  expect(asked.status).toBe(201);
  expect(asked.body).toEqual({ plan_id: plan.id, plan_hash: plan.plan_hash, item_id: expect.stringMatching(/^opi_/), created: true });
  const again = await gw.http.post(`${BASE}/plans/${plan.id}/request-approval`).set(a.auth);
  expect([again.status, again.body.item_id, again.body.created]).toEqual([200, asked.body.item_id, false]);
  const it = await posted(stack, a, asked.body.item_id);
  return { a, group, plan, it };
}

const approveBody = (value: object, user = "U0APPROVER") => `payload=${encodeURIComponent(JSON.stringify({
  type: "block_actions", user: { id: user, username: "ada", team_id: "T0TESTTEAM" }, team: { id: "T0TESTTEAM" },
  actions: [{ action_id: "ads:approve", value: JSON.stringify(value) }],
}))}`;

test("a card approval applies the plan once, through the apply path, and records who approved", async () => {
  const { a, group, plan, it } = await approvalCard(["AI agents", "Smart rings"], "C0ADSAPPR01");
  expect(it).toMatchObject({ source: "ads_approval", state: "open", severity: "high" });
  const card = slack.message(it.chat.channel_id, it.chat.message_ts)!;
  const blocks = JSON.stringify(card.blocks);
  expect(blocks).toContain(`+ ai agents (keywords of ${group.id})`);
  expect(blocks).toContain("ads:approve");
  expect(blocks).toContain(plan.plan_hash);

  const team = (await stack.gw.deps.db.connection.findFirstOrThrow({ where: { accountId: a.accountId, provider: "slack" } })).externalAccount as { team_id: string };
  const body = approveBody({ item_id: it.id, plan_id: plan.id, plan_hash: plan.plan_hash }).replaceAll("T0TESTTEAM", team.team_id);
  const press = await pressButton(stack.gw, body);
  expect(press.status).toBe(200);
  expect(press.body.text).toBeUndefined(); // applied: no message for the presser

  const done = await waitFor(async () => { const p = (await stack.gw.http.get(`${BASE}/plans/${plan.id}`).set(a.auth)).body; return p.status === "applied" ? p : null; });
  expect(done.approved_by).toBe(`chat:${team.team_id}/U0APPROVER`);
  expect(google.keywordsOf(group.id).map((k) => k.text).sort()).toEqual(["ai agents", "smart rings"]);
  const resolved = await item(stack.gw, a, it.id);
  expect(resolved).toMatchObject({ state: "resolved", resolved_by: `chat:${team.team_id}/U0APPROVER` });
  expect(resolved.history.find((h: any) => h.action === "resolve").data).toMatchObject({ approved_plan: plan.id, run_id: done.run_id, actor_name: "ada" });
  // The card says so and offers no approve button any more.
  await waitFor(async () => JSON.stringify(slack.message(it.chat.channel_id, it.chat.message_ts)!.blocks).includes("Plan applied"));
  expect(JSON.stringify(slack.message(it.chat.channel_id, it.chat.message_ts)!.blocks)).not.toContain("ads:approve");

  // A second press (another person, the old card) applies nothing and says why.
  const second = await pressButton(stack.gw, approveBody({ item_id: it.id, plan_id: plan.id, plan_hash: plan.plan_hash }, "U0SECOND01").replaceAll("T0TESTTEAM", team.team_id));
  expect(second.status).toBe(200);
  expect(second.body.text).toMatch(/^Nothing was applied: This plan is applied/);
  const writes = google.requests.filter((r) => r.path.endsWith(":mutate") && !r.body.validateOnly && r.body.operations.some((o: { create?: unknown }) => o.create));
  expect(writes).toHaveLength(1);
  expect((await stack.gw.http.get(`${BASE}/plans/${plan.id}`).set(a.auth)).body.approved_by).toBe(`chat:${team.team_id}/U0APPROVER`);
});

test("a press bound to another hash (an older card of the plan) applies nothing", async () => {
  const { a, plan, it } = await approvalCard(["Foldable phones"], "C0ADSAPPR02");
  const team = (await stack.gw.deps.db.connection.findFirstOrThrow({ where: { accountId: a.accountId, provider: "slack" } })).externalAccount as { team_id: string };
  const press = await pressButton(stack.gw, approveBody({ item_id: it.id, plan_id: plan.id, plan_hash: "0".repeat(64) }).replaceAll("T0TESTTEAM", team.team_id));
  expect(press.status).toBe(200);
  expect(press.body.text).toMatch(/older version of the plan/);
  expect((await stack.gw.http.get(`${BASE}/plans/${plan.id}`).set(a.auth)).body).toMatchObject({ status: "previewed", approved_by: null });
  expect((await item(stack.gw, a, it.id)).state).toBe("open");
});

test("asking for approval refuses what an apply would refuse (expired, empty, missing), with the apply's own reasons, and opens no item", async () => {
  const { gw } = stack;
  const { a } = await approvalCard(["Robot vacuums"], "C0ADSAPPR03");
  const ask = (id: string) => gw.http.post(`${BASE}/plans/${id}/request-approval`).set(a.auth);
  const db = gw.deps.db;
  const items = () => db.operatorItem.count({ where: { accountId: a.accountId } });
  const before = await items();

  // Expired, then empty: each refused as POST …/apply refuses it.
  const other = (await gw.http.post(`${BASE}/preview`).set(a.auth)).body;
  await db.adsPlan.update({ where: { id: other.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
  const expired = await ask(other.id);
  const applyExpired = await gw.http.post(`${BASE}/apply`).set(a.auth).send({ plan_id: other.id });
  expect([expired.status, expired.body.code]).toEqual([409, "conflict"]);
  expect(expired.body.detail).toBe(applyExpired.body.detail);
  expect(expired.body.detail).toMatch(/expired/);

  const empty = (await gw.http.post(`${BASE}/preview`).set(a.auth)).body;
  await db.adsPlan.update({ where: { id: empty.id }, data: { changes: [] } });
  const refused = await ask(empty.id);
  expect([refused.status, refused.body.detail]).toEqual([409, "This plan has no changes to apply"]);
  expect((await ask("adp_missing")).status).toBe(404);
  expect(await items()).toBe(before);
});
