import http from "node:http";
import { randomBytes } from "node:crypto";
import { authorizeEndpoint } from "./consent-page.ts";
import { bodyServer, listenLocal } from "./listen.ts";
import { SlackSpec } from "./slack-spec.ts";

/**
 * A local stand-in for Slack on 127.0.0.1 that speaks the Web API as the official client (@slack/web-api) uses it,
 * for the methods the chat connector calls, and checks every request and every response against Slack's own API
 * description (tests/peers/slack-spec.ts). A mismatch is a test failure: the request is answered with HTTP 500
 * (so the client fails loudly) and recorded in `violations`; call `assertConforming()` after each test.
 *
 *   const slack = await startSlackServer();
 *   // SLACK_API_URL = slack.url (ends in "/api/"), SLACK_AUTHORIZE_URL = slack.authorizeUrl,
 *   // SLACK_CLIENT_ID / SLACK_CLIENT_SECRET = slack.app.clientId / .clientSecret
 *   slack.addChannel({ id: "C0GENERAL01", name: "general", botMember: true });
 *   const token = slack.issueToken();            // a bot token without the browser (or: slack.authorize() -> code)
 *   slack.inject("chat.postMessage", { status: 429, retryAfter: 3 });   // the next call to it is throttled
 *   slack.inject("chat.postMessage", { error: "service_unavailable" }, 2);  // Slack's own outage answers
 *   slack.inject("chat.postMessage", { delayMs: 12_000 }); // posted at once, answered late (past the client's timeout)
 *   await slack.restart(1500);                  // refuses connections for 1.5 s, then answers again (same port)
 *   slack.messages("C0GENERAL01");              // what was posted (and edited) there
 *   slack.calls("chat.update");                 // recorded calls: params, token, status, response body
 *   await slack.close();
 *
 * Methods: oauth.v2.access (code and refresh_token grants; client id and secret in the form or HTTP Basic; token
 * rotation on or off), auth.revoke, conversations.list (types, exclude_archived, limit, cursor; a page may hold fewer
 * than asked, see `setPageCap`), conversations.info, conversations.join, chat.postMessage, chat.update. Bodies as
 * Slack takes them: a query string, a form, or JSON (write methods, with a Bearer token). Failures as Slack answers
 * them: HTTP 200 with `{ok:false, error}` (not_authed, invalid_auth, token_revoked, token_expired, missing_scope,
 * channel_not_found, not_in_channel, is_archived, method_not_supported_for_channel_type for joining a private
 * channel, no_text, invalid_blocks, msg_too_long, message_not_found, cant_update_message, invalid_cursor, invalid_code,
 * bad_client_secret, bad_redirect_uri, invalid_refresh_token, ...) and HTTP 429 with Retry-After.
 *
 * The browser step: GET `authorizeUrl?client_id&scope&redirect_uri&state` approves at once and redirects to
 * redirect_uri with `code` and `state`, or with `error=access_denied` after `setAuthorizeOutcome("deny")`; with
 * `consentPage: true` (the sandbox) it shows the shared consent page instead, whose Approve / Deny decides.
 * `blockActionsBody()` builds the form body Slack would POST to the interactivity URL when a button of a posted
 * message is pressed (sign it with signSlackRequest from the connector's interactions module).
 */

export interface SlackChannelSeed {
  /** C… (or G… for an old-style private channel), at least 9 characters as Slack's description requires. */
  id: string;
  name: string;
  isPrivate?: boolean;
  isArchived?: boolean;
  /** The app's bot user is in the channel. */
  botMember?: boolean;
}

export interface StoredMessage {
  ts: string;
  text: string;
  blocks: any[] | null;
  threadTs: string | null;
  /** The posting user (the bot user for our messages). */
  user: string;
  /** Earlier versions, oldest first, each replaced by a chat.update. */
  edits: { text: string; blocks: any[] | null }[];
}

export interface RecordedCall {
  method: string;
  httpMethod: string;
  params: Record<string, unknown>;
  /** The token the call carried (Bearer or `token` parameter), or null. */
  token: string | null;
  contentType: string | null;
  status: number;
  response: any;
}

/** The answer to the next call(s) of a method, instead of the real one. */
export type SlackInjection =
  | { status: 429; retryAfter?: number | string | null }
  | { error: string }
  | { status: 500 | 502 | 503 | 504 }
  /** The call is done as usual (a post is in the channel), then its answer is held this long: a slow write. */
  | { delayMs: number }
  /** The connection is dropped before anything is done (ECONNRESET at the caller). */
  | { reset: true };

export interface SlackServerOptions {
  team?: { id: string; name: string };
  botUserId?: string;
  app?: { clientId: string; clientSecret: string; id?: string };
  /** Token rotation: access tokens expire (after expiresIn seconds, default 43,200) and come with a refresh token. */
  rotation?: boolean;
  expiresIn?: number;
  /** Show the consent page at the authorization URL instead of approving at once. */
  consentPage?: boolean;
  /** A fixed port (the sandbox); default a free one. */
  port?: number;
}

interface TokenRecord { token: string; scopes: Set<string>; expiresAt: number | null; revoked: boolean }
interface Channel { id: string; name: string; isPrivate: boolean; isArchived: boolean; botMember: boolean; created: number }
type Answer = { status: number; body: any; headers?: Record<string, string> };

const DEFAULT_SCOPES = ["channels:read", "groups:read", "chat:write", "channels:join"];
const CREATOR = "U0CREATOR01";
const INSTALLER = "U0INSTALL01";

const ok = (body: object = {}): Answer => ({ status: 200, body: { ok: true, ...body } });
const fail = (error: string): Answer => ({ status: 200, body: { ok: false, error } });

export type SlackServer = Awaited<ReturnType<typeof startSlackServer>>;

export async function startSlackServer(opts: SlackServerOptions = {}) {
  const spec = new SlackSpec();
  const team = opts.team ?? { id: "T0TEAM00001", name: "Trendgate Test" };
  const botUserId = opts.botUserId ?? "U0BOTUSER01";
  const botId = "B0BOTID0001";
  const app = { id: opts.app?.id ?? "A0APPID0001", clientId: opts.app?.clientId ?? "1111111111.2222222222", clientSecret: opts.app?.clientSecret ?? "slack-test-client-secret" };

  let rotation = opts.rotation ?? false;
  let expiresIn = opts.expiresIn ?? 43_200;
  let pageCap: number | null = null;
  let authorizeOutcome: "approve" | "deny" = "approve";
  let tsCounter = 0;

  const channels = new Map<string, Channel>();
  const tokens = new Map<string, TokenRecord>();
  const codes = new Map<string, { redirectUri: string | null; scopes: string[]; used: boolean; expiresAt: number }>();
  const refreshTokens = new Map<string, { scopes: string[]; used: boolean }>();
  const messagesByChannel = new Map<string, StoredMessage[]>();
  const injected = new Map<string, SlackInjection[]>();
  const recorded: RecordedCall[] = [];
  const violations: string[] = [];

  const secret = (prefix: string) => `${prefix}${randomBytes(12).toString("hex")}`;
  const nextTs = () => {
    tsCounter += 1;
    return `${Math.floor(Date.now() / 1000)}.${String(tsCounter).padStart(6, "0")}`;
  };

  function mintToken(scopes: string[]): { access: string; refresh?: string; expiresIn?: number } {
    const access = secret(rotation ? "xoxe.xoxb-1-" : "xoxb-1-");
    tokens.set(access, { token: access, scopes: new Set(scopes), expiresAt: rotation ? Date.now() + expiresIn * 1000 : null, revoked: false });
    if (!rotation) return { access };
    const refresh = secret("xoxe-1-");
    refreshTokens.set(refresh, { scopes, used: false });
    return { access, refresh, expiresIn };
  }

  function tokenResponse(scopes: string[]): Answer {
    const t = mintToken(scopes);
    return ok({
      app_id: app.id,
      authed_user: { id: INSTALLER },
      scope: scopes.join(","),
      token_type: "bot",
      access_token: t.access,
      bot_user_id: botUserId,
      team: { id: team.id, name: team.name },
      enterprise: null,
      is_enterprise_install: false,
      ...(t.refresh ? { refresh_token: t.refresh, expires_in: t.expiresIn } : {}),
    });
  }

  const conversation = (c: Channel) => ({
    id: c.id,
    name: c.name,
    is_channel: true,
    is_group: c.id.startsWith("G"),
    is_im: false,
    is_mpim: false,
    is_private: c.isPrivate,
    created: c.created,
    is_archived: c.isArchived,
    is_general: c.name === "general",
    unlinked: 0,
    name_normalized: c.name,
    is_shared: false,
    is_org_shared: false,
    is_pending_ext_shared: false,
    pending_shared: [],
    parent_conversation: null,
    creator: CREATOR,
    is_ext_shared: false,
    shared_team_ids: [team.id],
    pending_connected_team_ids: [],
    is_member: c.botMember,
    topic: { value: "", creator: "", last_set: 0 },
    purpose: { value: "", creator: "", last_set: 0 },
    previous_names: [],
  });

  /** A channel the bot can see: every public one, a private one only when it is a member. */
  function visibleChannel(ref: unknown): Channel | null {
    if (typeof ref !== "string") return null;
    const c = channels.get(ref) ?? [...channels.values()].find((x) => `#${x.name}` === ref || x.name === ref);
    return c && (!c.isPrivate || c.botMember) ? c : null;
  }

  // ---- the Web API methods ------------------------------------------------------------------------------------------

  function oauthAccess(p: Record<string, unknown>, basic: { id: string; secret: string } | null): Answer {
    const clientId = basic?.id ?? p.client_id;
    const clientSecret = basic?.secret ?? p.client_secret;
    if (clientId !== app.clientId) return fail("invalid_client_id");
    if (clientSecret !== app.clientSecret) return fail("bad_client_secret");
    const grant = p.grant_type ?? "authorization_code";
    if (grant === "refresh_token") {
      const r = typeof p.refresh_token === "string" ? refreshTokens.get(p.refresh_token) : undefined;
      if (!r || r.used) return fail("invalid_refresh_token");
      r.used = true; // a refresh answers a new refresh token, which replaces this one
      return tokenResponse(r.scopes);
    }
    if (grant !== "authorization_code") return fail("invalid_grant_type");
    const c = typeof p.code === "string" ? codes.get(p.code) : undefined;
    if (!c || c.used || c.expiresAt < Date.now()) return fail("invalid_code");
    if (c.redirectUri !== null && p.redirect_uri !== c.redirectUri) return fail("bad_redirect_uri");
    c.used = true;
    return tokenResponse(c.scopes);
  }

  function authenticate(token: string | null): TokenRecord | Answer {
    if (!token) return fail("not_authed");
    const t = tokens.get(token);
    if (!t) return fail("invalid_auth");
    if (t.revoked) return fail("token_revoked");
    if (t.expiresAt !== null && t.expiresAt <= Date.now()) return fail("token_expired");
    return t;
  }

  const needsScope = (t: TokenRecord, ...scopes: string[]): Answer | null => (scopes.every((s) => t.scopes.has(s)) ? null : fail("missing_scope"));
  const bool = (v: unknown) => v === true || v === "true" || v === "1";

  function conversationsList(t: TokenRecord, p: Record<string, unknown>): Answer {
    const types = String(p.types ?? "public_channel").split(",").map((s) => s.trim());
    if (types.some((x) => !["public_channel", "private_channel", "mpim", "im"].includes(x))) return fail("invalid_types");
    const missing = (types.includes("public_channel") && needsScope(t, "channels:read")) || (types.includes("private_channel") && needsScope(t, "groups:read"));
    if (missing) return missing;
    const limit = p.limit === undefined ? 100 : Number(p.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) return fail("invalid_limit");
    let offset = 0;
    if (p.cursor !== undefined && p.cursor !== "") {
      const m = /^offset:(\d+)$/.exec(Buffer.from(String(p.cursor), "base64").toString("utf8"));
      if (!m) return fail("invalid_cursor");
      offset = Number(m[1]);
    }
    const all = [...channels.values()]
      .filter((c) => (c.isPrivate ? types.includes("private_channel") && c.botMember : types.includes("public_channel")))
      .filter((c) => !(bool(p.exclude_archived) && c.isArchived));
    const size = Math.min(limit, pageCap ?? limit);
    const page = all.slice(offset, offset + size);
    const next = offset + size < all.length ? Buffer.from(`offset:${offset + size}`).toString("base64") : "";
    return ok({ channels: page.map(conversation), response_metadata: { next_cursor: next } });
  }

  function conversationsInfo(t: TokenRecord, p: Record<string, unknown>): Answer {
    const c = visibleChannel(p.channel);
    if (!c) return fail("channel_not_found");
    return needsScope(t, c.isPrivate ? "groups:read" : "channels:read") ?? ok({ channel: conversation(c) });
  }

  function conversationsJoin(t: TokenRecord, p: Record<string, unknown>): Answer {
    const denied = needsScope(t, "channels:join");
    if (denied) return denied;
    const c = typeof p.channel === "string" ? channels.get(p.channel) : undefined;
    if (!c) return fail("channel_not_found");
    if (c.isPrivate) return fail("method_not_supported_for_channel_type"); // a bot must be invited into a private channel
    if (c.isArchived) return fail("is_archived");
    if (c.botMember) return ok({ channel: conversation(c), warning: "already_in_channel", response_metadata: { warnings: ["already_in_channel"] } });
    c.botMember = true;
    return ok({ channel: conversation(c) });
  }

  /** text and blocks as sent (blocks: a JSON string in a form, an array in JSON); an Answer when Slack would refuse. */
  function content(p: Record<string, unknown>): { text: string; blocks: any[] | null } | Answer {
    let blocks: any[] | null = null;
    if (p.blocks !== undefined) {
      let parsed: unknown = p.blocks;
      if (typeof parsed === "string") { try { parsed = JSON.parse(parsed); } catch { return fail("invalid_blocks_format"); } }
      if (!Array.isArray(parsed)) return fail("invalid_blocks_format");
      if (blockKitProblems(parsed).length) return fail("invalid_blocks");
      blocks = parsed;
    }
    const text = typeof p.text === "string" ? p.text : "";
    if (!text && !blocks?.length) return fail("no_text");
    if (text.length > 40_000) return fail("msg_too_long");
    return { text, blocks };
  }

  function postMessage(t: TokenRecord, p: Record<string, unknown>): Answer {
    const denied = needsScope(t, "chat:write");
    if (denied) return denied;
    const c = visibleChannel(p.channel);
    if (!c) return fail("channel_not_found");
    if (c.isArchived) return fail("is_archived");
    if (!c.botMember && !t.scopes.has("chat:write.public")) return fail("not_in_channel");
    const body = content(p);
    if ("status" in body) return body;
    const ts = nextTs();
    const threadTs = typeof p.thread_ts === "string" && p.thread_ts ? p.thread_ts : null;
    const list = messagesByChannel.get(c.id) ?? [];
    list.push({ ts, text: body.text, blocks: body.blocks, threadTs, user: botUserId, edits: [] });
    messagesByChannel.set(c.id, list);
    return ok({
      channel: c.id,
      ts,
      message: {
        type: "message", text: body.text, user: botUserId, bot_id: botId, team: team.id, ts,
        ...(body.blocks ? { blocks: body.blocks } : {}),
        ...(threadTs ? { thread_ts: threadTs, parent_user_id: botUserId } : {}),
      },
    });
  }

  function update(t: TokenRecord, p: Record<string, unknown>): Answer {
    const denied = needsScope(t, "chat:write");
    if (denied) return denied;
    const c = visibleChannel(p.channel);
    if (!c) return fail("channel_not_found");
    const m = (messagesByChannel.get(c.id) ?? []).find((x) => x.ts === p.ts);
    if (!m) return fail("message_not_found");
    if (m.user !== botUserId) return fail("cant_update_message");
    const body = content(p);
    if ("status" in body) return body;
    m.edits.push({ text: m.text, blocks: m.blocks });
    m.text = body.text;
    if (body.blocks) m.blocks = body.blocks; // blocks left out are kept (chat.update's documented behaviour)
    return ok({
      channel: c.id, ts: m.ts, text: m.text,
      message: { type: "message", text: m.text, user: botUserId, bot_id: botId, team: team.id, ...(m.blocks ? { blocks: m.blocks } : {}), edited: { user: botUserId, ts: nextTs() } },
    });
  }

  function revoke(t: TokenRecord, p: Record<string, unknown>): Answer {
    if (!bool(p.test)) t.revoked = true;
    return ok({ revoked: true });
  }

  const METHODS: Record<string, (t: TokenRecord, p: Record<string, unknown>) => Answer> = {
    "auth.revoke": revoke,
    "conversations.list": conversationsList,
    "conversations.info": conversationsInfo,
    "conversations.join": conversationsJoin,
    "chat.postMessage": postMessage,
    "chat.update": update,
  };

  // ---- HTTP ---------------------------------------------------------------------------------------------------------

  function send(res: http.ServerResponse, a: Answer) {
    res.writeHead(a.status, { "content-type": "application/json; charset=utf-8", ...a.headers });
    res.end(JSON.stringify(a.body));
  }

  function violation(res: http.ServerResponse, problems: string[]) {
    violations.push(...problems);
    if (res.headersSent) return;
    res.writeHead(500, { "content-type": "text/plain" });
    res.end(`slack peer: not as Slack's API description says:\n${problems.join("\n")}`);
  }

  const scopesOf = (q: URLSearchParams) => (q.get("scope") ?? "").split(",").filter(Boolean);
  const authorizePage = authorizeEndpoint({
    provider: "Slack", clientId: app.clientId,
    check(q) {
      const scopes = scopesOf(q);
      return !scopes.length || scopes.some((s) => !/^[a-z_]+(:[a-z_.]+)+$/.test(s)) ? `invalid_scope: ${q.get("scope")} (scopes are separated by commas)` : null;
    },
    grants: () => [`Workspace ${team.name} (${team.id})`, ...[...channels.values()].filter((c) => !c.isArchived).map((c) => `#${c.name}`)],
    issue: (q) => ({ code: issueCode(scopesOf(q), q.get("redirect_uri")) }),
    decide: () => (opts.consentPage ? null : authorizeOutcome),
  });

  function issueCode(scopes: string[], redirectUri: string | null): string {
    const code = secret("code-");
    codes.set(code, { redirectUri, scopes, used: false, expiresAt: Date.now() + 10 * 60_000 });
    return code;
  }

  const server = bodyServer((req, res, url, raw) => {
    try {
      handle(req, res, url, raw);
    } catch (e) {
      // A bug of this peer (or a checker failure) must fail the test, not hang the client until its timeout.
      violation(res, [`slack peer failed: ${e instanceof Error ? e.stack : String(e)}`]);
    }
  });

  function handle(req: http.IncomingMessage, res: http.ServerResponse, url: URL, raw: string) {
    if (url.pathname === "/oauth/v2/authorize") return authorizePage(req, res, url, raw);
    const m = /^\/api\/([A-Za-z0-9._]+)$/.exec(url.pathname);
    if (!m) { res.writeHead(404); res.end(); return; }
    const method = m[1];

    // Parameters from the query and the body, as Slack reads them.
    const contentType = raw ? (req.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase() || null : null;
    const params: Record<string, unknown> = Object.fromEntries(url.searchParams);
    let json = false;
    if (raw && contentType === "application/json") {
      let parsed: unknown;
      try { parsed = JSON.parse(raw); } catch { return send(res, fail("invalid_json")); }
      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return send(res, fail("json_not_object"));
      Object.assign(params, parsed);
      json = true;
    } else if (raw && contentType === "application/x-www-form-urlencoded") {
      Object.assign(params, Object.fromEntries(new URLSearchParams(raw)));
    } else if (raw) {
      return send(res, fail("invalid_post_type"));
    }
    const auth = req.headers.authorization ?? "";
    const bearer = /^Bearer (\S+)$/.exec(auth)?.[1] ?? null;
    const basic = /^Basic (\S+)$/.exec(auth)?.[1];
    const basicCreds = basic ? (([id, ...rest]) => ({ id, secret: rest.join(":") }))(Buffer.from(basic, "base64").toString("utf8").split(":")) : null;
    const token = bearer ?? (typeof params.token === "string" ? params.token : null);

    const call: RecordedCall = { method, httpMethod: req.method ?? "", params, token, contentType, status: 0, response: null };
    recorded.push(call);
    const known = method === "oauth.v2.access" || method in METHODS;
    if (!known) { call.status = 200; call.response = { ok: false, error: "unknown_method" }; return send(res, fail("unknown_method")); }

    const problems = spec.checkRequest(method, { params, json, contentType, bearer: bearer !== null });
    if (problems.length) return violation(res, problems);

    let answer: Answer;
    const queued = injected.get(method);
    let inj = queued?.shift();
    let holdMs = 0;
    if (inj && "reset" in inj) { call.status = 0; req.socket.destroy(); return; }
    if (inj && "delayMs" in inj) { holdMs = inj.delayMs; inj = undefined; }
    if (inj && "error" in inj) answer = fail(inj.error);
    else if (inj && inj.status === 429) {
      answer = { status: 429, body: { ok: false, error: "ratelimited" }, headers: inj.retryAfter === null ? {} : { "retry-after": String(inj.retryAfter ?? 1) } };
    } else if (inj) {
      call.status = inj.status;
      res.writeHead(inj.status, { "content-type": "text/html" });
      res.end("<html><body>Slack is having trouble</body></html>");
      return;
    } else if (method === "oauth.v2.access") {
      answer = oauthAccess(params, basicCreds);
    } else {
      const t = authenticate(token);
      answer = "token" in t ? METHODS[method](t, params) : t;
    }

    const wrong = spec.checkResponse(method, answer.status, answer.body);
    if (wrong.length) return violation(res, wrong);
    call.status = answer.status;
    call.response = answer.body;
    if (!holdMs) return send(res, answer);
    // Slack has acted; the caller may give up waiting meanwhile (its answer is then dropped).
    setTimeout(() => { if (!res.destroyed) send(res, answer); }, holdMs);
  }
  const origin = await listenLocal(server, opts.port);
  const port = Number(new URL(origin).port);

  const api = {
    /** The Web API base (slackApiUrl / SLACK_API_URL), ending in "/api/". */
    url: `${origin}/api/`,
    /** The browser's authorization page (SLACK_AUTHORIZE_URL). */
    authorizeUrl: `${origin}/oauth/v2/authorize`,
    app: { id: app.id, clientId: app.clientId, clientSecret: app.clientSecret },
    team,
    botUserId,

    // ---- seeding ----
    addChannel(seed: SlackChannelSeed) {
      channels.set(seed.id, {
        id: seed.id, name: seed.name, isPrivate: seed.isPrivate ?? false, isArchived: seed.isArchived ?? false,
        botMember: seed.botMember ?? false, created: 1_700_000_000 + channels.size,
      });
    },
    /** Invites the bot into a channel (or removes it). */
    setMember(channelId: string, member: boolean) {
      const c = channels.get(channelId);
      if (!c) throw new Error(`no channel ${channelId}`);
      c.botMember = member;
    },
    /** A member archives the channel (conversations.archive): it stays listed as archived and takes no post. */
    archive(channelId: string) {
      const c = channels.get(channelId);
      if (!c) throw new Error(`no channel ${channelId}`);
      c.isArchived = true;
    },
    channel(channelId: string) {
      const c = channels.get(channelId);
      return c ? { ...c } : undefined;
    },
    /** A bot token as an installation would give (default scopes: the connector's). */
    issueToken(scopes: string[] = DEFAULT_SCOPES): string {
      return mintToken(scopes).access;
    },
    /** A code for oauth.v2.access, as if a user had approved the app in the browser. */
    authorize(p: { scopes?: string[]; redirectUri?: string | null } = {}): string {
      return issueCode(p.scopes ?? DEFAULT_SCOPES, p.redirectUri ?? null);
    },
    setAuthorizeOutcome(outcome: "approve" | "deny") { authorizeOutcome = outcome; },
    setRotation(on: boolean, seconds = 43_200) { rotation = on; expiresIn = seconds; },
    expireToken(token: string) { const t = tokens.get(token); if (t) t.expiresAt = Date.now() - 1; },
    tokenState(token: string): "active" | "revoked" | "expired" | "unknown" {
      const t = tokens.get(token);
      return !t ? "unknown" : t.revoked ? "revoked" : t.expiresAt !== null && t.expiresAt <= Date.now() ? "expired" : "active";
    },
    /** conversations.list answers at most n channels a page, whatever `limit` asks (null: as asked). */
    setPageCap(n: number | null) { pageCap = n; },
    /** The next `times` calls of `method` get this answer instead of the real one. */
    inject(method: string, answer: SlackInjection, times = 1) {
      const q = injected.get(method) ?? [];
      for (let i = 0; i < times; i++) q.push(answer);
      injected.set(method, q);
    },

    // ---- observing ----
    calls(method?: string): RecordedCall[] { return recorded.filter((c) => !method || c.method === method); },
    messages(channelId: string): StoredMessage[] { return messagesByChannel.get(channelId) ?? []; },
    message(channelId: string, ts: string): StoredMessage | undefined { return messagesByChannel.get(channelId)?.find((x) => x.ts === ts); },
    violations,
    /** Throws when any request or response so far departed from Slack's API description. */
    assertConforming() {
      if (violations.length) throw new Error(`Slack API description violations:\n${violations.join("\n")}`);
    },

    /**
     * The form body Slack POSTs to the interactivity URL when `user` presses the button `actionId` of a posted
     * message (a real-shaped `block_actions` payload, the button's own value included).
     */
    blockActionsBody(channelId: string, ts: string, actionId: string, user: { id: string; username?: string } = { id: "U0OPERATOR1", username: "ada" }): string {
      const msg = api.message(channelId, ts);
      if (!msg) throw new Error(`no message ${ts} in ${channelId}`);
      const block = (msg.blocks ?? []).find((b) => b.type === "actions" && b.elements?.some((e: any) => e.action_id === actionId));
      const button = block?.elements.find((e: any) => e.action_id === actionId);
      if (!button) throw new Error(`message ${ts} has no button ${actionId}`);
      const c = channels.get(channelId)!;
      const payload = {
        type: "block_actions",
        user: { id: user.id, username: user.username ?? "operator", name: user.username ?? "operator", team_id: team.id },
        api_app_id: app.id,
        token: "verification-token-deprecated",
        container: { type: "message", message_ts: ts, channel_id: channelId, is_ephemeral: false },
        trigger_id: `${Date.now()}.${team.id}.${randomBytes(8).toString("hex")}`,
        team: { id: team.id, domain: "trendgate-test" },
        enterprise: null,
        is_enterprise_install: false,
        channel: { id: channelId, name: c.name },
        message: { type: "message", subtype: "bot_message", text: msg.text, ts, bot_id: botId, blocks: msg.blocks },
        state: { values: {} },
        response_url: `https://hooks.slack.com/actions/${team.id}/1234567890/${randomBytes(12).toString("hex")}`,
        actions: [{ action_id: actionId, block_id: block.block_id, text: button.text, value: button.value, style: button.style, type: "button", action_ts: `${(Date.now() / 1000).toFixed(6)}` }],
      };
      return new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    },

    /** Back to an empty workspace (channels, tokens, codes, messages, injections, records, violations). */
    reset() {
      channels.clear(); tokens.clear(); codes.clear(); refreshTokens.clear(); messagesByChannel.clear(); injected.clear();
      recorded.length = 0; violations.length = 0; pageCap = null; authorizeOutcome = "approve";
      rotation = opts.rotation ?? false; expiresIn = opts.expiresIn ?? 43_200;
    },
    /**
     * A restart: open connections are dropped and new ones refused (ECONNREFUSED) for `downMs`, then the same port
     * answers again with everything kept. Resolves once it is listening again.
     */
    async restart(downMs: number) {
      await new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); });
      await new Promise((r) => setTimeout(r, downMs));
      await listenLocal(server, port);
    },
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
  return api;
}

/** What Slack's Block Kit would refuse in these blocks (invalid_blocks); limits from docs.slack.dev/reference/block-kit. */
export function blockKitProblems(blocks: any[]): string[] {
  const out: string[] = [];
  const textObj = (t: any, at: string, max: number, kinds = ["plain_text", "mrkdwn"]) => {
    if (!t || !kinds.includes(t.type) || typeof t.text !== "string") out.push(`${at}: a ${kinds.join(" or ")} text object`);
    else if (t.text.length < 1 || t.text.length > max) out.push(`${at}: text of 1-${max} characters (has ${t.text.length})`);
  };
  if (blocks.length > 50) out.push(`${blocks.length} blocks (at most 50)`);
  const blockIds = new Set<string>();
  blocks.forEach((b, i) => {
    const at = `blocks[${i}]`;
    if (b.block_id !== undefined) {
      if (typeof b.block_id !== "string" || b.block_id.length > 255 || blockIds.has(b.block_id)) out.push(`${at}.block_id: unique, at most 255 characters`);
      blockIds.add(b.block_id);
    }
    switch (b.type) {
      case "header": textObj(b.text, `${at}.text`, 150, ["plain_text"]); break;
      case "divider": break;
      case "section":
        if (b.text === undefined && b.fields === undefined) out.push(`${at}: text or fields`);
        if (b.text !== undefined) textObj(b.text, `${at}.text`, 3000);
        if (b.fields !== undefined) {
          if (!Array.isArray(b.fields) || b.fields.length > 10) out.push(`${at}.fields: at most 10`);
          else b.fields.forEach((f: any, j: number) => textObj(f, `${at}.fields[${j}]`, 2000));
        }
        break;
      case "context":
        if (!Array.isArray(b.elements) || b.elements.length < 1 || b.elements.length > 10) out.push(`${at}.elements: 1-10`);
        else b.elements.forEach((e: any, j: number) => { if (e.type !== "image") textObj(e, `${at}.elements[${j}]`, 3000); });
        break;
      case "actions": {
        if (!Array.isArray(b.elements) || b.elements.length < 1 || b.elements.length > 25) { out.push(`${at}.elements: 1-25`); break; }
        const actionIds = new Set<string>();
        b.elements.forEach((e: any, j: number) => {
          const eat = `${at}.elements[${j}]`;
          if (e.type !== "button") { out.push(`${eat}: only buttons are checked here`); return; }
          textObj(e.text, `${eat}.text`, 75, ["plain_text"]);
          if (e.action_id !== undefined && (typeof e.action_id !== "string" || e.action_id.length > 255 || actionIds.has(e.action_id))) out.push(`${eat}.action_id: unique in the block, at most 255 characters`);
          actionIds.add(e.action_id);
          if (e.value !== undefined && (typeof e.value !== "string" || e.value.length > 2000)) out.push(`${eat}.value: at most 2000 characters`);
          if (e.url !== undefined && (typeof e.url !== "string" || e.url.length > 3000)) out.push(`${eat}.url: at most 3000 characters`);
          if (e.style !== undefined && e.style !== "primary" && e.style !== "danger") out.push(`${eat}.style: primary or danger`);
        });
        break;
      }
      default: out.push(`${at}: block type ${b.type} is not checked here`);
    }
  });
  return out;
}
