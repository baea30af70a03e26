// The Slack chat connector through the official client (@slack/web-api) against a local server that speaks Slack's
// Web API and checks every request and response against Slack's own API description (tests/peers/slack-server.ts).
import { createServer as createHttpServer } from "node:http";
import { createServer } from "node:net";
import { oauthClientOf, ProviderError, type OAuthClientSettings } from "@trendgate/connector-core";
import { slack } from "../../packages/connectors/chat/src/slack/index.ts";
import { signSlackRequest } from "../../packages/connectors/chat/src/slack/interactions.ts";
import { SLACK_LIMITS } from "../../packages/connectors/chat/src/slack/blocks.ts";
import { SLACK_MAX_RESPONSE_BYTES } from "../../packages/connectors/chat/src/slack/web.ts";
import type { ChatMessageRef, OperatorCard } from "../../packages/connectors/chat/src/kind.ts";
import { blockKitProblems, startSlackServer, type SlackServer } from "../peers/slack-server.ts";
import { SlackSpec } from "../peers/slack-spec.ts";
import { operatorCardFixture } from "../helpers/chat-card.ts";

const REDIRECT = "https://trendgate.example.com/api/integrations/oauth/callback";
const SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5";

let peer: SlackServer;
let client: OAuthClientSettings;
const hooks = slack.manifest.auth.mode === "oauth2" ? slack.manifest.auth.hooks! : undefined!;

async function providerError(fn: () => Promise<unknown>): Promise<ProviderError> {
  try {
    await fn();
  } catch (e) {
    if (e instanceof ProviderError) return e;
    throw e;
  }
  throw new Error("expected a ProviderError");
}

/** The stand-in listens on loopback, which the SSRF guard refuses unless the configuration's allow-list names it. */
const ALLOW_LOOPBACK = { OUTBOUND_ALLOWLIST: "127.0.0.1" };
const chatWith = (accessToken: string, baseUrl = peer.url, env: Record<string, string> = ALLOW_LOOPBACK) => slack.client({ baseUrl, accessToken, env });

const card = operatorCardFixture;

const buttons = (blocks: any[] | null) => (blocks ?? []).filter((b) => b.type === "actions").flatMap((b) => b.elements);

beforeAll(async () => {
  peer = await startSlackServer();
  const env = { ...ALLOW_LOOPBACK, SLACK_CLIENT_ID: peer.app.clientId, SLACK_CLIENT_SECRET: peer.app.clientSecret, SLACK_API_URL: peer.url, SLACK_AUTHORIZE_URL: peer.authorizeUrl };
  const resolved = oauthClientOf(slack.manifest, env);
  if (!("client" in resolved)) throw new Error(`unresolved: ${resolved.missing}`);
  client = resolved.client;
});
afterAll(async () => { await peer.close(); });
beforeEach(() => {
  peer.reset();
  peer.addChannel({ id: "C0GENERAL01", name: "general", botMember: true });
  peer.addChannel({ id: "C0RANDOM001", name: "random" });
});
// Every request the connector made and every answer it got matched Slack's API description.
afterEach(() => peer.assertConforming());

describe("OAuth: oauth.v2.access, auth.revoke", () => {
  test("the browser step and the code exchange give the bot token, its scopes and the workspace", async () => {
    expect(client.authorizationUrl).toBe(peer.authorizeUrl);
    const auth = slack.manifest.auth.mode === "oauth2" ? slack.manifest.auth : null!;
    const url = new URL(client.authorizationUrl);
    url.search = new URLSearchParams({ client_id: client.clientId, scope: auth.scopes.join(auth.scopeSeparator), redirect_uri: REDIRECT, state: "st-1" }).toString();
    const res = await fetch(url, { redirect: "manual" });
    expect(res.status).toBe(302);
    const back = new URL(res.headers.get("location")!);
    expect(back.origin + back.pathname).toBe(REDIRECT);
    expect(back.searchParams.get("state")).toBe("st-1");

    const tokens = await hooks.exchangeCode!({ code: back.searchParams.get("code")!, redirectUri: REDIRECT, client });

    expect(tokens).toEqual({
      accessToken: expect.stringMatching(/^xoxb-/),
      refreshToken: undefined,
      expiresAt: undefined,
      scopes: ["channels:read", "groups:read", "chat:write", "channels:join"],
      tokenType: "bot",
      account: { team_id: peer.team.id, team_name: peer.team.name, enterprise_id: null, bot_user_id: peer.botUserId, app_id: peer.app.id },
    });
    // client_secret_post, no PKCE verifier; and the token works.
    const [call] = peer.calls("oauth.v2.access");
    expect(call.params).toEqual({ client_id: client.clientId, client_secret: client.clientSecret, code: back.searchParams.get("code"), redirect_uri: REDIRECT });
    expect((await chatWith(tokens.accessToken).channelInfo("C0GENERAL01")).isMember).toBe(true);
  });

  test("a code Slack refuses (unknown, or used twice) is unauthorized; a wrong redirect or client secret is a bad request", async () => {
    const bad = await providerError(() => hooks.exchangeCode!({ code: "not-a-code", redirectUri: REDIRECT, client }));
    expect(bad).toMatchObject({ kind: "unauthorized", detail: { providerCode: "invalid_code", status: 200 } });

    const code = peer.authorize({ redirectUri: REDIRECT });
    await hooks.exchangeCode!({ code, redirectUri: REDIRECT, client });
    const replay = await providerError(() => hooks.exchangeCode!({ code, redirectUri: REDIRECT, client }));
    expect(replay).toMatchObject({ kind: "unauthorized", detail: { providerCode: "invalid_code" } });

    const other = peer.authorize({ redirectUri: REDIRECT });
    expect(await providerError(() => hooks.exchangeCode!({ code: other, redirectUri: "https://elsewhere.example.com/cb", client })))
      .toMatchObject({ kind: "bad_request", detail: { providerCode: "bad_redirect_uri" } });
    expect(await providerError(() => hooks.exchangeCode!({ code: peer.authorize({ redirectUri: REDIRECT }), redirectUri: REDIRECT, client: { ...client, clientSecret: "wrong" } })))
      .toMatchObject({ kind: "bad_request", detail: { providerCode: "bad_client_secret" } });
  });

  test("with token rotation the exchange gives a refresh token and an expiry; a refresh replaces both, the old refresh token is then refused", async () => {
    peer.setRotation(true, 43_200);
    const before = Date.now();
    const first = await hooks.exchangeCode!({ code: peer.authorize({ redirectUri: REDIRECT }), redirectUri: REDIRECT, client });
    expect(first.refreshToken).toMatch(/^xoxe-1-/);
    expect(first.accessToken).toMatch(/^xoxe\.xoxb-/);
    expect(first.expiresAt!.getTime()).toBeGreaterThanOrEqual(before + 43_200_000);
    expect(first.expiresAt!.getTime()).toBeLessThanOrEqual(Date.now() + 43_200_000);

    const second = await hooks.refresh!({ refreshToken: first.refreshToken!, client });
    expect(second.accessToken).not.toBe(first.accessToken);
    expect(second.refreshToken).not.toBe(first.refreshToken);
    expect(second.account).toMatchObject({ team_id: peer.team.id, bot_user_id: peer.botUserId });
    expect(peer.calls("oauth.v2.access")[1].params).toEqual({ client_id: client.clientId, client_secret: client.clientSecret, grant_type: "refresh_token", refresh_token: first.refreshToken });
    expect((await chatWith(second.accessToken).channelInfo("C0GENERAL01")).id).toBe("C0GENERAL01");

    const reused = await providerError(() => hooks.refresh!({ refreshToken: first.refreshToken!, client }));
    expect(reused).toMatchObject({ kind: "unauthorized", detail: { providerCode: "invalid_refresh_token" } });
  });

  test("revoke makes the token unusable; revoking a token Slack no longer accepts still succeeds", async () => {
    const token = peer.issueToken();
    await hooks.revoke!({ tokens: { accessToken: token }, client });
    expect(peer.tokenState(token)).toBe("revoked");
    expect(await providerError(() => chatWith(token).listChannels({ limit: 10 })))
      .toMatchObject({ kind: "unauthorized", detail: { providerCode: "token_revoked" } });

    await expect(hooks.revoke!({ tokens: { accessToken: token }, client })).resolves.toBeUndefined();
    expect(peer.calls("auth.revoke")).toHaveLength(2);
  });
});

describe("channels: conversations.list, .info, .join", () => {
  test("every cursor page is collected; archived and invisible private channels are left out; membership is kept", async () => {
    peer.addChannel({ id: "C0ALERTS001", name: "alerts" });
    peer.addChannel({ id: "C0OPS000001", name: "ops", botMember: true });
    peer.addChannel({ id: "C0OLD000001", name: "old", isArchived: true });
    peer.addChannel({ id: "C0SECRET001", name: "secret-ops", isPrivate: true, botMember: true });
    peer.addChannel({ id: "C0HIDDEN001", name: "hidden", isPrivate: true });
    peer.setPageCap(2); // Slack may answer fewer than asked
    const token = peer.issueToken();
    const chat = chatWith(token);

    const seen = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await chat.listChannels({ cursor, limit: 200 });
      seen.push(...page.channels);
      cursor = page.nextCursor ?? undefined;
      pages += 1;
    } while (cursor);

    expect(pages).toBe(3);
    expect(seen).toEqual([
      { id: "C0GENERAL01", name: "general", isPrivate: false, isMember: true, isArchived: false },
      { id: "C0RANDOM001", name: "random", isPrivate: false, isMember: false, isArchived: false },
      { id: "C0ALERTS001", name: "alerts", isPrivate: false, isMember: false, isArchived: false },
      { id: "C0OPS000001", name: "ops", isPrivate: false, isMember: true, isArchived: false },
      { id: "C0SECRET001", name: "secret-ops", isPrivate: true, isMember: true, isArchived: false },
    ]);
    const calls = peer.calls("conversations.list");
    expect(calls.map((c) => c.params.cursor)).toEqual([undefined, expect.any(String), expect.any(String)]);
    expect(calls[0].params).toEqual({ types: "public_channel,private_channel", exclude_archived: "true", limit: "200" });
    expect(calls.every((c) => c.token === token)).toBe(true);
  });

  test("a public channel the bot is not in is joined; a private one is a bad request saying so", async () => {
    peer.addChannel({ id: "C0SECRET001", name: "secret-ops", isPrivate: true, botMember: true });
    const chat = chatWith(peer.issueToken());

    expect(await chat.channelInfo("C0RANDOM001")).toEqual({ id: "C0RANDOM001", name: "random", isPrivate: false, isMember: false, isArchived: false });
    await chat.join("C0RANDOM001");
    expect((await chat.channelInfo("C0RANDOM001")).isMember).toBe(true);
    await chat.join("C0RANDOM001"); // already in: Slack answers ok with a warning

    const priv = await providerError(() => chat.join("C0SECRET001"));
    expect(priv).toMatchObject({ kind: "bad_request", detail: { providerCode: "method_not_supported_for_channel_type" } });
  });

  test("a channel the bot cannot see (unknown, or private without the bot) is not found", async () => {
    peer.addChannel({ id: "C0HIDDEN001", name: "hidden", isPrivate: true });
    const chat = chatWith(peer.issueToken());
    for (const id of ["C0HIDDEN001", "C0NOPE00001"]) {
      expect(await providerError(() => chat.channelInfo(id))).toMatchObject({ kind: "not_found", detail: { providerCode: "channel_not_found" } });
    }
  });
});

describe("cards: chat.postMessage, chat.update", () => {
  test("a card is posted with Block Kit: summary, severity, velocity, briefing link, and buttons carrying the item id and version", async () => {
    const chat = chatWith(peer.issueToken());
    const ref = await chat.postCard("C0GENERAL01", card({ severity: "critical", mention: "<!here>", occurrences: 4 }));

    const [msg] = peer.messages("C0GENERAL01");
    expect(ref).toEqual({ channelId: "C0GENERAL01", ts: msg.ts });
    expect(msg.user).toBe(peer.botUserId);
    expect(msg.text).toMatch(/^<!here> Critical: Heat pumps/);
    const all = JSON.stringify(msg.blocks);
    for (const part of ["Heat pumps", "tripled in the last hour", "*Severity*\\nCritical", "*Velocity*\\n+3.25", "*Occurrences*\\n4", "energy/heating",
      "<https://app.trendgate.example.com/trends/tr_01kaq3m2b4c5d6e7f8g9h0jkmn|Open the briefing>", "<!here>", "*Open*"]) {
      expect(all).toContain(part);
    }
    expect(buttons(msg.blocks).map((b) => [b.action_id, b.text.text, JSON.parse(b.value)])).toEqual([
      ["operator:acknowledge", "Acknowledge", { item_id: "op_01kaq3m2b4c5d6e7f8g9h0jkmn", version: 1 }],
      ["operator:resolve", "Resolve", { item_id: "op_01kaq3m2b4c5d6e7f8g9h0jkmn", version: 1 }],
      ["operator:snooze", "Snooze 1 h", { item_id: "op_01kaq3m2b4c5d6e7f8g9h0jkmn", version: 1, snooze_minutes: 60 }],
      ["operator:mute", "Mute topic 24 h", { item_id: "op_01kaq3m2b4c5d6e7f8g9h0jkmn", version: 1 }],
    ]);
  });

  test("trend text cannot mention or link (escaped), and every text is cut to Slack's limits", async () => {
    const chat = chatWith(peer.issueToken());
    const title = `<!channel> & <@U0SOMEONE1> ${"very long title ".repeat(40)}`;
    await chat.postCard("C0GENERAL01", card({ title, summary: `<https://evil.example|click> ${"x".repeat(10_000)}`, category: `a/${"b".repeat(190)}` }));

    const [msg] = peer.messages("C0GENERAL01");
    expect(blockKitProblems(msg.blocks!)).toEqual([]);
    const header = msg.blocks!.find((b) => b.type === "header");
    const section = msg.blocks!.find((b) => b.type === "section");
    expect(header.text.text.length).toBeLessThanOrEqual(SLACK_LIMITS.headerText);
    expect(header.text.text.endsWith("…")).toBe(true);
    expect(section.text.text.length).toBeLessThanOrEqual(SLACK_LIMITS.sectionText);
    expect(section.text.text).toMatch(/^&lt;https:\/\/evil\.example\|click&gt; x+…\n<https:\/\/app\.trendgate/);
    expect(msg.text).toContain("&lt;!channel&gt; &amp; &lt;@U0SOMEONE1&gt;");
    expect(msg.text).not.toMatch(/<!channel>|<@U0SOMEONE1>/);
  });

  test("updating a card edits the same message: new state, who acted, the buttons of that state and the new version", async () => {
    const chat = chatWith(peer.issueToken());
    const ref = await chat.postCard("C0GENERAL01", card());

    await chat.updateCard(ref, card({ state: "acknowledged", version: 2, acknowledgedBy: "ada" }));
    let msg = peer.message("C0GENERAL01", ref.ts)!;
    expect(msg.edits).toHaveLength(1);
    expect(JSON.stringify(msg.blocks)).toContain("*Acknowledged* · acknowledged by ada");
    expect(buttons(msg.blocks).map((b) => b.action_id)).toEqual(["operator:resolve", "operator:snooze", "operator:mute"]);
    expect(buttons(msg.blocks).every((b) => JSON.parse(b.value).version === 2)).toBe(true);

    await chat.updateCard(ref, card({ state: "snoozed", version: 3, acknowledgedBy: "ada", snoozedUntil: new Date("2026-11-22T07:00:00Z") }));
    msg = peer.message("C0GENERAL01", ref.ts)!;
    expect(JSON.stringify(msg.blocks)).toContain("*Snoozed* until <!date^1795330800^{date_short_pretty} at {time}|2026-11-22 07:00 UTC>");
    expect(buttons(msg.blocks).map((b) => b.action_id)).toEqual(["operator:acknowledge", "operator:resolve", "operator:reopen", "operator:mute"]);

    await chat.updateCard(ref, card({ state: "resolved", version: 4, resolvedBy: "bob" }));
    msg = peer.message("C0GENERAL01", ref.ts)!;
    expect(JSON.stringify(msg.blocks)).toContain("resolved by bob");
    expect(buttons(msg.blocks).map((b) => b.action_id)).toEqual(["operator:reopen"]);
    expect(peer.messages("C0GENERAL01")).toHaveLength(1);
  });

  test("a re-notification is a reply in the card's thread", async () => {
    const chat = chatWith(peer.issueToken());
    const ref = await chat.postCard("C0GENERAL01", card({ severity: "critical" }));
    const reply = await chat.postReply(ref, "<!here> still unacknowledged after 15 minutes");
    const [, msg] = peer.messages("C0GENERAL01");
    expect(msg).toMatchObject({ ts: reply.ts, threadTs: ref.ts, text: "<!here> still unacknowledged after 15 minutes" });
  });
});

describe("errors: ok:false, HTTP 429 and failures, each mapped once", () => {
  test("posting where the bot is not a member is a channel that takes no post (not_found, code not_in_channel), and nothing is posted", async () => {
    const e = await providerError(() => chatWith(peer.issueToken()).postCard("C0RANDOM001", card()));
    expect(e).toMatchObject({ kind: "not_found", detail: { providerCode: "not_in_channel", status: 200 } });
    expect(e.retryable).toBe(false);
    expect(peer.messages("C0RANDOM001")).toEqual([]);
  });

  test("a token Slack does not know, or an expired one, is unauthorized", async () => {
    expect(await providerError(() => chatWith("xoxb-1-unknown").postCard("C0GENERAL01", card())))
      .toMatchObject({ kind: "unauthorized", detail: { providerCode: "invalid_auth" } });
    const token = peer.issueToken();
    peer.expireToken(token);
    expect(await providerError(() => chatWith(token).listChannels({ limit: 10 })))
      .toMatchObject({ kind: "unauthorized", detail: { providerCode: "token_expired" } });
  });

  test("HTTP 429 is rate_limited with Retry-After in ms, and the client does not retry by itself", async () => {
    const chat = chatWith(peer.issueToken());
    peer.inject("chat.postMessage", { status: 429, retryAfter: 7 });

    const e = await providerError(() => chat.postCard("C0GENERAL01", card()));
    expect(e).toMatchObject({ kind: "rate_limited", detail: { status: 429, retryAfterMs: 7000, providerCode: "ratelimited" } });
    expect(e.retryable).toBe(true);
    expect(peer.calls("chat.postMessage")).toHaveLength(1);
    expect(peer.messages("C0GENERAL01")).toEqual([]);

    await chat.postCard("C0GENERAL01", card()); // our queue's retry goes through
    expect(peer.messages("C0GENERAL01")).toHaveLength(1);
  });

  test("a 429 without a usable Retry-After is still rate_limited (the wait is then ours to choose)", async () => {
    peer.inject("conversations.list", { status: 429, retryAfter: null });
    const e = await providerError(() => chatWith(peer.issueToken()).listChannels({ limit: 10 }));
    expect(e.kind).toBe("rate_limited");
    expect(e.detail.retryAfterMs).toBeUndefined();
    expect(peer.calls("conversations.list")).toHaveLength(1);
  });

  test("updating a message that is gone is not found; one Slack will not edit is a bad request", async () => {
    const chat = chatWith(peer.issueToken());
    const gone: ChatMessageRef = { channelId: "C0GENERAL01", ts: "1700000000.000001" };
    expect(await providerError(() => chat.updateCard(gone, card()))).toMatchObject({ kind: "not_found", detail: { providerCode: "message_not_found" } });
    const ref = await chat.postCard("C0GENERAL01", card());
    peer.inject("chat.update", { error: "cant_update_message" });
    expect(await providerError(() => chat.updateCard(ref, card()))).toMatchObject({ kind: "bad_request", detail: { providerCode: "cant_update_message" } });
  });

  test("Slack's own failures (fatal_error, HTTP 503) and an unreachable Slack are unavailable, tried once", async () => {
    const chat = chatWith(peer.issueToken());
    peer.inject("chat.update", { error: "fatal_error" });
    const ref = await chat.postCard("C0GENERAL01", card());
    expect(await providerError(() => chat.updateCard(ref, card()))).toMatchObject({ kind: "unavailable", detail: { providerCode: "fatal_error" } });

    peer.inject("chat.postMessage", { status: 503 });
    expect(await providerError(() => chat.postCard("C0GENERAL01", card()))).toMatchObject({ kind: "unavailable", detail: { status: 503, providerCode: "http_503" } });
    expect(peer.calls("chat.postMessage")).toHaveLength(2);

    const port = await new Promise<number>((r) => { const s = createServer().listen(0, "127.0.0.1", () => { const p = (s.address() as any).port; s.close(() => r(p)); }); });
    const down = await providerError(() => chatWith("xoxb-1-x", `http://127.0.0.1:${port}/api/`).listChannels({ limit: 1 }));
    // providerCode is the network error's code (ECONNREFUSED) where the runtime passes it through.
    expect(down).toMatchObject({ kind: "unavailable", detail: { status: null } });
    expect(peer.calls()).toHaveLength(3);
  });
});

describe("the outbound path: the SSRF guard and the size cap", () => {
  test("a Slack base URL on a private address the allow-list does not name is refused before any request (bad_request, not retried)", async () => {
    const e = await providerError(() => chatWith(peer.issueToken(), peer.url, {}).postCard("C0GENERAL01", card()));
    expect(e).toMatchObject({ kind: "bad_request", detail: { providerCode: "ERR_BLOCKED_DESTINATION", status: null } });
    expect(e.retryable).toBe(false);
    expect(peer.calls()).toHaveLength(0);
  });

  test("an answer larger than Slack's cap is unavailable, not read whole", async () => {
    const big = createHttpServer((_req, res) => { res.writeHead(200, { "content-type": "application/json" }); res.end(JSON.stringify({ ok: true, channels: [], pad: "x".repeat(SLACK_MAX_RESPONSE_BYTES + 1) })); });
    await new Promise<void>((r) => big.listen(0, "127.0.0.1", () => r()));
    try {
      const e = await providerError(() => chatWith("xoxb-1-x", `http://127.0.0.1:${(big.address() as any).port}/api/`).listChannels({ limit: 1 }));
      expect(e).toMatchObject({ kind: "unavailable", detail: { providerCode: "response_too_large", status: null } });
    } finally {
      await new Promise((r) => big.close(r));
    }
  });
});

describe("interactions: signature and block_actions", () => {
  const now = new Date("2026-11-22T06:00:00Z");
  const body = Buffer.from("payload=%7B%22type%22%3A%22block_actions%22%7D");
  const verify = slack.interactions.verify;

  test("a request signed with the signing secret within 5 minutes is accepted", () => {
    expect(slack.interactions.signingSecretEnv).toBe("SLACK_SIGNING_SECRET");
    expect(verify(signSlackRequest(body, SIGNING_SECRET, now), body, SIGNING_SECRET, now)).toEqual({ ok: true });
    // Slack's headers arrive in any case; 300 s either way is still fresh.
    const h = signSlackRequest(body, SIGNING_SECRET, new Date(now.getTime() - 300_000));
    expect(verify({ "X-Slack-Request-Timestamp": h["x-slack-request-timestamp"], "X-Slack-Signature": h["x-slack-signature"] }, body, SIGNING_SECRET, now)).toEqual({ ok: true });
    expect(verify(signSlackRequest(body, SIGNING_SECRET, new Date(now.getTime() + 300_000)), body, SIGNING_SECRET, now)).toEqual({ ok: true });
  });

  test("Slack's documented example signature verifies", () => {
    // https://docs.slack.dev/authentication/verifying-requests-from-slack (example request)
    const raw = Buffer.from("token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c");
    const headers = { "x-slack-request-timestamp": "1531420618", "x-slack-signature": "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503" };
    expect(verify(headers, raw, SIGNING_SECRET, new Date(1531420618 * 1000))).toEqual({ ok: true });
  });

  test("a forged body, a wrong secret, a stale or future timestamp and malformed headers are refused with a reason", () => {
    const h = signSlackRequest(body, SIGNING_SECRET, now);
    expect(verify(h, Buffer.from(`${body}x`), SIGNING_SECRET, now)).toEqual({ ok: false, reason: "signature mismatch" });
    expect(verify(h, body, "another-secret", now)).toEqual({ ok: false, reason: "signature mismatch" });
    expect(verify(signSlackRequest(body, SIGNING_SECRET, new Date(now.getTime() - 301_000)), body, SIGNING_SECRET, now))
      .toEqual({ ok: false, reason: expect.stringMatching(/^stale request: timestamp is 301 s old/) });
    expect(verify(signSlackRequest(body, SIGNING_SECRET, new Date(now.getTime() + 301_000)), body, SIGNING_SECRET, now))
      .toEqual({ ok: false, reason: expect.stringMatching(/301 s in the future/) });
    // A fresh timestamp swapped onto an old signature fails the HMAC.
    const old = signSlackRequest(body, SIGNING_SECRET, new Date(now.getTime() - 3_600_000));
    expect(verify({ ...old, "x-slack-request-timestamp": h["x-slack-request-timestamp"] }, body, SIGNING_SECRET, now).ok).toBe(false);
    expect(verify({}, body, SIGNING_SECRET, now)).toEqual({ ok: false, reason: "missing X-Slack-Request-Timestamp" });
    expect(verify({ ...h, "x-slack-signature": "v1=abc" }, body, SIGNING_SECRET, now)).toEqual({ ok: false, reason: "X-Slack-Signature is not a v0 signature" });
    expect(verify({ ...h, "x-slack-signature": [h["x-slack-signature"], h["x-slack-signature"]] }, body, SIGNING_SECRET, now).ok).toBe(false);
    expect(verify(h, body, "", now)).toEqual({ ok: false, reason: "no signing secret is configured" });
  });

  test("a button press on a posted card parses to the item, action, version, user and workspace", async () => {
    const chat = chatWith(peer.issueToken());
    const ref = await chat.postCard("C0GENERAL01", card({ version: 3 }));

    const ack = Buffer.from(peer.blockActionsBody(ref.channelId, ref.ts, "operator:acknowledge", { id: "U0OPERATOR1", username: "ada" }));
    expect(verify(signSlackRequest(ack, SIGNING_SECRET), ack, SIGNING_SECRET)).toEqual({ ok: true });
    expect(slack.interactions.parse(ack)).toEqual({
      itemId: "op_01kaq3m2b4c5d6e7f8g9h0jkmn", action: "acknowledge", version: 3, user: { id: "U0OPERATOR1", name: "ada" }, teamId: peer.team.id,
    });
    const snooze = Buffer.from(peer.blockActionsBody(ref.channelId, ref.ts, "operator:snooze"));
    expect(slack.interactions.parse(snooze)).toMatchObject({ action: "snooze", snoozeMinutes: 60, version: 3 });
  });

  test("a card about a trend offers Not a trend / Useful in every state; a press parses to the verdict, not an action", async () => {
    const chat = chatWith(peer.issueToken());
    const ref = await chat.postCard("C0GENERAL01", card({ judgeable: true }));
    const msg = peer.message("C0GENERAL01", ref.ts)!;
    expect(blockKitProblems(msg.blocks!)).toEqual([]);
    const feedback = msg.blocks!.find((b) => b.block_id === "trend_feedback");
    expect(feedback.elements.map((b: any) => [b.action_id, b.text.text, JSON.parse(b.value)])).toEqual([
      ["feedback:not_a_trend", "Not a trend", { item_id: "op_01kaq3m2b4c5d6e7f8g9h0jkmn" }],
      ["feedback:useful", "Useful", { item_id: "op_01kaq3m2b4c5d6e7f8g9h0jkmn" }],
    ]);
    await chat.updateCard(ref, card({ judgeable: true, state: "resolved", version: 2 }));
    expect(buttons(peer.message("C0GENERAL01", ref.ts)!.blocks).map((b) => b.action_id)).toEqual(["operator:reopen", "feedback:not_a_trend", "feedback:useful"]);

    const press = Buffer.from(peer.blockActionsBody(ref.channelId, ref.ts, "feedback:not_a_trend", { id: "U0OPERATOR1", username: "ada" }));
    expect(slack.interactions.parse(press)).toEqual({
      itemId: "op_01kaq3m2b4c5d6e7f8g9h0jkmn", feedback: "not_a_trend", user: { id: "U0OPERATOR1", name: "ada" }, teamId: peer.team.id,
    });
    // A card not about a trend (an ads review) has no feedback buttons.
    await chat.updateCard(ref, card({ judgeable: false }));
    expect(peer.message("C0GENERAL01", ref.ts)!.blocks!.some((b) => b.block_id === "trend_feedback")).toBe(false);
  });

  test("anything that is not a press of one of our buttons parses to null", () => {
    const form = (payload: unknown) => Buffer.from(new URLSearchParams({ payload: JSON.stringify(payload) }).toString());
    const press = (action_id: string, value: string) => form({ type: "block_actions", user: { id: "U0OPERATOR1" }, team: { id: "T0TEAM00001" }, actions: [{ type: "button", action_id, value }] });
    expect(slack.interactions.parse(form({ type: "view_submission", user: { id: "U1" }, team: { id: "T1" } }))).toBeNull();
    expect(slack.interactions.parse(press("other_app:go", "{}"))).toBeNull();
    expect(slack.interactions.parse(press("operator:delete", JSON.stringify({ item_id: "op_01kaq3m2b4c5d6e7f8g9h0jkmn", version: 1 })))).toBeNull();
    expect(slack.interactions.parse(press("feedback:spam", JSON.stringify({ item_id: "op_01kaq3m2b4c5d6e7f8g9h0jkmn" })))).toBeNull();
    expect(slack.interactions.parse(press("operator:resolve", JSON.stringify({ item_id: "../../etc", version: 1 })))).toBeNull();
    expect(slack.interactions.parse(press("operator:resolve", "not json"))).toBeNull();
    expect(slack.interactions.parse(Buffer.from("payload=%7Bbroken"))).toBeNull();
    expect(slack.interactions.parse(Buffer.from("command=%2Fdeploy"))).toBeNull();
  });
});

describe("manifest bodies", () => {
  const { selection, settings } = slack.manifest.schemas;

  test("settings default to: high and above, every category, velocity changes alert, no mention, the server's re-notify delay", () => {
    expect(settings!.parse({})).toEqual({ min_severity: "high", categories: [], velocity_alerts: true, critical_mention: null, renotify_minutes: null, trigger_window_minutes: 0, recovery_window_minutes: 0 });
    expect(settings!.parse({ min_severity: "critical", categories: ["tech/ai"], velocity_alerts: false, critical_mention: "<!subteam^S0ONCALL01>", renotify_minutes: 30 }))
      .toEqual({ min_severity: "critical", categories: ["tech/ai"], velocity_alerts: false, critical_mention: "<!subteam^S0ONCALL01>", renotify_minutes: 30, trigger_window_minutes: 0, recovery_window_minutes: 0 });
    for (const m of ["<!here>", "<!channel>", "<@U0123ABCD>"]) expect(settings!.safeParse({ critical_mention: m }).success).toBe(true);
  });

  test("settings refuse what Slack would not treat as a mention, out-of-range delays, unknown fields and NUL", () => {
    for (const bad of [{ critical_mention: "@here" }, { critical_mention: "<!everyone>" }, { critical_mention: "<!here> <https://x|y>" }, { renotify_minutes: 4 },
      { renotify_minutes: 1441 }, { min_severity: "urgent" }, { categories: ["Tech"] }, { mute: true }, { critical_mention: "<!here>\u0000" }]) {
      expect(settings!.safeParse(bad).success).toBe(false);
    }
  });

  test("save-channel takes a Slack channel id only", () => {
    expect(selection!.parse({ channel_id: "C0123456789" })).toEqual({ channel_id: "C0123456789" });
    for (const bad of [{ channel_id: "D0123456789" }, { channel_id: "general" }, { channel_id: "C01" }, {}, { channel_id: "C0123456789", extra: 1 }]) {
      expect(selection!.safeParse(bad).success).toBe(false);
    }
  });
});

describe("the checker against Slack's API description bites", () => {
  const spec = new SlackSpec();

  test("wrong parameters and a malformed answer are reported", () => {
    expect(spec.checkRequest("conversations.list", { params: { limit: "ten", exclude_archive: "true" }, json: false, contentType: "application/x-www-form-urlencoded", bearer: true }))
      .toEqual(["conversations.list: parameter limit must be an integer, got \"ten\"", "conversations.list: unknown parameter exclude_archive"]);
    expect(spec.checkRequest("chat.postMessage", { params: { text: "hi" }, json: true, contentType: "application/json", bearer: false }))
      .toEqual(expect.arrayContaining(["chat.postMessage: a JSON body needs the token in Authorization: Bearer", "chat.postMessage: required parameter channel is missing"]));
    expect(spec.checkRequest("conversations.list", { params: {}, json: true, contentType: "application/json", bearer: true })[0]).toMatch(/does not take application\/json/);
    expect(spec.checkResponse("conversations.info", 200, { ok: true, channel: { id: "C0GENERAL01", name: "general" } }).length).toBeGreaterThan(0);
    expect(spec.checkResponse("chat.postMessage", 200, { ok: false, error: "made_up_error" }).length).toBeGreaterThan(0);
    expect(spec.checkResponse("chat.postMessage", 200, { ok: false, error: "not_in_channel" })).toEqual([]);
  });

  test("the peer takes JSON bodies where Slack does (write methods, Bearer token) and flags them elsewhere", async () => {
    const token = peer.issueToken();
    const post = (method: string, body: object) =>
      fetch(`${peer.url}${method}`, { method: "POST", headers: { "content-type": "application/json; charset=utf-8", authorization: `Bearer ${token}` }, body: JSON.stringify(body) });

    const res = await post("chat.postMessage", { channel: "C0GENERAL01", text: "hello", blocks: [{ type: "section", text: { type: "mrkdwn", text: "hello" } }] });
    expect(await res.json()).toMatchObject({ ok: true, channel: "C0GENERAL01" });
    expect(peer.messages("C0GENERAL01")[0].blocks).toEqual([{ type: "section", text: { type: "mrkdwn", text: "hello" } }]);

    expect((await post("conversations.list", { limit: 10 })).status).toBe(500);
    expect(peer.violations).toEqual(["conversations.list does not take application/json bodies (consumes application/x-www-form-urlencoded)"]);
    peer.violations.length = 0; // expected here; every other test must leave none
  });
});
