// The Microsoft Teams chat connector against a local stand-in for Graph, the identity platform, the Bot Framework
// Connector and the Bot Framework's signing keys (tests/peers/teams-server.ts), over real HTTP.
import { OAuth2Client, oauthClientOf, ProviderError, type OAuthClientSettings } from "@trendgate/connector-core";
import { teams } from "../../packages/connectors/chat/src/teams/index.ts";
import { forgetBotTokens } from "../../packages/connectors/chat/src/teams/bot.ts";
import { renderCard } from "../../packages/connectors/chat/src/teams/cards.ts";
import { forgetSigningKeys } from "../../packages/connectors/chat/src/teams/interactions.ts";
import type { OperatorCard } from "../../packages/connectors/chat/src/kind.ts";
import { startTeamsServer, type TeamRecord, type TeamsServer } from "../peers/teams-server.ts";
import { operatorCardFixture } from "../helpers/chat-card.ts";
import { providerError } from "../helpers/provider.ts";

// The stand-in listens on loopback; provider calls reach private addresses only where OUTBOUND_ALLOWLIST allows.
process.env.OUTBOUND_ALLOWLIST = "127.0.0.1";

const REDIRECT = "http://localhost:3000/api/integrations/oauth/callback";
let ms: TeamsServer;
let env: Record<string, string>;
let graphToken: string;
let marketing: TeamRecord;
let alertsId: string;


const chat = (accessToken = graphToken, over: Record<string, string> = {}) =>
  teams.client({ baseUrl: ms.graphUrl, accessToken, account: { tenant_id: ms.tenant.id }, env: { ...env, ...over } });

const card = (over: Partial<OperatorCard> = {}): OperatorCard => operatorCardFixture({ version: 3, ...over });

/** Every Action.Execute on a rendered card, wherever it sits. */
function executes(node: any): any[] {
  if (!node || typeof node !== "object") return [];
  if (Array.isArray(node)) return node.flatMap(executes);
  return [...(node.type === "Action.Execute" ? [node] : []), ...Object.values(node).flatMap(executes)];
}
const verbs = (c: OperatorCard) => executes(renderCard(c)).map((a) => a.verb);

beforeAll(async () => {
  ms = await startTeamsServer({ redirectUris: [REDIRECT] });
  env = ms.env;
});
afterAll(async () => { await ms.close(); });
beforeEach(() => {
  ms.reset();
  forgetBotTokens();
  forgetSigningKeys();
  graphToken = ms.issueGraphToken();
  marketing = ms.addTeam({ displayName: "Marketing", installed: true });
  alertsId = `${marketing.id}/${ms.addChannel(marketing.id, { displayName: "Alerts" }).id}`;
});

describe("OAuth: the tenant's authorization", () => {
  test("the manifest's flow (PKCE, client_secret_post) yields tokens and the tenant id; a refresh names the scopes and rotates", async () => {
    const resolved = oauthClientOf(teams.manifest, env);
    if (!("client" in resolved)) throw new Error(`unresolved: ${resolved.missing}`);
    const client: OAuthClientSettings = resolved.client;
    expect(client.authorizationUrl).toBe(ms.oauth.authorizationUrl);
    expect(client.baseUrl).toBe(ms.graphUrl);
    const oauth = new OAuth2Client(teams.manifest as never, client);
    const verifier = oauth.newCodeVerifier();
    expect(verifier).toBeDefined();
    const url = new URL(await oauth.authorizationUrl({ redirectUri: REDIRECT, state: "st-1", codeVerifier: verifier }));
    expect(url.searchParams.get("scope")).toBe("offline_access User.Read Team.ReadBasic.All Channel.ReadBasic.All TeamsAppInstallation.ReadForTeam");
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");

    const back = await ms.oauth.browse(url.href);
    const tokens = await oauth.exchangeCode({ code: back.searchParams.get("code")!, redirectUri: REDIRECT, codeVerifier: verifier });
    expect(tokens.account).toEqual({ tenant_id: ms.tenant.id, tenant_name: ms.tenant.displayName });
    expect(tokens.refreshToken).toEqual(expect.any(String));
    // The token is the tenant's Graph token: it lists the tenant's channels.
    expect((await chat(tokens.accessToken).listChannels({ limit: 10 })).channels.map((c) => c.id)).toEqual([alertsId]);

    const next = await oauth.refresh(tokens.refreshToken!);
    expect(next.accessToken).not.toBe(tokens.accessToken);
    expect(next.refreshToken).not.toBe(tokens.refreshToken);
    expect(ms.oauth.counts).toMatchObject({ authorization_code: 1, refresh_token: 1 });
    // Both grants authenticated in the form (client_secret_post); the exchange sent the PKCE verifier, the refresh
    // named the scopes again (the v2.0 endpoint documents them as required).
    const [exchange, refresh] = ms.requestsTo("POST /organizations/oauth2/v2.0/token").map((r) => r.body);
    expect(exchange).toMatchObject({ grant_type: "authorization_code", client_id: env.TEAMS_CLIENT_ID, client_secret: env.TEAMS_CLIENT_SECRET, code_verifier: verifier, redirect_uri: REDIRECT });
    expect(refresh).toMatchObject({ grant_type: "refresh_token", refresh_token: tokens.refreshToken, scope: "offline_access User.Read Team.ReadBasic.All Channel.ReadBasic.All TeamsAppInstallation.ReadForTeam" });
    // Rotated: the old refresh token is refused, which only a new authorization mends.
    const reused = await providerError(() => oauth.refresh(tokens.refreshToken!));
    expect(reused).toMatchObject({ kind: "unauthorized", detail: { providerCode: "invalid_grant" } });
  });
});

describe("channels (Graph)", () => {
  test("lists every joined team's channels across @odata.nextLink pages and our own cursor, membership from installedApps", async () => {
    ms.knobs.pageSize = 2;
    ms.addChannel(marketing.id, { displayName: "General" });
    ms.addChannel(marketing.id, { displayName: "Design" });
    ms.addChannel(marketing.id, { displayName: "Leads", membershipType: "private" });
    ms.addChannel(marketing.id, { displayName: "Old", isArchived: true });
    const sales = ms.addTeam({ displayName: "Sales" }); // the app is not installed here
    const pipeline = ms.addChannel(sales.id, { displayName: "Pipeline" });
    const ops = ms.addTeam({ displayName: "Ops", installed: true });
    const oncall = ms.addChannel(ops.id, { displayName: "On call" });

    const all: any[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await chat().listChannels({ limit: 3, cursor });
      expect(page.channels.length).toBeLessThanOrEqual(3);
      all.push(...page.channels);
      cursor = page.nextCursor ?? undefined;
      pages++;
    } while (cursor && pages < 10);

    expect(all.map((c) => c.name)).toEqual(["Marketing / Alerts", "Marketing / General", "Marketing / Design", "Marketing / Leads", "Sales / Pipeline", "Ops / On call"]);
    expect(all.find((c) => c.name === "Marketing / Alerts")).toEqual({ id: alertsId, name: "Marketing / Alerts", isPrivate: false, isMember: true, isArchived: false });
    expect(all.find((c) => c.name === "Marketing / Leads")).toMatchObject({ isPrivate: true, isMember: false });
    expect(all.find((c) => c.name === "Sales / Pipeline")).toMatchObject({ id: `${sales.id}/${pipeline.id}`, isMember: false });
    expect(all.find((c) => c.name === "Ops / On call")).toMatchObject({ id: `${ops.id}/${oncall.id}`, isMember: true });
    // Graph's paging was followed (skiptokens), with the tenant's token on every call.
    expect(ms.requests.some((r) => r.path === "/v1.0/me/joinedTeams" && r.query.$skiptoken === "2")).toBe(true);
    expect(ms.requests.some((r) => r.path === `/v1.0/teams/${marketing.id}/channels` && r.query.$skiptoken === "4")).toBe(true);
    expect(ms.requests.filter((r) => r.path.startsWith("/v1.0/")).every((r) => r.authorization === `Bearer ${graphToken}`)).toBe(true);
  });

  test("channelInfo finds a listed channel again; unknown or malformed ids are not_found; join says to install the app", async () => {
    expect(await chat().channelInfo(alertsId)).toEqual({ id: alertsId, name: "Marketing / Alerts", isPrivate: false, isMember: true, isArchived: false });
    ms.uninstall(marketing.id);
    expect((await chat().channelInfo(alertsId)).isMember).toBe(false);

    expect(await providerError(() => chat().channelInfo(`${marketing.id}/19:nope@thread.tacv2`))).toMatchObject({ kind: "not_found", detail: { status: 404, providerCode: "NotFound" } });
    expect(await providerError(() => chat().channelInfo("C0GENERAL01"))).toMatchObject({ kind: "not_found", detail: { providerCode: "invalid_channel_id" } });
    const join = await providerError(() => chat().join(alertsId));
    expect(join).toMatchObject({ kind: "bad_request", detail: { providerCode: "app_not_installed" } });
    expect(join.message).toMatch(/install the app in the team/);
  });

  test("an expired or unknown Graph token is unauthorized; 429 is rate_limited with Retry-After; 5xx unavailable; a missing permission unauthorized", async () => {
    ms.expireGraphToken(graphToken);
    expect(await providerError(() => chat().listChannels({ limit: 10 }))).toMatchObject({ kind: "unauthorized", detail: { status: 401, providerCode: "InvalidAuthenticationToken" } });
    expect(await providerError(() => chat("not-a-token").channelInfo(alertsId))).toMatchObject({ kind: "unauthorized" });

    const fresh = ms.issueGraphToken();
    ms.failNext("GET /v1.0/me/joinedTeams", { status: 429, retryAfter: 7 });
    expect(await providerError(() => chat(fresh).listChannels({ limit: 10 }))).toMatchObject({ kind: "rate_limited", detail: { status: 429, retryAfterMs: 7000, providerCode: "TooManyRequests" } });
    ms.failNext("GET /v1.0/teams", { status: 503 });
    expect(await providerError(() => chat(fresh).channelInfo(alertsId))).toMatchObject({ kind: "unavailable", detail: { status: 503 } });
    ms.failNext("GET /v1.0/teams", { status: 403, code: "Authorization_RequestDenied", message: "Insufficient privileges to complete the operation." });
    expect(await providerError(() => chat(fresh).channelInfo(alertsId))).toMatchObject({ kind: "unauthorized", detail: { status: 403, providerCode: "Authorization_RequestDenied" } });
  });

  test("a next link outside Graph's origin is never followed with the tenant's token", async () => {
    const forged = Buffer.from(JSON.stringify({ tl: "https://evil.example.com/steal", ti: 0, cl: null, cs: 0 })).toString("base64url");
    expect(await providerError(() => chat().listChannels({ limit: 10, cursor: forged }))).toMatchObject({ kind: "bad_request", detail: { providerCode: "foreign_next_link" } });
    expect(ms.requests).toHaveLength(0);
  });
});

describe("cards (Bot Framework Connector)", () => {
  test("postCard starts a thread in the channel with the bot token; updateCard and postReply address that thread", async () => {
    const ref = await chat().postCard(alertsId, card());
    const channel = alertsId.split("/")[1];
    expect(ref).toEqual({ channelId: `${channel};messageid=${ref.ts}`, ts: expect.stringMatching(/^\d+$/) });

    const [token] = ms.requestsTo(`POST /${ms.app.tenantId}/oauth2/v2.0/token`);
    expect(token.body).toEqual({ grant_type: "client_credentials", client_id: ms.app.id, client_secret: ms.app.password, scope: "https://api.botframework.com/.default" });
    const botToken = `Bearer ${token.response.access_token}`;

    const [create] = ms.requestsTo("POST /teams/v3/conversations");
    expect(create.path).toBe("/teams/v3/conversations");
    expect(create.authorization).toBe(botToken);
    expect(create.body).toMatchObject({ isGroup: true, tenantId: ms.tenant.id, channelData: { channel: { id: channel }, tenant: { id: ms.tenant.id } } });
    expect(create.body.activity.attachments[0]).toMatchObject({ contentType: "application/vnd.microsoft.card.adaptive", content: { type: "AdaptiveCard", version: "1.5" } });

    await chat().updateCard(ref, card({ state: "acknowledged", version: 4, acknowledgedBy: "Ada" }));
    const [update] = ms.requestsTo("PUT /teams/v3/conversations/");
    expect(update.path).toBe(`/teams/v3/conversations/${encodeURIComponent(ref.channelId)}/activities/${ref.ts}`);
    expect(update.authorization).toBe(botToken);
    const thread = ms.threads.get(ref.channelId)!;
    expect(thread.edits).toHaveLength(1);
    expect(executes(thread.activity).map((a) => a.verb)).toEqual(["operator:resolve", "operator:snooze", "operator:mute"]);

    const reply = await chat().postReply(ref, "Reminder 1: still open <b>", [{ kind: "user", id: "5e7c0a2d-1111-4b8e-9c3a-2f6d8e9a0b1c", name: "Ada" }, { kind: "channel", id: "", name: "Alerts" }]);
    expect(reply).toEqual({ channelId: ref.channelId, ts: expect.stringMatching(/^\d+$/) });
    const [post] = ms.requestsTo("POST /teams/v3/conversations/");
    expect(post.path).toBe(`/teams/v3/conversations/${encodeURIComponent(ref.channelId)}/activities/${ref.ts}`);
    expect(post.authorization).toBe(botToken);
    expect(post.body.text).toBe("<at>Ada</at> <at>Alerts</at> Reminder 1: still open &lt;b&gt;");
    expect(post.body.entities).toEqual([
      { type: "mention", text: "<at>Ada</at>", mentioned: { id: "5e7c0a2d-1111-4b8e-9c3a-2f6d8e9a0b1c", name: "Ada" } },
      { type: "mention", text: "<at>Alerts</at>", mentioned: { id: channel, name: "Alerts", type: "channel" } },
    ]);
    expect(thread.replies.map((r) => r.id)).toEqual([reply.ts]);
    // One bot token for all three calls: it is cached.
    expect(ms.requestsTo(`POST /${ms.app.tenantId}/`)).toHaveLength(1);
  });

  test("a critical open card carries its configured mention as an entity; other cards do not", async () => {
    await chat().postCard(alertsId, card({ severity: "critical", mention: "tag:MTk6dGFn|Marketing leads" }));
    await chat().postCard(alertsId, card({ severity: "high", mention: "tag:MTk6dGFn|Marketing leads" }));
    await chat().postCard(alertsId, card({ severity: "critical", mention: "<!here>" }));
    const [critical, high, slackish] = ms.requestsTo("POST /teams/v3/conversations").map((r) => r.body.activity);
    expect(critical.text).toBe("<at>Marketing leads</at>");
    expect(critical.entities).toEqual([{ type: "mention", text: "<at>Marketing leads</at>", mentioned: { id: "MTk6dGFn", name: "Marketing leads", type: "tag" } }]);
    expect(high.text).toBeUndefined();
    expect(slackish.text).toBeUndefined();
  });

  test("a channel whose team has not installed the app is refused as the Connector says (403 BotNotInConversationRoster)", async () => {
    ms.uninstall(marketing.id);
    const err = await providerError(() => chat().postCard(alertsId, card()));
    expect(err).toMatchObject({ kind: "bad_request", detail: { status: 403, providerCode: "BotNotInConversationRoster" } });
    expect(err.message).toMatch(/install the Trendgate app in the team/);
  });

  test("429 from the Connector is rate_limited with its Retry-After; 502 is unavailable", async () => {
    ms.failNext("POST /teams/v3/conversations", { status: 429, retryAfter: 12 });
    expect(await providerError(() => chat().postCard(alertsId, card()))).toMatchObject({ kind: "rate_limited", detail: { status: 429, retryAfterMs: 12_000 } });
    ms.failNext("POST /teams/v3/conversations", { status: 502 });
    expect(await providerError(() => chat().postCard(alertsId, card()))).toMatchObject({ kind: "unavailable", detail: { status: 502 } });
    expect(ms.threads.size).toBe(0);
  });

  test("an expired bot token is replaced and the call sent once more; a refused app password is a configuration error, not the tenant's", async () => {
    const ref = await chat().postCard(alertsId, card());
    ms.expireBotTokens();
    await chat().updateCard(ref, card({ version: 4, state: "resolved", resolvedBy: "Ada" }));
    const puts = ms.requestsTo("PUT /teams/v3/conversations/");
    expect(puts.map((r) => r.status)).toEqual([401, 200]);
    expect(puts[0].authorization).not.toBe(puts[1].authorization);
    expect(ms.requestsTo(`POST /${ms.app.tenantId}/`)).toHaveLength(2);

    forgetBotTokens();
    const refused = await providerError(() => chat(graphToken, { TEAMS_APP_PASSWORD: "wrong" }).postCard(alertsId, card()));
    // Re-authorizing the tenant would not help: not `unauthorized` (which marks the connection needs_reauth).
    expect(refused).toMatchObject({ kind: "bad_request", detail: { status: 401, providerCode: "invalid_client" } });
    expect(refused.message).not.toContain("wrong");

    // A Connector that keeps refusing fresh tokens: the same configuration error, the cached token dropped.
    ms.failNext("PUT /teams/v3/conversations/", { status: 401 }, 2);
    expect(await providerError(() => chat().updateCard(ref, card()))).toMatchObject({ kind: "bad_request", detail: { status: 401 } });
  });

  test("a client without TEAMS_APP_ID / TEAMS_APP_PASSWORD says which to set", async () => {
    const err = await providerError(() => teams.client({ baseUrl: ms.graphUrl, accessToken: graphToken, env: { OUTBOUND_ALLOWLIST: "127.0.0.1" } }).postCard(alertsId, card()));
    expect(err).toMatchObject({ kind: "bad_request", detail: { providerCode: "bot_not_configured" } });
    expect(err.message).toMatch(/TEAMS_APP_ID and TEAMS_APP_PASSWORD/);
  });
});

describe("card rendering", () => {
  test("buttons by state, as Slack's card", () => {
    expect(verbs(card({ state: "open" }))).toEqual(["operator:acknowledge", "operator:resolve", "operator:snooze", "operator:mute"]);
    expect(verbs(card({ state: "acknowledged" }))).toEqual(["operator:resolve", "operator:snooze", "operator:mute"]);
    expect(verbs(card({ state: "snoozed", snoozedUntil: new Date("2030-01-01T10:00:00Z") }))).toEqual(["operator:acknowledge", "operator:resolve", "operator:reopen", "operator:mute"]);
    expect(verbs(card({ state: "resolved" }))).toEqual(["operator:reopen"]);
    expect(verbs(card({ state: "resolved", judgeable: true }))).toEqual(["operator:reopen", "feedback:not_a_trend", "feedback:useful"]);
  });

  test("every button carries item_id, version and its action or verdict; snooze its minutes", () => {
    const actions = executes(renderCard(card({ judgeable: true })));
    for (const a of actions) expect(a.data).toMatchObject({ item_id: "op_01kaq3m2b4c5d6e7f8g9h0jkmn", version: 3 });
    expect(actions.find((a) => a.verb === "operator:snooze").data).toEqual({ item_id: "op_01kaq3m2b4c5d6e7f8g9h0jkmn", version: 3, action: "snooze", snooze_minutes: 60 });
    expect(actions.find((a) => a.verb === "feedback:useful").data).toEqual({ item_id: "op_01kaq3m2b4c5d6e7f8g9h0jkmn", version: 3, verdict: "useful" });
  });

  test("an approval lists its lines and offers Approve and apply bound to the plan hash, unless decided", () => {
    const approval = { planId: "ap_01kaq3m2b4c5d6e7f8g9h0jkmn", planHash: "sha256:abc123", provider: "google_ads", lines: ["+ keyword \"heat pumps\" (phrase)", "- keyword \"boilers\""], decided: null };
    const rendered = renderCard(card({ approval }));
    const approve = executes(rendered).find((a) => a.verb === "approve");
    expect(approve).toMatchObject({ title: "Approve and apply", data: { item_id: "op_01kaq3m2b4c5d6e7f8g9h0jkmn", version: 3, action: "approve", plan_id: approval.planId, plan_hash: "sha256:abc123" } });
    const texts = JSON.stringify(rendered);
    for (const l of approval.lines) expect(texts).toContain(JSON.stringify(`• ${l}`).slice(1, -1));

    const decided = renderCard(card({ approval: { ...approval, decided: "Applied by Ada" } }));
    expect(executes(decided).some((a) => a.verb === "approve")).toBe(false);
    expect(JSON.stringify(decided)).toContain("Applied by Ada");
  });

  test("trend text is never markdown: it only ever appears in TextRuns", () => {
    const evil = "[click me](https://evil.example.com) **bold**";
    const rendered = renderCard(card({ title: evil, summary: evil, category: evil, acknowledgedBy: evil, state: "acknowledged" }));
    const walk = (n: any, found: any[] = []): any[] => {
      if (n && typeof n === "object") {
        for (const v of Object.values(n)) if (typeof v === "string" && v.includes("evil.example.com")) found.push(n);
        Object.values(n).forEach((v) => walk(v, found));
      }
      return found;
    };
    const holders = walk(rendered);
    expect(holders.length).toBe(4);
    for (const h of holders) expect(h.type).toBe("TextRun");
    expect(JSON.stringify(rendered)).not.toContain("\"TextBlock\"");
  });
});

describe("interactions (Bot Framework JWT, adaptiveCard/action invokes)", () => {
  const press = async (activity: Record<string, unknown>, token: Parameters<TeamsServer["signedInvoke"]>[1] = {}) => {
    const r = await ms.signedInvoke(activity, token);
    return teams.interactions.verify(r.headers, r.rawBody, ms.app.id, new Date(), env);
  };
  const acknowledge = () => executes(renderCard(card()))[0];

  test("signingSecretEnv is the app id", () => {
    expect(teams.interactions.signingSecretEnv).toBe("TEAMS_APP_ID");
  });

  test("accepts a correctly signed invoke, fetching the keys once", async () => {
    const activity = ms.invokeActivity({ action: acknowledge() });
    expect(await press(activity)).toEqual({ ok: true });
    expect(await press(activity)).toEqual({ ok: true });
    expect(ms.requestsTo("GET /v1/.well-known/openidconfiguration")).toHaveLength(1);
    expect(ms.requestsTo("GET /v1/.well-known/keys")).toHaveLength(1);
  });

  test("refuses a wrong audience, a wrong issuer, an expired token, an untrusted key, a tampered body and a serviceUrl mismatch", async () => {
    const activity = ms.invokeActivity({ action: acknowledge() });
    expect(await press(activity, { aud: "another-app" })).toMatchObject({ ok: false, reason: expect.stringMatching(/aud/) });
    expect(await press(activity, { iss: "https://sts.windows.net/evil/" })).toMatchObject({ ok: false, reason: expect.stringMatching(/iss/) });
    // Expired beyond the 5 minutes of tolerance; within them it is still accepted.
    expect(await press(activity, { now: new Date(Date.now() - 3600_000 - 6 * 60_000) })).toMatchObject({ ok: false, reason: expect.stringMatching(/expired/) });
    expect(await press(activity, { now: new Date(Date.now() - 3600_000 - 2 * 60_000) })).toEqual({ ok: true });
    expect(await press(activity, { untrustedKey: true })).toMatchObject({ ok: false, reason: "signature mismatch" });
    expect(await press(activity, { serviceUrl: "https://smba.trafficmanager.net/emea/" })).toMatchObject({ ok: false, reason: expect.stringMatching(/serviceUrl/) });

    // A token signed for one body, sent with another serviceUrl in the body.
    const signed = await ms.signedInvoke(activity);
    const tampered = Buffer.from(signed.body.replace(ms.serviceUrl, "https://attacker.example.com/"));
    expect(await teams.interactions.verify(signed.headers, tampered, ms.app.id, new Date(), env)).toMatchObject({ ok: false, reason: expect.stringMatching(/serviceUrl/) });
    // A token whose signature was altered.
    const [h, p, s] = signed.headers.authorization.slice(7).split(".");
    const flipped = `${h}.${p}.${s.slice(0, -4)}${s.slice(-4) === "AAAA" ? "BBBB" : "AAAA"}`;
    expect(await teams.interactions.verify({ authorization: `Bearer ${flipped}` }, signed.rawBody, ms.app.id, new Date(), env)).toMatchObject({ ok: false });
    // No token, or two.
    expect(await teams.interactions.verify({}, signed.rawBody, ms.app.id, new Date(), env)).toMatchObject({ ok: false, reason: expect.stringMatching(/Authorization/) });
    expect(await teams.interactions.verify({ authorization: [signed.headers.authorization, signed.headers.authorization] }, signed.rawBody, ms.app.id, new Date(), env)).toMatchObject({ ok: false });
  });

  test("parse maps an Action.Execute invoke to a ChatInteraction; anything else is null", () => {
    const actions = executes(renderCard(card({ judgeable: true, approval: { planId: "ap_01kaq3m2b4c5d6e7f8g9h0jkmn", planHash: "sha256:abc", provider: "meta_ads", lines: ["x"], decided: null } })));
    const parse = (a: Record<string, unknown>) => teams.interactions.parse(Buffer.from(JSON.stringify(a)));
    const user = { id: "5e7c0a2d-1111-4b8e-9c3a-2f6d8e9a0b1c", name: "Ada Lovelace" };
    const byVerb = (v: string) => ms.invokeActivity({ action: actions.find((a) => a.verb === v) });

    expect(parse(byVerb("operator:acknowledge"))).toEqual({ itemId: "op_01kaq3m2b4c5d6e7f8g9h0jkmn", action: "acknowledge", version: 3, user, teamId: ms.tenant.id });
    expect(parse(byVerb("operator:snooze"))).toMatchObject({ action: "snooze", snoozeMinutes: 60, version: 3 });
    expect(parse(byVerb("feedback:not_a_trend"))).toEqual({ itemId: "op_01kaq3m2b4c5d6e7f8g9h0jkmn", feedback: "not_a_trend", user, teamId: ms.tenant.id });
    expect(parse(byVerb("approve"))).toEqual({ itemId: "op_01kaq3m2b4c5d6e7f8g9h0jkmn", approve: { planId: "ap_01kaq3m2b4c5d6e7f8g9h0jkmn", planHash: "sha256:abc" }, version: 3, user, teamId: ms.tenant.id });
    // Without an AAD object id, the Teams user id.
    expect(parse(ms.invokeActivity({ action: acknowledge(), from: { aadObjectId: "", id: "29:xyz", name: "Bo" } }))).toMatchObject({ user: { id: "29:xyz", name: "Bo" } });

    expect(parse({ ...byVerb("operator:acknowledge"), name: "composeExtension/query" })).toBeNull();
    expect(parse({ ...byVerb("operator:acknowledge"), type: "message" })).toBeNull();
    expect(parse(ms.invokeActivity({ action: { verb: "operator:resolve", data: { item_id: "op_01kaq3m2b4c5d6e7f8g9h0jkmn", action: "acknowledge" } } }))).toBeNull();
    expect(parse(ms.invokeActivity({ action: { verb: "operator:explode", data: { item_id: "op_01kaq3m2b4c5d6e7f8g9h0jkmn", action: "explode" } } }))).toBeNull();
    expect(parse(ms.invokeActivity({ action: { verb: "operator:resolve", data: { item_id: "not an id", action: "resolve" } } }))).toBeNull();
    expect(teams.interactions.parse(Buffer.from("not json"))).toBeNull();
  });

  test("fromWorkspaceOf compares the tenant; the replies are Universal Actions invoke responses", () => {
    const it = teams.interactions.parse(Buffer.from(JSON.stringify(ms.invokeActivity({ action: acknowledge() }))))!;
    expect(teams.interactions.fromWorkspaceOf(it, { tenant_id: ms.tenant.id })).toBe(true);
    expect(teams.interactions.fromWorkspaceOf(it, { tenant_id: "00000000-0000-0000-0000-000000000000" })).toBe(false);
    expect(teams.interactions.fromWorkspaceOf(it, { team_id: ms.tenant.id })).toBe(false);
    expect(teams.interactions.privateReply("This item changed meanwhile.")).toEqual({ statusCode: 200, type: "application/vnd.microsoft.activity.message", value: "This item changed meanwhile." });
    expect(teams.interactions.appliedReply!()).toMatchObject({ statusCode: 200, type: "application/vnd.microsoft.activity.message" });
  });
});
