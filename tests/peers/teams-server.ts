import http from "node:http";
import { randomBytes, randomUUID } from "node:crypto";
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from "jose";
import { bodyServer, listenLocal } from "./listen.ts";
import { startOAuthPeer, type OAuthPeer, type OAuthPeerOptions } from "./oauth-server.ts";

/**
 * A local stand-in for the Microsoft endpoints the Teams chat connector talks to, on 127.0.0.1 (free ports):
 *
 * - Microsoft Graph v1.0 (`graphUrl`): GET /organization, /me/joinedTeams, /teams/{id}, /teams/{id}/channels,
 *   /teams/{id}/channels/{id}, /teams/{id}/installedApps (with `$expand=teamsAppDefinition($expand=bot)`), paged with
 *   `@odata.nextLink` (`pageSize`), errors as Graph answers them: `{ error: { code, message } }` (401
 *   InvalidAuthenticationToken for a missing, unknown or expired token, 404 NotFound).
 * - The tenant's OAuth (authorization code with PKCE, refresh): the oidc-provider peer (oauth-server.ts, `oauth`) on
 *   the identity platform's paths (/organizations/oauth2/v2.0/authorize there; the token endpoint `tenantTokenUrl`
 *   here, which hands requests to it); every access token it issues is accepted by Graph here as the tenant's. Or
 *   skip the browser: `issueGraphToken()`.
 * - The bot's client-credentials token endpoint on the identity platform's paths, /{tenant}/oauth2/v2.0/token: the
 *   app id and password in the form, scope https://api.botframework.com/.default; AADSTS errors otherwise, as Microsoft
 *   shapes them (`{ error, error_description, error_codes, timestamp, trace_id, correlation_id, error_uri }`: 401
 *   invalid_client for a wrong password, 400 unauthorized_client AADSTS700016 for an app not in the directory, 400
 *   invalid_request AADSTS90002 for an unknown tenant). The bot is single-tenant by default, as Azure has created every
 *   bot since 2025-07-31: its token comes from its own tenant (`botTokenUrl`, /{app.tenantId}/...), and the
 *   multi-tenant endpoint (`multiTenantTokenUrl`, /botframework.com/...) answers AADSTS700016; `app.multiTenant` makes
 *   it a legacy multi-tenant bot, which both endpoints serve.
 * - The Bot Framework Connector (`serviceUrl`, ending in /teams/): POST v3/conversations (a new thread in a channel:
 *   `isGroup`, `channelData.channel.id`, an `activity` with an Adaptive Card attachment; answers 201
 *   `{ id: "<channel>;messageid=<activity id>", activityId }`), PUT v3/conversations/{id}/activities/{activityId}
 *   (update), POST v3/conversations/{id}/activities/{activityId} and POST v3/conversations/{id}/activities (a reply in
 *   the thread). A bot token is required (401 `Authorization has been denied for this request.` when missing, unknown
 *   or expired); a channel whose team has not installed the app answers 403 BotNotInConversationRoster.
 * - The Bot Framework's OpenID metadata (`openIdMetadataUrl`) and its JWKS, serving the public halves of RS256 keys
 *   generated at start, each with its channel `endorsements` as Microsoft lists them: the Bot Framework's key (msteams
 *   among others), a key endorsed for webchat only, and one with no endorsements. `signedInvoke(activity)` signs a
 *   token as the Bot Framework signs the requests it POSTs to a bot's messaging endpoint (iss
 *   https://api.botframework.com, aud the app id, serviceUrl claim), with the msteams key unless told otherwise.
 *
 * Knobs: `failNext(match, answer, times)` answers the next matching requests with a status (429 with Retry-After, 5xx,
 * Graph 403, ...); `expireBotTokens()` / `expireGraphToken(token)`; `install` / `uninstall` the app in a team.
 * Every request is recorded in `requests` (method, path, query, authorization, parsed body, status, answer).
 *
 * The env a gateway or worker needs to point at it (`server.env` has them all, plus OUTBOUND_ALLOWLIST=127.0.0.1,
 * since the provider HTTP path refuses loopback otherwise):
 *   TEAMS_GRAPH_URL = graphUrl                 TEAMS_SERVICE_URL = serviceUrl
 *   TEAMS_BOT_TOKEN_URL = botTokenUrl          TEAMS_OPENID_METADATA_URL = openIdMetadataUrl
 *   TEAMS_APP_ID = app.id                      TEAMS_APP_PASSWORD = app.password
 *   TEAMS_BOT_TENANT_ID = app.tenantId (the token URL above overrides the Microsoft one it would name)
 *   TEAMS_CLIENT_ID / TEAMS_CLIENT_SECRET = oauth.clients.post.id / .secret
 *   TEAMS_AUTHORIZE_URL = oauth.authorizationUrl   TEAMS_TOKEN_URL = tenantTokenUrl
 *
 *   const ms = await startTeamsServer({ redirectUris: [REDIRECT] });
 *   const team = ms.addTeam({ displayName: "Marketing", installed: true });
 *   const ch = ms.addChannel(team.id, { displayName: "Alerts" });     // our channel id: `${team.id}/${ch.id}`
 *   const graphToken = ms.issueGraphToken();
 *   ms.failNext("POST /teams/v3/conversations", { status: 429, retryAfter: 7 });
 *   const press = await ms.signedInvoke(ms.invokeActivity({ action: someCardButton }));  // → { headers, body }
 *   const submit = await ms.signedInvoke(ms.submitActivity({ action: someCardButton.fallback }));
 *   await ms.close();
 */

export const BOT_FRAMEWORK_ISSUER = "https://api.botframework.com";
export const BOT_SCOPE = "https://api.botframework.com/.default";

export interface TeamsServerOptions {
  /**
   * The bot's app registration; default a random app id, password and tenant. `multiTenant`: a legacy multi-tenant
   * bot (default false: single-tenant, as Azure creates them now).
   */
  app?: { id: string; password: string; tenantId?: string; multiTenant?: boolean };
  tenant?: { id: string; displayName: string };
  /** Redirect URIs the tenant OAuth client accepts; default the gateway's default callback. */
  redirectUris?: string[];
  /** Graph page size (joinedTeams, channels, installedApps); default 100. */
  pageSize?: number;
  /** Lifetime of bot tokens in seconds (default 3599, as AAD answers). */
  botTokenTtl?: number;
  port?: number;
  /** The tenant OAuth server's fixed port and its clients (the sandbox: the same .env after a restart); default a free port, fixed test clients. */
  oauth?: { port?: number; clients?: OAuthPeerOptions["clients"] };
}

export interface TeamSeed { id?: string; displayName: string; isArchived?: boolean; installed?: boolean }
export interface ChannelSeed { id?: string; displayName: string; membershipType?: "standard" | "private" | "shared"; isArchived?: boolean }
export interface TeamRecord { id: string; displayName: string; isArchived: boolean; installed: boolean; channels: Required<ChannelSeed>[] }

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  /** The Authorization header as sent, or null. */
  authorization: string | null;
  /** JSON or form body as parsed (a form as an object), or null. */
  body: any;
  status: number;
  response: any;
}

/** A thread started by POST v3/conversations: its root activity, each version an update replaced, its replies. */
export interface Thread {
  conversationId: string;
  channelId: string;
  activityId: string;
  activity: any;
  edits: any[];
  replies: { id: string; activity: any }[];
  /** The conversation parameters of the create call (isGroup, channelData, tenantId). */
  params: any;
}

/** Where and by whom a card's button is pressed (defaults: the last thread, a user of the tenant). */
export interface PressSeed { conversationId?: string; from?: { id?: string; aadObjectId?: string; name?: string }; tenantId?: string; serviceUrl?: string }

export type Injection = { status: number; retryAfter?: number | string; code?: string; message?: string };

export type TeamsServer = Awaited<ReturnType<typeof startTeamsServer>>;

const TENANT_TOKEN_PATH = "/organizations/oauth2/v2.0/token";
/** The bot token endpoint of a directory (a tenant id, or botframework.com: the multi-tenant bots' directory). */
const BOT_TOKEN_PATH = /^\/([^/]+)\/oauth2\/v2\.0\/token$/;
const MULTI_TENANT = "botframework.com";
/** Channels Microsoft's Bot Framework key is endorsed for (its JWKS lists msteams among others). */
const BOT_FRAMEWORK_ENDORSEMENTS = ["msteams", "skype", "webchat", "directline", "emulator", "slack", "telegram", "email"];
const DEFAULT_REDIRECT = "http://localhost:3000/api/integrations/oauth/callback";
const GRAPH_SCOPES = ["User.Read", "Team.ReadBasic.All", "Channel.ReadBasic.All", "TeamsAppInstallation.ReadForTeam"];

const graphError = (status: number, code: string, message: string) => ({ status, body: { error: { code, message, innerError: { "request-id": randomUUID(), date: new Date().toISOString() } } } });
const threadId = () => `19:${randomBytes(16).toString("hex")}@thread.tacv2`;

export async function startTeamsServer(opts: TeamsServerOptions = {}) {
  const app = {
    id: opts.app?.id ?? randomUUID(), password: opts.app?.password ?? `pw~${randomBytes(18).toString("base64url")}`,
    tenantId: opts.app?.tenantId ?? randomUUID(), multiTenant: opts.app?.multiTenant ?? false,
  };
  const tenant = opts.tenant ?? { id: randomUUID(), displayName: "Contoso" };
  const knobs = { pageSize: opts.pageSize ?? 100, botTokenTtl: opts.botTokenTtl ?? 3599 };

  const teams = new Map<string, TeamRecord>();
  const graphTokens = new Map<string, { expiresAt: number }>();
  const botTokens = new Map<string, { expiresAt: number }>();
  const threads = new Map<string, Thread>();
  const requests: RecordedRequest[] = [];
  const injections: { match: string; answer: Injection; left: number }[] = [];
  let activityCounter = 1_700_000_000_000;

  // The signing keys the JWKS serves, with their endorsements (none: the property left out), and a key nobody
  // trusts (for forged tokens).
  type SigningKey = { privateKey: CryptoKey; kid: string; jwk: JWK };
  async function signingKey(endorsements?: string[]): Promise<SigningKey> {
    const pair = await generateKeyPair("RS256", { extractable: true });
    const kid = randomBytes(8).toString("hex");
    return { privateKey: pair.privateKey, kid, jwk: { ...(await exportJWK(pair.publicKey)), kid, use: "sig", alg: "RS256", ...(endorsements ? { endorsements } : {}) } };
  }
  const keys = { teams: await signingKey(BOT_FRAMEWORK_ENDORSEMENTS), webchat: await signingKey(["webchat"]), unendorsed: await signingKey(), untrusted: await signingKey() };
  const served = [keys.teams, keys.webchat, keys.unendorsed];

  const oauth: OAuthPeer = await startOAuthPeer({
    redirectUris: opts.redirectUris ?? [DEFAULT_REDIRECT], provider: "Microsoft", scopes: GRAPH_SCOPES, port: opts.oauth?.port, clients: opts.oauth?.clients,
    routes: { authorization: "/organizations/oauth2/v2.0/authorize", token: "/organizations/oauth2/v2.0/token", revocation: "/organizations/oauth2/v2.0/revoke" },
    onAccessToken: (token) => graphTokens.set(token, { expiresAt: Date.now() + 3600_000 }),
    grants: () => [`Microsoft Teams in ${tenant.displayName}`],
  });

  type Answer = { status: number; body?: any; headers?: Record<string, string> };

  function injected(method: string, path: string): Answer | null {
    const i = injections.findIndex((x) => `${method} ${path}`.startsWith(x.match));
    if (i === -1) return null;
    const inj = injections[i];
    if (--inj.left <= 0) injections.splice(i, 1);
    const a = inj.answer;
    const headers: Record<string, string> = a.retryAfter !== undefined ? { "retry-after": String(a.retryAfter) } : {};
    const code = a.code ?? (a.status === 429 ? "TooManyRequests" : a.status >= 500 ? "ServiceUnavailable" : a.status === 403 ? "Forbidden" : "BadRequest");
    return { ...graphError(a.status, code, a.message ?? `Injected ${a.status}`), headers };
  }

  function bearer(auth: string | null, store: Map<string, { expiresAt: number }>): "ok" | "missing" | "invalid" | "expired" {
    const token = /^Bearer (\S+)$/.exec(auth ?? "")?.[1];
    if (!token) return "missing";
    const t = store.get(token);
    if (!t) return "invalid";
    return t.expiresAt > Date.now() ? "ok" : "expired";
  }

  /** One page of `items` at `$skiptoken`, with a nextLink to the rest on this server. */
  function page<T>(items: T[], url: URL): Answer {
    const skip = Number(url.searchParams.get("$skiptoken") ?? "0");
    const value = items.slice(skip, skip + knobs.pageSize);
    const body: any = { "@odata.context": `${base}/v1.0/$metadata`, value };
    if (skip + knobs.pageSize < items.length) {
      const next = new URL(url.href.replace("http://127.0.0.1", base));
      next.searchParams.set("$skiptoken", String(skip + knobs.pageSize));
      body["@odata.nextLink"] = next.href;
    }
    return { status: 200, body };
  }

  const teamJson = (t: TeamRecord) => ({ id: t.id, displayName: t.displayName, description: null, isArchived: t.isArchived, tenantId: tenant.id });
  const channelJson = (c: Required<ChannelSeed>) => ({ id: c.id, displayName: c.displayName, membershipType: c.membershipType, isArchived: c.isArchived, tenantId: tenant.id, email: "", webUrl: `https://teams.microsoft.com/l/channel/${encodeURIComponent(c.id)}` });

  function graph(method: string, path: string, url: URL, auth: string | null): Answer {
    const who = bearer(auth, graphTokens);
    if (who !== "ok") return graphError(401, "InvalidAuthenticationToken", who === "missing" ? "Access token is empty." : who === "expired" ? "Lifetime validation failed, the token is expired." : "IDX14100: JWT is not well formed.");
    if (method !== "GET") return graphError(405, "Request_BadRequest", "Only GET is served here.");
    const parts = path.split("/").slice(2).map(decodeURIComponent); // after /v1.0/
    if (parts[0] === "organization" && parts.length === 1) return page([{ id: tenant.id, displayName: tenant.displayName }], url);
    if (parts[0] === "me" && parts[1] === "joinedTeams" && parts.length === 2) return page([...teams.values()].map(teamJson), url);
    if (parts[0] === "teams" && parts[1]) {
      const team = teams.get(parts[1]);
      if (!team) return graphError(404, "NotFound", `No team found with Group Id ${parts[1]}`);
      if (parts.length === 2) return { status: 200, body: teamJson(team) };
      if (parts[2] === "channels" && parts.length === 3) return page(team.channels.map(channelJson), url);
      if (parts[2] === "channels" && parts.length === 4) {
        const c = team.channels.find((x) => x.id === parts[3]);
        return c ? { status: 200, body: channelJson(c) } : graphError(404, "NotFound", "Channel not found");
      }
      if (parts[2] === "installedApps" && parts.length === 3) {
        const expandBot = /teamsAppDefinition\(\$expand=bot\)/.test(url.searchParams.get("$expand") ?? "");
        const apps = [
          { id: randomUUID(), teamsAppDefinition: { id: randomUUID(), displayName: "Planner", bot: null } },
          ...(team.installed ? [{ id: randomUUID(), teamsAppDefinition: { id: randomUUID(), displayName: "Trendgate", bot: { id: app.id } } }] : []),
        ].map((a) => (expandBot ? a : { id: a.id, teamsAppDefinition: { id: a.teamsAppDefinition.id, displayName: a.teamsAppDefinition.displayName } }));
        return page(apps, url);
      }
    }
    return graphError(400, "BadRequest", `Resource not found for the segment '${parts[0]}'.`);
  }

  /** The client-credentials grant on `directory`'s endpoint: the app is found in its own tenant, and in botframework.com only when multi-tenant. */
  function botToken(directory: string, form: URLSearchParams): Answer {
    const aad = (status: number, error: string, code: number, description: string) => {
      const trace = randomUUID(), correlation = randomUUID(), timestamp = new Date().toISOString().replace("T", " ").slice(0, 19);
      return { status, body: {
        error, error_description: `AADSTS${code}: ${description}\r\nTrace ID: ${trace}\r\nCorrelation ID: ${correlation}\r\nTimestamp: ${timestamp}Z`,
        error_codes: [code], timestamp: `${timestamp}Z`, trace_id: trace, correlation_id: correlation, error_uri: `https://login.microsoftonline.com/error?code=${code}`,
      } };
    };
    const known = directory === app.tenantId || directory === MULTI_TENANT;
    if (!known) return aad(400, "invalid_request", 90002, `Tenant '${directory}' not found. Check to make sure you have the correct tenant ID and are signing into the correct cloud.`);
    if (form.get("grant_type") !== "client_credentials") return aad(400, "unsupported_grant_type", 70003, "The app requested an unsupported grant type.");
    if (form.get("client_id") !== app.id || (directory === MULTI_TENANT && !app.multiTenant)) {
      return aad(400, "unauthorized_client", 700016, `Application with identifier '${form.get("client_id")}' was not found in the directory '${directory === MULTI_TENANT ? "Bot Framework" : "Trendgate bots"}'. This can happen if the application has not been installed by the administrator of the tenant or consented to by any user in the tenant. You may have sent your authentication request to the wrong tenant.`);
    }
    if (form.get("client_secret") !== app.password) return aad(401, "invalid_client", 7000215, "Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app.");
    if (form.get("scope") !== BOT_SCOPE) return aad(400, "invalid_scope", 1002012, `The provided value for scope ${form.get("scope")} is not valid.`);
    const token = `bot.${randomBytes(24).toString("base64url")}`;
    botTokens.set(token, { expiresAt: Date.now() + knobs.botTokenTtl * 1000 });
    return { status: 200, body: { token_type: "Bearer", expires_in: knobs.botTokenTtl, ext_expires_in: knobs.botTokenTtl, access_token: token } };
  }

  /** The team whose channel (a Graph channel id) this is. */
  const teamOfChannel = (channelId: string) => [...teams.values()].find((t) => t.channels.some((c) => c.id === channelId));

  function activityProblem(a: any, isUpdate: boolean): string | null {
    if (!a || typeof a !== "object" || a.type !== "message") return "activity.type must be message";
    const cards = Array.isArray(a.attachments) ? a.attachments : [];
    if (!isUpdate && !cards.length && typeof a.text !== "string") return "the activity has neither text nor attachments";
    for (const c of cards) {
      if (c?.contentType !== "application/vnd.microsoft.card.adaptive" || c.content?.type !== "AdaptiveCard") return "attachments must be Adaptive Cards";
    }
    for (const e of Array.isArray(a.entities) ? a.entities : []) {
      if (e?.type === "mention" && (typeof a.text !== "string" || !a.text.includes(e.text))) return `mention ${e.text} is not in the text`;
    }
    return null;
  }

  function connector(method: string, path: string, body: any, auth: string | null): Answer {
    const who = bearer(auth, botTokens);
    if (who !== "ok") return { status: 401, body: { message: "Authorization has been denied for this request." } };
    const rest = path.slice("/teams/v3/conversations".length);
    if (method === "POST" && rest === "") {
      const channelId = body?.channelData?.channel?.id;
      if (body?.isGroup !== true || typeof channelId !== "string") return graphError(400, "BadArgument", "isGroup and channelData.channel.id are required to start a channel thread");
      const team = teamOfChannel(channelId);
      if (!team) return graphError(404, "ConversationNotFound", "Conversation not found.");
      if (!team.installed) return graphError(403, "BotNotInConversationRoster", "The bot is not part of the conversation roster.");
      const problem = activityProblem(body.activity, false);
      if (problem) return graphError(400, "BadSyntax", problem);
      const activityId = String(++activityCounter);
      const conversationId = `${channelId};messageid=${activityId}`;
      threads.set(conversationId, { conversationId, channelId, activityId, activity: body.activity, edits: [], replies: [], params: body });
      return { status: 201, body: { id: conversationId, activityId } };
    }
    const m = /^\/([^/]+)\/activities(?:\/([^/]+))?$/.exec(rest);
    if (!m) return graphError(404, "NotFound", "No such Connector route");
    const conversationId = decodeURIComponent(m[1]);
    const activityId = m[2] ? decodeURIComponent(m[2]) : undefined;
    const thread = threads.get(conversationId) ?? [...threads.values()].find((t) => t.channelId === conversationId.split(";")[0] && conversationId.startsWith(t.channelId));
    if (!thread) return graphError(404, "ConversationNotFound", "Conversation not found.");
    if (!teamOfChannel(thread.channelId)?.installed) return graphError(403, "BotNotInConversationRoster", "The bot is not part of the conversation roster.");
    if (method === "PUT" && activityId) {
      if (activityId !== thread.activityId && !thread.replies.some((r) => r.id === activityId)) return graphError(404, "ActivityNotFound", "Activity not found.");
      const problem = activityProblem(body, true);
      if (problem) return graphError(400, "BadSyntax", problem);
      thread.edits.push(thread.activity);
      thread.activity = body;
      return { status: 200, body: { id: activityId } };
    }
    if (method === "POST") {
      if (activityId && activityId !== thread.activityId && !thread.replies.some((r) => r.id === activityId)) return graphError(404, "ActivityNotFound", "Activity not found.");
      const problem = activityProblem(body, false);
      if (problem) return graphError(400, "BadSyntax", problem);
      const id = String(++activityCounter);
      thread.replies.push({ id, activity: body });
      return { status: 201, body: { id } };
    }
    return graphError(405, "MethodNotAllowed", `${method} is not served here`);
  }

  /**
   * The tenant's token endpoint: oidc-provider behind it, given the request as the identity platform takes it. The one
   * difference smoothed over: the identity platform accepts `offline_access` among a refresh's scopes (MSAL always
   * sends it), where oidc-provider keeps it out of a refresh token's scope and would refuse the request.
   */
  async function tenantToken(raw: string, headers: http.IncomingHttpHeaders): Promise<Answer> {
    const form = new URLSearchParams(raw);
    if (form.get("grant_type") === "refresh_token" && form.has("scope")) {
      form.set("scope", (form.get("scope") ?? "").split(" ").filter((x) => x && x !== "offline_access").join(" "));
    }
    const res = await fetch(oauth.tokenUrl, { method: "POST", body: form, headers: { "content-type": "application/x-www-form-urlencoded", ...(headers.authorization ? { authorization: headers.authorization } : {}) } });
    const text = await res.text();
    let body: any;
    try { body = JSON.parse(text); } catch { body = text; }
    return { status: res.status, body };
  }

  /** What every press activity carries: who pressed, in which channel thread and tenant, through which service URL. */
  function pressActivity(p: PressSeed): Record<string, unknown> {
    const tenantId = p.tenantId ?? tenant.id;
    const conversationId = p.conversationId ?? [...threads.keys()].at(-1) ?? `${threadId()};messageid=1`;
    return {
      id: `f:${randomBytes(8).toString("hex")}`, timestamp: new Date().toISOString(),
      channelId: "msteams", serviceUrl: p.serviceUrl ?? urls.serviceUrl,
      from: { id: p.from?.id ?? "29:1a2b3c", aadObjectId: p.from?.aadObjectId ?? "5e7c0a2d-1111-4b8e-9c3a-2f6d8e9a0b1c", name: p.from?.name ?? "Ada Lovelace" },
      conversation: { isGroup: true, conversationType: "channel", tenantId, id: conversationId },
      recipient: { id: `28:${app.id}`, name: "Trendgate" },
      channelData: { tenant: { id: tenantId }, channel: { id: conversationId.split(";")[0] }, source: { name: "message" } },
      replyToId: conversationId.split("=").at(-1),
    };
  }

  let base = "";
  const server = bodyServer((req, res, url, raw) => {
    const method = req.method ?? "GET";
    const path = url.pathname;
    const auth = typeof req.headers.authorization === "string" ? req.headers.authorization : null;
    const form = /x-www-form-urlencoded/.test(req.headers["content-type"] ?? "");
    let body: any = null;
    try { body = raw ? (form ? Object.fromEntries(new URLSearchParams(raw)) : JSON.parse(raw)) : null; } catch { body = raw; }
    const send = (answer: Answer) => {
      requests.push({ method, path, query: Object.fromEntries(url.searchParams), authorization: auth, body, status: answer.status, response: answer.body ?? null });
      res.writeHead(answer.status, { "content-type": "application/json; charset=utf-8", ...answer.headers });
      res.end(answer.body === undefined ? "" : JSON.stringify(answer.body));
    };
    if (method === "POST" && path === TENANT_TOKEN_PATH && !injections.some((x) => `${method} ${path}`.startsWith(x.match))) {
      void tenantToken(raw, req.headers).then(send, (e) => send({ status: 500, body: { error: "server_error", error_description: String(e) } }));
      return;
    }

    let answer: Answer | null = injected(method, path);
    if (!answer) {
      if (method === "GET" && path === "/v1/.well-known/openidconfiguration") {
        answer = { status: 200, body: { issuer: BOT_FRAMEWORK_ISSUER, authorization_endpoint: "https://invalid.botframework.com", jwks_uri: `${base}/v1/.well-known/keys`, id_token_signing_alg_values_supported: ["RS256"], token_endpoint_auth_methods_supported: ["private_key_jwt"] } };
      } else if (method === "GET" && path === "/v1/.well-known/keys") {
        answer = { status: 200, body: { keys: served.map((k) => k.jwk) } };
      } else if (method === "POST" && BOT_TOKEN_PATH.test(path)) {
        answer = botToken(decodeURIComponent(BOT_TOKEN_PATH.exec(path)![1]), new URLSearchParams(raw));
      } else if (path.startsWith("/v1.0/")) {
        answer = graph(method, path, url, auth);
      } else if (path.startsWith("/teams/v3/conversations")) {
        answer = connector(method, path, body, auth);
      } else {
        answer = graphError(404, "NotFound", `${method} ${path} is not served here`);
      }
    }
    send(answer);
  });
  base = await listenLocal(server as http.Server, opts.port);

  const urls = {
    url: base,
    graphUrl: `${base}/v1.0/`,
    serviceUrl: `${base}/teams/`,
    /** The bot's token endpoint in its own tenant. */
    botTokenUrl: `${base}/${app.tenantId}/oauth2/v2.0/token`,
    /** The multi-tenant bots' endpoint (AADSTS700016 for a single-tenant bot). */
    multiTenantTokenUrl: `${base}/${MULTI_TENANT}/oauth2/v2.0/token`,
    openIdMetadataUrl: `${base}/v1/.well-known/openidconfiguration`,
    /** The tenant's token endpoint (oidc-provider behind it, see tenantToken). */
    tenantTokenUrl: `${base}${TENANT_TOKEN_PATH}`,
  };

  return {
    ...urls,
    app,
    tenant,
    oauth,
    knobs,
    requests,
    threads,
    teams,
    env: {
      TEAMS_GRAPH_URL: urls.graphUrl, TEAMS_SERVICE_URL: urls.serviceUrl, TEAMS_BOT_TOKEN_URL: urls.botTokenUrl, TEAMS_OPENID_METADATA_URL: urls.openIdMetadataUrl,
      TEAMS_APP_ID: app.id, TEAMS_APP_PASSWORD: app.password, TEAMS_BOT_TENANT_ID: app.tenantId,
      TEAMS_CLIENT_ID: oauth.clients.post.id, TEAMS_CLIENT_SECRET: oauth.clients.post.secret, TEAMS_AUTHORIZE_URL: oauth.authorizationUrl, TEAMS_TOKEN_URL: urls.tenantTokenUrl,
      OUTBOUND_ALLOWLIST: "127.0.0.1",
    } as Record<string, string>,

    addTeam(seed: TeamSeed): TeamRecord {
      const t: TeamRecord = { id: seed.id ?? randomUUID(), displayName: seed.displayName, isArchived: seed.isArchived ?? false, installed: seed.installed ?? false, channels: [] };
      teams.set(t.id, t);
      return t;
    },
    addChannel(teamId: string, seed: ChannelSeed): Required<ChannelSeed> {
      const c = { id: seed.id ?? threadId(), displayName: seed.displayName, membershipType: seed.membershipType ?? "standard", isArchived: seed.isArchived ?? false };
      teams.get(teamId)!.channels.push(c);
      return c;
    },
    install(teamId: string) { teams.get(teamId)!.installed = true; },
    uninstall(teamId: string) { teams.get(teamId)!.installed = false; },

    /** A Graph token of the tenant without the browser. */
    issueGraphToken(ttlSeconds = 3600): string {
      const token = `graph.${randomBytes(24).toString("base64url")}`;
      graphTokens.set(token, { expiresAt: Date.now() + ttlSeconds * 1000 });
      return token;
    },
    expireGraphToken(token: string) { graphTokens.set(token, { expiresAt: 0 }); },
    /** Every bot token issued so far expires (the Connector then answers 401). */
    expireBotTokens() { for (const t of botTokens.values()) t.expiresAt = 0; },

    /** The next `times` requests whose "METHOD /path" starts with `match` get `answer` instead. */
    failNext(match: string, answer: Injection, times = 1) { injections.push({ match, answer, left: times }); },

    /** Requests whose "METHOD /path" starts with `match`. */
    requestsTo: (match: string) => requests.filter((r) => `${r.method} ${r.path}`.startsWith(match)),

    /**
     * The invoke activity Teams sends when `action` (an Action.Execute of a posted card) is pressed, in the channel of
     * `conversationId`, by `from` (default a user of the tenant).
     */
    invokeActivity(p: PressSeed & { action: { verb: string; data: unknown } }): Record<string, unknown> {
      return {
        ...pressActivity(p), type: "invoke", name: "adaptiveCard/action",
        value: { action: { type: "Action.Execute", verb: p.action.verb, data: p.action.data }, trigger: "manual" },
      };
    },

    /**
     * The message activity Teams sends when an Action.Submit (`action`, e.g. an Action.Execute's fallback) is pressed:
     * the Submit's data as `value`, no text.
     */
    submitActivity(p: PressSeed & { action: { data: unknown } }): Record<string, unknown> {
      return { ...pressActivity(p), type: "message", value: p.action.data };
    },

    /**
     * The request the Bot Framework would POST to our messaging endpoint for `activity`: a JWT signed with the key the
     * JWKS serves. `token` overrides claims (aud, iss, serviceUrl, exp in seconds from now, iat), signs with another
     * served key (`key`: "webchat" endorsed for webchat only, "unendorsed" with no endorsements) or with an untrusted
     * one (`untrustedKey`); `now` shifts the clock.
     */
    async signedInvoke(activity: Record<string, unknown>, token: { aud?: string; iss?: string; serviceUrl?: string; expiresIn?: number; untrustedKey?: boolean; key?: keyof typeof keys; now?: Date } = {}) {
      const now = Math.floor((token.now ?? new Date()).getTime() / 1000);
      const key = keys[token.untrustedKey ? "untrusted" : token.key ?? "teams"];
      // An untrusted key signs under the trusted key's id, as a forger would.
      const kid = key === keys.untrusted ? keys.teams.kid : key.kid;
      const jwt = await new SignJWT({ serviceUrl: token.serviceUrl ?? activity.serviceUrl })
        .setProtectedHeader({ alg: "RS256", kid, typ: "JWT" })
        .setIssuer(token.iss ?? BOT_FRAMEWORK_ISSUER)
        .setAudience(token.aud ?? app.id)
        .setIssuedAt(now - 5)
        .setNotBefore(now - 5)
        .setExpirationTime(now + (token.expiresIn ?? 3600))
        .sign(key.privateKey);
      const body = JSON.stringify(activity);
      return { headers: { authorization: `Bearer ${jwt}`, "content-type": "application/json; charset=utf-8" } as Record<string, string>, body, rawBody: Buffer.from(body) };
    },

    /** Forgets threads, requests, injections and the Graph seed (keeps tokens and keys). */
    reset() {
      teams.clear(); threads.clear(); requests.length = 0; injections.length = 0;
      knobs.pageSize = opts.pageSize ?? 100;
    },

    async close() {
      await oauth.close();
      await new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); });
    },
  };
}
