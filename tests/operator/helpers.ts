import { QUEUES, type TrendEvent } from "@trendgate/contracts";
import { signSlackRequest } from "../../packages/connectors/chat/src/slack/interactions.ts";
import { waitFor } from "../helpers/config.ts";
import type { TestGateway } from "../helpers/gateway.ts";
import { startStack, trendEvent, type Stack } from "../helpers/stack.ts";
import { startSlackServer, type SlackServer } from "../peers/slack-server.ts";
import { startTeamsServer, type TeamsServer } from "../peers/teams-server.ts";

// The operator queue's tests run the whole path: a gateway and workers (tests/helpers/stack.ts) whose chat provider
// is the local Slack stand-in (tests/peers/slack-server.ts), connected through the real browser OAuth flow.

export const SIGNING_SECRET = "operator-tests-signing-secret-0123456789";
export const INTERACTIVITY = "/api/integrations/chat/interactivity";

/** Gateway + workers pointed at the Slack peer: fast outbox retries, no post pacing unless asked. */
export function startChatStack(slack: SlackServer, env: Record<string, string> = {}, workers = 1): Promise<Stack> {
  return startStack({
    SLACK_CLIENT_ID: slack.app.clientId, SLACK_CLIENT_SECRET: slack.app.clientSecret, SLACK_API_URL: slack.url,
    SLACK_AUTHORIZE_URL: slack.authorizeUrl, SLACK_SIGNING_SECRET: SIGNING_SECRET,
    OUTBOX_RETRY_SCHEDULE_SECONDS: "1,1", CHAT_POST_INTERVAL_MS: "0", ...env,
  }, workers);
}

/**
 * A test file's Slack stand-in and chat stack: started before its tests, stopped after, and every Slack request
 * checked against Slack's API description after each test. `set` receives them once started.
 */
export function useChatStack(set: (c: { slack: SlackServer; stack: Stack }) => void, env: Record<string, string> = {}): void {
  let c: { slack: SlackServer; stack: Stack } | null = null;
  beforeAll(async () => {
    const slack = await startSlackServer();
    c = { slack, stack: await startChatStack(slack, env) };
    set(c);
  });
  afterAll(async () => { await c?.stack.close(); await c?.slack.close(); });
  afterEach(() => c?.slack.assertConforming());
}

export type Account = Awaited<ReturnType<TestGateway["account"]>>;

/** Connects the account to the Slack peer as a user would: auth URL, the browser's approval, the callback. */
export async function connectChat(gw: TestGateway, a: Account): Promise<void> {
  const start = await gw.http.get("/api/integrations/chat/auth").set(a.auth);
  if (start.status !== 200) throw new Error(`auth: ${start.status} ${JSON.stringify(start.body)}`);
  const approved = await fetch(start.body.authorization_url, { redirect: "manual" });
  const back = new URL(approved.headers.get("location")!);
  const cb = await gw.http.get(`${back.pathname}${back.search}`);
  if (cb.status !== 200) throw new Error(`callback: ${cb.status} ${cb.text}`);
}

/** A connected account with a saved (public, bot-member) alerts channel. */
export async function connectedAccount(stack: Stack, slack: SlackServer, channel = { id: "C0ALERTS001", name: "alerts" }): Promise<Account & { channelId: string }> {
  const a = await stack.gw.account();
  await connectChat(stack.gw, a);
  if (!slack.channel(channel.id)) slack.addChannel({ ...channel, botMember: true });
  const saved = await stack.gw.http.post("/api/integrations/chat/save-channel").set(a.auth).send({ channel_id: channel.id });
  if (saved.status !== 200) throw new Error(`save-channel: ${saved.status} ${JSON.stringify(saved.body)}`);
  return { ...a, channelId: channel.id };
}

/**
 * A test file's Slack and Teams stand-ins and one chat stack pointed at both, started before its tests and stopped
 * after. `set` receives them once started.
 */
export function useChatStacks(set: (c: { slack: SlackServer; ms: TeamsServer; stack: Stack }) => void): void {
  let c: { slack: SlackServer; ms: TeamsServer; stack: Stack } | null = null;
  beforeAll(async () => {
    const slack = await startSlackServer();
    const ms = await startTeamsServer();
    c = { slack, ms, stack: await startChatStack(slack, ms.env) };
    set(c);
  });
  afterAll(async () => { await c?.stack.close(); await c?.slack.close(); await c?.ms.close(); });
}

/**
 * An account connected to the Teams stand-in through the tenant's consent page, with a new installed team and its
 * "Alerts" channel saved as the alerts channel (`channelId`: "<team id>/<channel id>", as the API names it).
 */
export async function teamsAccount(stack: Stack, ms: TeamsServer, teamName = "Marketing"): Promise<Account & { channelId: string; teamId: string }> {
  const base = "/api/integrations/chat/teams";
  const a = await stack.gw.account();
  const start = await stack.gw.http.get(`${base}/auth`).set(a.auth);
  if (start.status !== 200) throw new Error(`teams auth: ${start.status} ${JSON.stringify(start.body)}`);
  const back = await ms.oauth.browse(start.body.authorization_url);
  const cb = await stack.gw.http.get(`${back.pathname}${back.search}`);
  if (cb.status !== 200) throw new Error(`teams callback: ${cb.status} ${cb.text}`);
  const team = ms.addTeam({ displayName: `${teamName} ${a.accountId.slice(-4)}`, installed: true });
  const channelId = `${team.id}/${ms.addChannel(team.id, { displayName: "Alerts" }).id}`;
  const saved = await stack.gw.http.post(`${base}/save-channel`).set(a.auth).send({ channel_id: channelId });
  if (saved.status !== 200) throw new Error(`teams save-channel: ${saved.status} ${JSON.stringify(saved.body)}`);
  return { ...a, channelId, teamId: team.id };
}

let trendN = 0;
/** A trend event of a trend of its own (unless trend_id is given). */
export const event = (accountId: string, over: Partial<TrendEvent> = {}): TrendEvent =>
  trendEvent(accountId, { trend_id: `trend_op_${++trendN}_${Date.now()}`, trend_name: `Topic ${trendN}`, ...over });

export const items = async (gw: TestGateway, a: Account, q = "") => (await gw.http.get(`/api/operator/items${q}`).set(a.auth)).body;
export const item = async (gw: TestGateway, a: Account, id: string) => (await gw.http.get(`/api/operator/items/${id}`).set(a.auth)).body;

/** Publishes the event and waits for its item (the trend's) to show it. */
export async function publishAndWait(stack: Stack, a: Account, e: TrendEvent) {
  await stack.publish(e);
  return waitFor(async () => {
    const row = await stack.gw.deps.db.operatorItem.findFirst({ where: { accountId: a.accountId, trendId: e.trend_id } });
    if (!row) return null;
    const seen = await stack.gw.deps.db.operatorItemEvent.count({ where: { itemId: row.id, data: { path: ["event_id"], equals: e.id } } });
    return seen ? item(stack.gw, a, row.id) : null;
  });
}

/** Waits until the trend-events queue has no job left (an event that makes no item leaves nothing else to wait on). */
export async function eventsDrained(stack: Stack): Promise<void> {
  const q = stack.gw.deps.queues.get(QUEUES.trendEvents);
  await waitFor(async () => (await q.getJobCountByTypes("waiting", "active", "delayed")) === 0);
}

/** Waits until the item's card is posted and returns where. */
export const posted = (stack: Stack, a: Account, id: string) =>
  waitFor(async () => { const it = await item(stack.gw, a, id); return it.chat.message_ts ? it : null; });

/** A signed interactivity request, as Slack sends it. */
export function pressButton(gw: TestGateway, body: string, opts: { secret?: string; at?: Date } = {}) {
  const headers = signSlackRequest(body, opts.secret ?? SIGNING_SECRET, opts.at);
  return gw.http.post(INTERACTIVITY).set(headers).set("content-type", "application/x-www-form-urlencoded").send(body);
}

/** The pending and finished chat messages about an item (the outbox rows). */
export const chatMessagesOf = (gw: TestGateway, itemId: string) =>
  gw.deps.db.outboxMessage.findMany({ where: { subjectId: itemId, queue: QUEUES.chatMessages }, orderBy: { id: "asc" } });
