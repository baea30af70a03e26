import http from "node:http";
import { randomBytes } from "node:crypto";
import { bodyServer, listenLocal } from "./listen.ts";

// A stand-in for Reddit on 127.0.0.1, as documented: two hosts like www.reddit.com (token
// endpoint) and oauth.reddit.com (the API), bearer tokens with scopes, Listing JSON with `after` paging,
// X-Ratelimit-Used/Remaining/Reset headers, {message,error} bodies, the HTML block page for agents that are not
// unique, and /api/comment answering errors (RATELIMIT, USER_REQUIRED) inside HTTP 200.

export interface RedditPostFixture {
  id: string; // base36, without the t3_ prefix
  subreddit: string;
  title: string;
  selftext?: string;
  score: number;
  num_comments: number;
  created_utc: number; // epoch seconds
  author?: string;
}
export interface RedditRecorded {
  host: "api" | "auth";
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** When it arrived (Date.now()) and the status it was answered with. */
  at: number;
  status: number;
}
interface Token { user: string | null; scopes: string[]; expiresAt: number }
type Answer = { status: number; json?: unknown; text?: string; headers?: Record<string, string> };

// Reddit asks for `<platform>:<app id>:<version> (by /u/<username>)`; anything else counts as generic here.
const UNIQUE_AGENT = /^\S+:\S+:\S+ \(by \/?u\/[\w-]+\)$/;
const BLOCKED: Answer = {
  status: 403,
  headers: { "content-type": "text/html; charset=utf-8" },
  text: "<!doctype html><html><title>Blocked</title><body><h1>whoa there, pardner!</h1><p>Your request has been blocked due to a network policy. Make sure your User-Agent is not empty and is something unique and descriptive.</p></body></html>",
};
const err = (status: number, message: string, extra: object = {}): Answer => ({ status, json: { ...extra, message, error: status } });
const invalidToken = (): Answer => ({ ...err(401, "Unauthorized"), headers: { "www-authenticate": 'Bearer realm="reddit", error="invalid_token"' } });
const insufficientScope = (): Answer => ({ ...err(403, "Forbidden"), headers: { "www-authenticate": 'Bearer realm="reddit", error="insufficient_scope"' } });
const formErrors = (errors: [string, string, string | null][]): Answer => ({ status: 200, json: { json: { errors } } });
const SPANS: Record<string, number> = { hour: 3600, day: 86400, week: 604800, month: 2_592_000, year: 31_536_000 };
const escapeHtml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const slug = (title: string) => title.toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_|_$/g, "").slice(0, 50);

/** `ports`: fixed ports for the API host and the token host (the sandbox); default free ones. */
export async function startRedditServer(opts: { ports?: { api: number; auth: number } } = {}) {
  let posts: RedditPostFixture[] = [];
  const apps = new Map<string, string>(); // client id -> secret
  const tokens = new Map<string, Token>();
  const privateSubs = new Set<string>();
  const emptySubs = new Set<string>(); // subreddits that exist without posts yet
  const comments: { name: string; parent: string; text: string; author: string }[] = [];
  const lastComment = new Map<string, number>(); // user -> ms
  const requests: RedditRecorded[] = [];
  let commentCooldownMs = 0;
  let forced: { status: 401 | 429 | 503; left: number } | null = null;
  const window = { limit: 600, used: 0, endsAt: Date.now() + 600_000 }; // 10-minute windows, as Reddit averages

  const rateHeaders = (): Record<string, string> => ({
    "x-ratelimit-used": String(window.used),
    "x-ratelimit-remaining": Math.max(0, window.limit - window.used).toFixed(1),
    "x-ratelimit-reset": String(Math.max(0, Math.ceil((window.endsAt - Date.now()) / 1000))),
  });
  const tooMany = (): Answer => ({ ...err(429, "Too Many Requests"), headers: { ...rateHeaders(), "x-ratelimit-remaining": "0.0" } });

  function spend(): Answer | null {
    if (Date.now() >= window.endsAt) Object.assign(window, { used: 0, endsAt: Date.now() + 600_000 });
    if (window.used >= window.limit) return tooMany();
    window.used++;
    return null;
  }

  function search(sub: string, q: URLSearchParams): Answer {
    const known = new Set([...emptySubs, ...posts.map((p) => p.subreddit.toLowerCase())]);
    if (privateSubs.has(sub.toLowerCase())) return err(403, "Forbidden", { reason: "private" });
    if (!known.has(sub.toLowerCase())) return { status: 302, headers: { location: `https://www.reddit.com/subreddits/search.json?q=${encodeURIComponent(sub)}` } };

    const restrict = ["1", "true", "on"].includes(q.get("restrict_sr") ?? "");
    const words = (q.get("q") ?? "").toLowerCase().split(/\s+/).filter(Boolean);
    const span = SPANS[q.get("t") ?? "all"];
    const sort = q.get("sort") ?? "relevance";
    const limit = Math.min(100, Math.max(1, Number(q.get("limit") ?? "25") || 25)); // Reddit clamps silently
    const matches = posts
      .filter((p) => !restrict || p.subreddit.toLowerCase() === sub.toLowerCase())
      .filter((p) => words.every((w) => `${p.title} ${p.selftext ?? ""}`.toLowerCase().includes(w)))
      .filter((p) => span === undefined || p.created_utc >= Date.now() / 1000 - span)
      .sort((a, b) => sort === "top" ? b.score - a.score : sort === "comments" ? b.num_comments - a.num_comments : b.created_utc - a.created_utc);
    const after = q.get("after");
    const start = after ? matches.findIndex((p) => `t3_${p.id}` === after) + 1 : 0;
    const page = start === 0 && after ? [] : matches.slice(start, start + limit); // an unknown `after` gives nothing
    const raw = q.get("raw_json") === "1";
    const children = page.map((p) => ({
      kind: "t3",
      data: {
        id: p.id,
        name: `t3_${p.id}`,
        subreddit: p.subreddit,
        subreddit_name_prefixed: `r/${p.subreddit}`,
        title: raw ? p.title : escapeHtml(p.title),
        selftext: raw ? (p.selftext ?? "") : escapeHtml(p.selftext ?? ""),
        author: p.author ?? "someone",
        score: p.score,
        ups: Math.max(0, p.score),
        num_comments: p.num_comments,
        created_utc: p.created_utc,
        permalink: `/r/${p.subreddit}/comments/${p.id}/${slug(p.title)}/`,
        url: `https://www.reddit.com/r/${p.subreddit}/comments/${p.id}/${slug(p.title)}/`,
        is_self: Boolean(p.selftext),
      },
    }));
    const more = start + limit < matches.length;
    return {
      status: 200,
      json: {
        kind: "Listing",
        data: {
          after: more && page.length ? `t3_${page[page.length - 1].id}` : null,
          dist: children.length,
          modhash: null,
          geo_filter: "",
          facets: {},
          children,
          before: after && page.length ? `t3_${page[0].id}` : null,
        },
      },
    };
  }

  function comment(token: Token, headers: http.IncomingHttpHeaders, raw: string): Answer {
    if (!token.user) return formErrors([["USER_REQUIRED", "Please log in to do that.", null]]);
    if (!token.scopes.includes("submit") && !token.scopes.includes("*")) return insufficientScope();
    const form = new URLSearchParams((headers["content-type"] ?? "").startsWith("application/x-www-form-urlencoded") ? raw : "");
    if (form.get("api_type") !== "json") return { status: 200, json: { jquery: [[0, 1, "call", ["body"]]], success: false } };
    const text = form.get("text") ?? "";
    if (!text.trim()) return formErrors([["NO_TEXT", "we need something here", "text"]]);
    const last = lastComment.get(token.user);
    if (last !== undefined && Date.now() - last < commentCooldownMs) {
      const leftMs = commentCooldownMs - (Date.now() - last);
      const wait = leftMs >= 60_000 ? `${Math.ceil(leftMs / 60_000)} minutes` : `${Math.ceil(leftMs / 1000)} seconds`;
      return formErrors([["RATELIMIT", `you are doing that too much. try again in ${wait}.`, "ratelimit"]]);
    }
    lastComment.set(token.user, Date.now());
    const id = randomBytes(4).toString("hex").slice(0, 7);
    const parent = form.get("thing_id") ?? "";
    comments.push({ name: `t1_${id}`, parent, text, author: token.user });
    return { status: 200, json: { json: { errors: [], data: { things: [{ kind: "t1", data: { id, name: `t1_${id}`, body: text, parent_id: parent, author: token.user } }] } } } };
  }

  function api(method: string, url: URL, headers: http.IncomingHttpHeaders, body: string): Answer {
    if (!UNIQUE_AGENT.test(headers["user-agent"] ?? "")) return BLOCKED;
    if (forced && forced.left > 0) {
      forced.left--;
      return forced.status === 401 ? invalidToken() : forced.status === 429 ? tooMany() : err(503, "Service Unavailable");
    }
    const bearer = /^bearer (.+)$/i.exec(headers.authorization ?? "")?.[1];
    const token = bearer ? tokens.get(bearer) : undefined;
    if (!token || token.expiresAt <= Date.now()) return invalidToken();
    const limited = spend();
    if (limited) return limited;

    const withQuota = (a: Answer): Answer => ({ ...a, headers: { ...rateHeaders(), ...a.headers } });
    const sub = /^\/r\/([^/]+)\/search\/?$/.exec(url.pathname)?.[1];
    if (method === "GET" && sub) {
      if (!token.scopes.includes("read") && !token.scopes.includes("*")) return withQuota(insufficientScope());
      return withQuota(search(decodeURIComponent(sub), url.searchParams));
    }
    if (method === "POST" && url.pathname === "/api/comment") return withQuota(comment(token, headers, body));
    return withQuota(err(404, "Not Found"));
  }

  function auth(method: string, url: URL, headers: http.IncomingHttpHeaders, body: string): Answer {
    if (!UNIQUE_AGENT.test(headers["user-agent"] ?? "")) return BLOCKED;
    if (method !== "POST" || url.pathname !== "/api/v1/access_token") return err(404, "Not Found");
    const basic = /^Basic (.+)$/.exec(headers.authorization ?? "")?.[1];
    const [id, secret] = basic ? Buffer.from(basic, "base64").toString("utf8").split(":") : [];
    if (!id || apps.get(id) !== secret) return err(401, "Unauthorized");
    const form = new URLSearchParams((headers["content-type"] ?? "").startsWith("application/x-www-form-urlencoded") ? body : "");
    if (form.get("grant_type") !== "client_credentials") return { status: 200, json: { error: "unsupported_grant_type" } };
    const access = `${randomBytes(8).toString("hex")}-${randomBytes(12).toString("base64url")}`;
    tokens.set(access, { user: null, scopes: ["*"], expiresAt: Date.now() + 3600_000 });
    return { status: 200, json: { access_token: access, token_type: "bearer", expires_in: 3600, scope: "*" } };
  }

  async function listen(host: RedditRecorded["host"], handle: typeof api, port?: number) {
    const server = bodyServer((req, res, url, body) => {
      const a = handle(req.method ?? "GET", url, req.headers, body);
      requests.push({ host, method: req.method ?? "GET", path: url.pathname, query: url.searchParams, headers: req.headers, body, at: Date.now(), status: a.status });
      res.writeHead(a.status, { "content-type": "application/json; charset=UTF-8", ...a.headers });
      res.end(a.text ?? (a.json === undefined ? "" : JSON.stringify(a.json)));
    });
    return { server, url: await listenLocal(server, port) };
  }
  const apiHost = await listen("api", api, opts.ports?.api);
  const authHost = await listen("auth", auth, opts.ports?.auth);
  const close = (s: http.Server) => new Promise<void>((r) => { s.closeAllConnections(); s.close(() => r()); });

  return {
    /** Like https://oauth.reddit.com */
    apiUrl: apiHost.url,
    /** Like https://www.reddit.com (token endpoint only) */
    authUrl: authHost.url,
    requests,
    /** Comments created through /api/comment. */
    comments,
    setPosts(p: RedditPostFixture[]) { posts = p; },
    registerApp(clientId: string, secret: string) { apps.set(clientId, secret); },
    /** A token as issued by the OAuth flow; user null is an app-only token. */
    addToken(token: string, t: { user?: string | null; scopes?: string[]; expiresInSeconds?: number } = {}) {
      tokens.set(token, { user: t.user ?? null, scopes: t.scopes ?? ["read"], expiresAt: Date.now() + (t.expiresInSeconds ?? 3600) * 1000 });
    },
    /** A subreddit that exists before any post of the fixtures is in it. */
    addSubreddit(subreddit: string) { emptySubs.add(subreddit.toLowerCase()); },
    markPrivate(subreddit: string) { privateSubs.add(subreddit.toLowerCase()); },
    /** Minimum time between two comments by one user, as Reddit's per-user posting limit. */
    setCommentCooldown(seconds: number) { commentCooldownMs = seconds * 1000; },
    /** The next n API requests answer 401, 429 (with X-Ratelimit-* headers) or 503. */
    failNext(n: number, status: 401 | 429 | 503) { forced = { status, left: n }; },
    setRateLimit(w: { limit?: number; used?: number; resetSeconds?: number }) {
      if (w.limit !== undefined) window.limit = w.limit;
      if (w.used !== undefined) window.used = w.used;
      if (w.resetSeconds !== undefined) window.endsAt = Date.now() + w.resetSeconds * 1000;
    },
    reset() {
      posts = []; apps.clear(); tokens.clear(); privateSubs.clear(); emptySubs.clear(); comments.length = 0; lastComment.clear();
      requests.length = 0; commentCooldownMs = 0; forced = null;
      Object.assign(window, { limit: 600, used: 0, endsAt: Date.now() + 600_000 });
    },
    close: async () => { await close(apiHost.server); await close(authHost.server); },
  };
}
export type RedditServer = Awaited<ReturnType<typeof startRedditServer>>;
