// What Microsoft requires of a Teams bot beyond a valid JWT and a posted card, against the stand-in
// (tests/peers/teams-server.ts): the signing key must be endorsed for the activity's channel (else 403); cards are
// Adaptive Cards 1.5 whose Action.Execute buttons fall back to an Action.Submit, and that Submit's press is applied;
// a bot's token comes from its own tenant (Azure creates only single-tenant bots now; the multi-tenant endpoint
// answers them AADSTS700016); the Connector's 412, 502 and 504 are retried, after the Retry-After they carry.
import { ProviderError } from "@trendgate/connector-core";
import { decide, outboxFailure } from "@trendgate/delivery";
import { teams } from "../../packages/connectors/chat/src/teams/index.ts";
import { botSettingsOf, forgetBotTokens } from "../../packages/connectors/chat/src/teams/bot.ts";
import { renderCard } from "../../packages/connectors/chat/src/teams/cards.ts";
import { http } from "../../packages/connectors/chat/src/teams/http.ts";
import { forgetSigningKeys } from "../../packages/connectors/chat/src/teams/interactions.ts";
import { operatorCardFixture } from "../helpers/chat-card.ts";
import { providerError } from "../helpers/provider.ts";
import { startStack, type Stack } from "../helpers/stack.ts";
import { event, item, posted, publishAndWait, type Account } from "../operator/helpers.ts";
import { startTeamsServer, type TeamsServer } from "../peers/teams-server.ts";

const BASE = "/api/integrations/chat/teams";
let ms: TeamsServer;
let stack: Stack;
beforeAll(async () => {
  ms = await startTeamsServer();
  stack = await startStack({ ...ms.env, OUTBOX_RETRY_SCHEDULE_SECONDS: "1,1", CHAT_POST_INTERVAL_MS: "0" });
});
afterAll(async () => { await stack.close(); await ms.close(); });
beforeEach(() => { forgetBotTokens(); forgetSigningKeys(); });

/** Every action of a card of the given type, wherever it sits (fallbacks included). */
function actionsOf(node: unknown, type = "Action.Execute"): any[] {
  if (Array.isArray(node)) return node.flatMap((n) => actionsOf(n, type));
  if (!node || typeof node !== "object") return [];
  const o = node as Record<string, unknown>;
  return [...(o.type === type ? [o] : []), ...Object.values(o).flatMap((v) => actionsOf(v, type))];
}

/** The account connected to the tenant, with a saved channel in a team where the app is installed. */
async function teamsAccount(): Promise<Account & { channelId: string }> {
  const a = await stack.gw.account();
  const start = await stack.gw.http.get(`${BASE}/auth`).set(a.auth);
  const back = await ms.oauth.browse(start.body.authorization_url);
  expect((await stack.gw.http.get(`${back.pathname}${back.search}`)).status).toBe(200);
  const team = ms.addTeam({ displayName: `Marketing ${a.accountId.slice(-4)}`, installed: true });
  const channelId = `${team.id}/${ms.addChannel(team.id, { displayName: "Alerts" }).id}`;
  expect((await stack.gw.http.post(`${BASE}/save-channel`).set(a.auth).send({ channel_id: channelId })).status).toBe(200);
  return { ...a, channelId };
}

/** A posted card's item and thread. */
async function postedCard(a: Account, name: string) {
  const it = await posted(stack, a, (await publishAndWait(stack, a, event(a.accountId, { trend_name: name, severity: "high" }))).id);
  const thread = [...ms.threads.values()].find((t) => JSON.stringify(t.activity).includes(it.id))!;
  return { it, thread };
}

const send = (signed: { headers: Record<string, string>; body: string }) => stack.gw.http.post(`${BASE}/interactivity`).set(signed.headers).send(signed.body);

describe("the signing key's channel endorsements", () => {
  const acknowledge = () => actionsOf(renderCard(operatorCardFixture()))[0];
  const verify = async (activity: Record<string, unknown>, key?: "webchat" | "unendorsed") => {
    const r = await ms.signedInvoke(activity, key ? { key } : {});
    return teams.interactions.verify(r.headers, r.rawBody, ms.app.id, new Date(), ms.env);
  };

  test("a key endorsed for msteams is accepted; one endorsed for webchat only, or for nothing, is forbidden; so is another channel's activity", async () => {
    const activity = ms.invokeActivity({ action: acknowledge() });
    expect(await verify(activity)).toEqual({ ok: true });
    expect(await verify(activity, "webchat")).toEqual({ ok: false, forbidden: true, reason: "the signing key is not endorsed for msteams (endorsements: webchat)" });
    expect(await verify(activity, "unendorsed")).toEqual({ ok: false, forbidden: true, reason: "the signing key is not endorsed for msteams (endorsements: none)" });
    // A Web Chat activity signed with a key endorsed for webchat: authentic, but not a Teams activity.
    expect(await verify({ ...activity, channelId: "webchat" }, "webchat")).toMatchObject({ ok: false, forbidden: true, reason: expect.stringMatching(/channelId is "webchat"/) });
    expect(await verify({ ...activity, channelId: undefined })).toMatchObject({ ok: false, forbidden: true });
    // A forged signature stays a 401 matter, whichever key id it names.
    const forged = await ms.signedInvoke(activity, { untrustedKey: true });
    expect(await teams.interactions.verify(forged.headers, forged.rawBody, ms.app.id, new Date(), ms.env)).toEqual({ ok: false, reason: "signature mismatch" });
  });

  test("the route answers 403 forbidden to an unendorsed key and changes nothing; the endorsed key's press is applied", async () => {
    const a = await teamsAccount();
    const { it, thread } = await postedCard(a, "Endorsed keys");
    const ack = actionsOf(thread.activity).find((x) => x.verb === "operator:acknowledge")!;
    const activity = () => ms.invokeActivity({ action: ack, conversationId: thread.conversationId });

    for (const key of ["webchat", "unendorsed"] as const) {
      const res = await send(await ms.signedInvoke(activity(), { key }));
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: "forbidden", detail: expect.stringMatching(/not endorsed for msteams/) });
    }
    expect((await item(stack.gw, a, it.id)).state).toBe("open");

    const ok = await send(await ms.signedInvoke(activity()));
    expect(ok.status).toBe(200);
    expect((await item(stack.gw, a, it.id)).state).toBe("acknowledged");
  });
});

describe("cards: Adaptive Card 1.5, every Action.Execute falling back to an Action.Submit", () => {
  test("version 1.5; each Action.Execute has a Submit fallback with the same title, style and data plus its verb", () => {
    const approval = { planId: "ap_01kaq3m2b4c5d6e7f8g9h0jkmn", planHash: "sha256:abc", provider: "meta_ads", lines: ["x"], decided: null };
    for (const c of [operatorCardFixture(), operatorCardFixture({ state: "snoozed", snoozedUntil: new Date("2030-01-01T00:00:00Z"), judgeable: true, approval })]) {
      const rendered = renderCard(c);
      expect(rendered.version).toBe("1.5");
      const executes = actionsOf(rendered);
      expect(executes.length).toBeGreaterThan(3);
      for (const x of executes) {
        expect(x.fallback).toEqual({ type: "Action.Submit", title: x.title, ...(x.style ? { style: x.style } : {}), data: { ...x.data, verb: x.verb } });
      }
    }
  });

  test("a press on the Submit fallback (a message activity) applies the action, as the Execute would", async () => {
    const a = await teamsAccount();
    const { it, thread } = await postedCard(a, "Old clients");
    const ack = actionsOf(thread.activity).find((x) => x.verb === "operator:acknowledge")!;
    expect(thread.activity.attachments[0].content.version).toBe("1.5");

    // What parse() makes of it: the same interaction as the invoke.
    const submit = ms.submitActivity({ action: ack.fallback, conversationId: thread.conversationId });
    const invoke = ms.invokeActivity({ action: ack, conversationId: thread.conversationId });
    expect(teams.interactions.parse(Buffer.from(JSON.stringify(submit)))).toEqual(teams.interactions.parse(Buffer.from(JSON.stringify(invoke))));

    const res = await send(await ms.signedInvoke(submit));
    expect(res.status).toBe(200);
    const acked = await item(stack.gw, a, it.id);
    expect(acked).toMatchObject({ state: "acknowledged", version: 2, acknowledged_by: `chat:${ms.tenant.id}/5e7c0a2d-1111-4b8e-9c3a-2f6d8e9a0b1c` });

    // A message that is no press of ours (typed text, another card's data) changes nothing.
    const typed = await send(await ms.signedInvoke({ ...submit, value: undefined, text: "hello" }));
    expect(typed.status).toBe(200);
    const mismatched = await send(await ms.signedInvoke(ms.submitActivity({ action: { data: { ...ack.fallback.data, verb: "operator:resolve" } }, conversationId: thread.conversationId })));
    expect(mismatched.status).toBe(200);
    expect((await item(stack.gw, a, it.id)).version).toBe(2);
  });
});

describe("the bot's token: single-tenant bots", () => {
  const alerts = () => {
    const team = ms.addTeam({ displayName: "Tokens", installed: true });
    return `${team.id}/${ms.addChannel(team.id, { displayName: "Alerts" }).id}`;
  };
  const chat = (env: Record<string, string | undefined>) =>
    teams.client({ baseUrl: ms.graphUrl, accessToken: ms.issueGraphToken(), account: { tenant_id: ms.tenant.id }, env: Object.fromEntries(Object.entries({ ...ms.env, ...env }).filter(([, v]) => v !== undefined)) });

  /** Runs `fn` with Microsoft's identity platform answered by the stand-in (same paths, its own origin). */
  async function viaStandIn<T>(fn: () => Promise<T>): Promise<T> {
    const original = http.fetch;
    http.fetch = (what, url, init) => original.call(http, what, String(url).replace(/^https:\/\/login\.microsoftonline\.com\//, `${ms.url}/`), init);
    try { return await fn(); } finally { delete (http as { fetch?: unknown }).fetch; }
  }

  test("TEAMS_BOT_TENANT_ID names the token endpoint: the bot's own tenant; TEAMS_BOT_TOKEN_URL still overrides it", async () => {
    const noUrl = { TEAMS_BOT_TOKEN_URL: undefined };
    expect(botSettingsOf({ ...ms.env, ...noUrl }).tokenUrl).toBe(`https://login.microsoftonline.com/${ms.app.tenantId}/oauth2/v2.0/token`);
    expect(botSettingsOf({ ...ms.env, ...noUrl, TEAMS_BOT_TENANT_ID: "contoso.onmicrosoft.com" }).tokenUrl).toBe("https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/token");
    expect(botSettingsOf({ ...ms.env, ...noUrl, TEAMS_BOT_TENANT_ID: "botframework.com" }).tokenUrl).toBe("https://login.microsoftonline.com/botframework.com/oauth2/v2.0/token");
    expect(botSettingsOf(ms.env).tokenUrl).toBe(ms.botTokenUrl);

    const before = ms.requests.length;
    const ref = await viaStandIn(() => chat(noUrl).postCard(alerts(), operatorCardFixture()));
    expect(ref.ts).toEqual(expect.any(String));
    const tokenCalls = ms.requests.slice(before).filter((r) => r.path.endsWith("/oauth2/v2.0/token"));
    expect(tokenCalls.map((r) => [r.path, r.status])).toEqual([[`/${ms.app.tenantId}/oauth2/v2.0/token`, 200]]);
  });

  test("no tenant and no token URL: a configuration error naming TEAMS_BOT_TENANT_ID, nothing sent; a malformed tenant likewise", async () => {
    const before = ms.requests.length;
    const unset = await providerError(() => viaStandIn(() => chat({ TEAMS_BOT_TOKEN_URL: undefined, TEAMS_BOT_TENANT_ID: undefined }).postCard(alerts(), operatorCardFixture())));
    expect(unset).toMatchObject({ kind: "bad_request", detail: { providerCode: "bot_not_configured" } });
    expect(unset.message).toMatch(/set TEAMS_BOT_TENANT_ID/);
    const bad = await providerError(() => chat({ TEAMS_BOT_TOKEN_URL: undefined, TEAMS_BOT_TENANT_ID: "organizations/../x" }).postCard(alerts(), operatorCardFixture()));
    expect(bad).toMatchObject({ kind: "bad_request", detail: { providerCode: "bot_not_configured" } });
    expect(ms.requests.slice(before).filter((r) => r.path.endsWith("/token"))).toEqual([]);
  });

  test("the multi-tenant endpoint's AADSTS700016 for a single-tenant bot names the cause, not the app password", async () => {
    for (const run of [
      () => chat({ TEAMS_BOT_TOKEN_URL: ms.multiTenantTokenUrl }).postCard(alerts(), operatorCardFixture()),
      () => viaStandIn(() => chat({ TEAMS_BOT_TOKEN_URL: undefined, TEAMS_BOT_TENANT_ID: "botframework.com" }).postCard(alerts(), operatorCardFixture())),
    ]) {
      forgetBotTokens();
      const err = await providerError(run);
      expect(err).toMatchObject({ kind: "bad_request", detail: { status: 400, providerCode: "unauthorized_client" } });
      expect(err.message).toMatch(/AADSTS700016/);
      expect(err.message).toMatch(/single-tenant.*set TEAMS_BOT_TENANT_ID to the tenant of its app registration/);
      expect(err.message).not.toMatch(/TEAMS_APP_PASSWORD/);
    }
    const [answer] = ms.requestsTo("POST /botframework.com/oauth2/v2.0/token").map((r) => r.response);
    expect(answer).toMatchObject({ error: "unauthorized_client", error_codes: [700016], error_description: expect.stringMatching(/^AADSTS700016: Application with identifier '.+' was not found in the directory/) });

    // The URL set by hand is named too; in the bot's own tenant, AADSTS700016 means a wrong app id or tenant.
    forgetBotTokens();
    const pinned = await providerError(() => chat({ TEAMS_BOT_TOKEN_URL: ms.multiTenantTokenUrl }).postCard(alerts(), operatorCardFixture()));
    expect(pinned.message).toMatch(/unset TEAMS_BOT_TOKEN_URL/);
    const wrongApp = await providerError(() => chat({ TEAMS_APP_ID: "00000000-0000-4000-8000-000000000000" }).postCard(alerts(), operatorCardFixture()));
    expect(wrongApp.message).toMatch(/check TEAMS_APP_ID and TEAMS_BOT_TENANT_ID/);
    // A wrong password is still said to be one.
    const wrongPassword = await providerError(() => chat({ TEAMS_APP_PASSWORD: "wrong" }).postCard(alerts(), operatorCardFixture()));
    expect(wrongPassword).toMatchObject({ kind: "bad_request", detail: { status: 401, providerCode: "invalid_client" } });
    expect(wrongPassword.message).toMatch(/check TEAMS_APP_ID and TEAMS_APP_PASSWORD/);
  });
});

test("the Connector's 412, 502 and 504 are retried, not before their Retry-After", async () => {
  const team = ms.addTeam({ displayName: "Transient", installed: true });
  const channelId = `${team.id}/${ms.addChannel(team.id, { displayName: "Alerts" }).id}`;
  const client = teams.client({ baseUrl: ms.graphUrl, accessToken: ms.issueGraphToken(), account: { tenant_id: ms.tenant.id }, env: ms.env });
  const schedule = { delaysSeconds: [1, 1], jitter: 0, maxRetryAfterSeconds: 3600 };
  for (const [status, code] of [[412, "PreconditionFailed"], [502, "BadGateway"], [504, "GatewayTimeout"]] as const) {
    ms.failNext("POST /teams/v3/conversations", { status, code, retryAfter: 9 });
    const err = await providerError(() => client.postCard(channelId, operatorCardFixture()));
    expect(err).toBeInstanceOf(ProviderError);
    expect({ status, kind: err.kind, retryable: err.retryable, retryAfterMs: err.detail.retryAfterMs }).toEqual({ status, kind: "unavailable", retryable: true, retryAfterMs: 9000 });
    expect(decide(outboxFailure(err), schedule, 1)).toEqual({ outcome: "retrying", delayMs: 9000 });
  }
  // The update of a posted card, too.
  const ref = await client.postCard(channelId, operatorCardFixture());
  ms.failNext("PUT /teams/v3/conversations/", { status: 412, code: "PreconditionFailed" });
  expect(await providerError(() => client.updateCard(ref, operatorCardFixture({ version: 2 })))).toMatchObject({ kind: "unavailable", detail: { status: 412 } });
  await client.updateCard(ref, operatorCardFixture({ version: 2 }));
});
