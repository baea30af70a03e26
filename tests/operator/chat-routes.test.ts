// The chat connector's routes against the Slack stand-in (which checks every call against Slack's API description):
// channels page by page, saving the alerts channel (joined when public, refused when private and the bot is not in
// it), and the settings with their defaults.
import { startSlackServer, type SlackServer } from "../peers/slack-server.ts";
import type { Stack } from "../helpers/stack.ts";
import { connectChat, startChatStack } from "./helpers.ts";

const BASE = "/api/integrations/chat";
let slack: SlackServer;
let stack: Stack;
beforeAll(async () => {
  slack = await startSlackServer();
  stack = await startChatStack(slack, {}, 0);
});
afterAll(async () => { await stack.close(); await slack.close(); });
beforeEach(() => slack.reset());
afterEach(() => slack.assertConforming());

async function connected() {
  const a = await stack.gw.account();
  await connectChat(stack.gw, a);
  return a;
}

test("before connecting, every chat route answers 409 not_connected and says where to authorize", async () => {
  const a = await stack.gw.account();
  for (const r of [
    stack.gw.http.get(`${BASE}/channels`).set(a.auth),
    stack.gw.http.post(`${BASE}/save-channel`).set(a.auth).send({ channel_id: "C0ALERTS001" }),
    stack.gw.http.put(`${BASE}/settings`).set(a.auth).send({}),
    stack.gw.http.get(`${BASE}/settings`).set(a.auth),
  ]) {
    const res = await r;
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: "not_connected", detail: expect.stringContaining(`${BASE}/auth`) });
  }
  expect(slack.calls()).toEqual([]);
});

test("channels: public and private ones the app sees, with membership, page by page in Slack's cursor", async () => {
  slack.addChannel({ id: "C0GENERAL01", name: "general", botMember: true });
  slack.addChannel({ id: "C0RANDOM001", name: "random" });
  slack.addChannel({ id: "C0PRIVATE01", name: "war-room", isPrivate: true, botMember: true });
  slack.addChannel({ id: "C0ARCHIVE01", name: "old", isArchived: true });
  slack.addChannel({ id: "C0HIDDEN001", name: "secret", isPrivate: true }); // private without the bot: invisible
  const a = await connected();

  const seen: any[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res: { status: number; body: any } = await stack.gw.http.get(`${BASE}/channels`).query({ limit: 2, ...(cursor ? { cursor } : {}) }).set(a.auth);
    expect(res.status).toBe(200);
    expect(res.body.data.length).toBeLessThanOrEqual(2);
    seen.push(...res.body.data);
    cursor = res.body.next_cursor;
    pages++;
  } while (cursor && pages < 10);
  expect(pages).toBe(2);
  expect(seen).toEqual([
    { id: "C0GENERAL01", name: "general", is_private: false, is_member: true },
    { id: "C0RANDOM001", name: "random", is_private: false, is_member: false },
    { id: "C0PRIVATE01", name: "war-room", is_private: true, is_member: true },
  ]);
  expect(slack.calls("conversations.list").map((c) => [c.params.limit, c.params.types, c.params.exclude_archived])).toEqual([
    ["2", "public_channel,private_channel", "true"], ["2", "public_channel,private_channel", "true"],
  ]);

  expect((await stack.gw.http.get(`${BASE}/channels?limit=0`).set(a.auth)).status).toBe(422);
  expect((await stack.gw.http.get(`${BASE}/channels?limit=201`).set(a.auth)).status).toBe(422);
});

test("save-channel: a public channel the bot is not in is joined; a private one is refused with how to invite the bot", async () => {
  slack.addChannel({ id: "C0RANDOM001", name: "random" });
  slack.addChannel({ id: "C0PRIVATE01", name: "war-room", isPrivate: true, botMember: true });
  const a = await connected();

  const pub = await stack.gw.http.post(`${BASE}/save-channel`).set(a.auth).send({ channel_id: "C0RANDOM001" });
  expect(pub.status).toBe(200);
  expect(pub.body).toEqual({ channel_id: "C0RANDOM001", channel_name: "random", is_private: false, joined: true });
  expect(slack.channel("C0RANDOM001")!.botMember).toBe(true);
  expect(slack.calls("conversations.join")).toHaveLength(1);

  // A private channel the bot is not in: Slack hides it from the bot (channel_not_found), so the answer says to
  // invite the bot; once invited, it is saved (not joined: the bot was invited).
  slack.setMember("C0PRIVATE01", false);
  const hidden = await stack.gw.http.post(`${BASE}/save-channel`).set(a.auth).send({ channel_id: "C0PRIVATE01" });
  expect(hidden.status).toBe(422);
  expect(hidden.body.errors[0]).toMatchObject({ location: "body", path: "channel_id" });
  expect(hidden.body.detail).toMatch(/\/invite @/);
  expect(slack.calls("conversations.join")).toHaveLength(1); // never tried to join a private channel
  slack.setMember("C0PRIVATE01", true);
  const priv = await stack.gw.http.post(`${BASE}/save-channel`).set(a.auth).send({ channel_id: "C0PRIVATE01" });
  expect(priv.body).toEqual({ channel_id: "C0PRIVATE01", channel_name: "war-room", is_private: true, joined: false });

  const unknown = await stack.gw.http.post(`${BASE}/save-channel`).set(a.auth).send({ channel_id: "C0NOSUCH001" });
  expect(unknown.status).toBe(422);
  expect(unknown.body).toMatchObject({ code: "validation_failed", errors: [{ location: "body", path: "channel_id" }] });
  expect((await stack.gw.http.post(`${BASE}/save-channel`).set(a.auth).send({ channel_id: "not a channel" })).status).toBe(422);

  // The saved channel is the last one that was accepted.
  const conn = await stack.gw.deps.db.connection.findFirstOrThrow({ where: { accountId: a.accountId } });
  expect(conn.selection).toEqual({ channel_id: "C0PRIVATE01", channel_name: "war-room", is_private: true });
});

test("settings: defaults until saved; a partial body takes the defaults for the rest; bad values are refused", async () => {
  const a = await connected();
  const defaults = { min_severity: "high", categories: [], velocity_alerts: true, critical_mention: null, renotify_minutes: null, trigger_window_minutes: 0, recovery_window_minutes: 0 };
  expect((await stack.gw.http.get(`${BASE}/settings`).set(a.auth)).body).toEqual(defaults);

  const put = await stack.gw.http.put(`${BASE}/settings`).set(a.auth).send({ min_severity: "critical", critical_mention: "<!here>" });
  expect(put.status).toBe(200);
  expect(put.body).toEqual({ ...defaults, min_severity: "critical", critical_mention: "<!here>" });
  expect((await stack.gw.http.get(`${BASE}/settings`).set(a.auth)).body).toEqual(put.body);

  const bad = await stack.gw.http.put(`${BASE}/settings`).set(a.auth).send({ min_severity: "extreme", critical_mention: "@everyone", categories: ["tech/"] });
  expect(bad.status).toBe(422);
  expect(bad.body.errors.map((e: any) => e.path).sort()).toEqual(["categories.0", "critical_mention", "min_severity"]);
  expect((await stack.gw.http.get(`${BASE}/settings`).set(a.auth)).body).toEqual(put.body);
});

test("settings: sensitivity is the webhook subscriptions' shorthand for min_severity (normal = medium and up)", async () => {
  const a = await connected();
  const put = await stack.gw.http.put(`${BASE}/settings`).set(a.auth).send({ sensitivity: "normal" });
  expect(put.status).toBe(200);
  expect(put.body).toMatchObject({ min_severity: "medium" });
  expect(put.body).not.toHaveProperty("sensitivity");
  expect((await stack.gw.http.put(`${BASE}/settings`).set(a.auth).send({ sensitivity: "high" })).body.min_severity).toBe("low");
  const bad = await stack.gw.http.put(`${BASE}/settings`).set(a.auth).send({ sensitivity: "max" });
  expect([bad.status, bad.body.errors.map((e: any) => e.path)]).toEqual([422, ["sensitivity"]]);
});

test("credentials Slack no longer accepts: 409 and the connection is marked needs_reauth", async () => {
  const a = await connected();
  slack.inject("conversations.list", { error: "token_revoked" });
  const res = await stack.gw.http.get(`${BASE}/channels`).set(a.auth);
  expect(res.status).toBe(409);
  expect(res.body.code).toBe("not_connected");
  expect((await stack.gw.http.get(`${BASE}/connection`).set(a.auth)).body.status).toBe("needs_reauth");
});
