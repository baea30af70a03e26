import http from "node:http";
import { randomBytes } from "node:crypto";
import { bodyServer, listenLocal, type StandInOptions } from "./listen.ts";

// A stand-in for api.x.com on 127.0.0.1 that speaks X API v2 as documented: recent search
// with fields/expansions, opaque next_token paging, since_id/until_id/start_time, x-rate-limit-* headers, problem-JSON errors,
// app-only vs user-context tokens, and POST /2/tweets replies. Like X, it refuses (400) a since_id from before the
// 7-day window and a query it cannot parse (an unclosed quote, an unknown operator, more than 512 characters).

export interface XUserFixture { id: string; name: string; username: string }
export interface XPostFixture {
  id: string;
  text: string;
  author_id: string;
  created_at: string; // ISO 8601
  public_metrics: { retweet_count: number; reply_count: number; like_count: number; quote_count: number };
  /** Ids of the users whose posts this one quotes (X lets those accounts reply to it). */
  quotes?: string[];
}
export interface XRecorded {
  method: string; path: string; query: URLSearchParams; headers: http.IncomingHttpHeaders; body: string;
  /** When it arrived (Date.now()) and the status it was answered with. */
  at: number; status: number;
}

type Answer = { status: number; json?: unknown; headers?: Record<string, string> };

const problem = (status: number, title: string, detail: string, type = "about:blank") => ({ status, json: { title, detail, type, status } });
const invalid = (parameter: string, value: string, message: string): Answer => ({
  status: 400,
  json: {
    errors: [{ parameters: { [parameter]: [value] }, message }],
    title: "Invalid Request",
    detail: "One or more parameters to your request was invalid.",
    type: "https://api.twitter.com/2/problems/invalid-request",
  },
});
const UNAUTHORIZED = problem(401, "Unauthorized", "Unauthorized");
const TOO_MANY = problem(429, "Too Many Requests", "Too Many Requests");
const SEVEN_DAYS_MS = 7 * 24 * 3600 * 1000;

// X's ids are Snowflakes: milliseconds since X's epoch above the lowest 22 bits.
const X_EPOCH_MS = 1_288_834_974_657n;
export const snowflake = (ms: number, seq = 0) => String(((BigInt(Math.floor(ms)) - X_EPOCH_MS) << 22n) + BigInt(seq % 4096));
const postedAt = (id: string) => Number((BigInt(id) >> 22n) + X_EPOCH_MS);

/** Recent search's query limit at the self-serve tiers. */
const MAX_QUERY_CHARS = 512;
// The operators recent search knows (self-serve); anything else before a colon is refused, as X does.
const OPERATORS = new Set([
  "from", "to", "url", "retweets_of", "context", "entity", "conversation_id", "list", "place", "place_country", "point_radius",
  "bounding_box", "is", "has", "lang", "in_reply_to_tweet_id", "retweets_of_tweet_id", "quotes_of_tweet_id",
]);

/** X's parser errors for a query, in its wording ("There were errors processing your request: …"), or null. */
function queryProblem(query: string): string | null {
  const problems: string[] = [];
  if (query.length > MAX_QUERY_CHARS) problems.push(`Query length ${query.length} exceeds the maximum of ${MAX_QUERY_CHARS} characters`);
  const quotes = [...query.matchAll(/"/g)].map((m) => m.index!);
  if (quotes.length % 2 === 1) problems.push(`no viable alternative at character '"' (at position ${quotes[quotes.length - 1] + 1})`);
  // Outside quoted phrases, `name:` is an operator.
  const bare = query.replace(/"[^"]*"/g, (m) => " ".repeat(m.length));
  for (const m of bare.matchAll(/(^|[\s(])-?([A-Za-z_]+):/g)) {
    if (!OPERATORS.has(m[2].toLowerCase())) problems.push(`Reference to invalid operator '${m[2]}' (at position ${m.index! + m[1].length + 1})`);
  }
  return problems.length ? `There were errors processing your request: ${problems.join(", ")}` : null;
}

export async function startXServer(opts: Pick<StandInOptions, "port"> = {}) {
  let users: XUserFixture[] = [];
  let posts: XPostFixture[] = [];
  const created: (XPostFixture & { in_reply_to_tweet_id: string })[] = [];
  const appTokens = new Set<string>();
  const userTokens = new Map<string, string>(); // token -> user id
  const userTokenExpiry = new Map<string, number>(); // token -> ms, for tokens issued with a lifetime
  const oauthClients = new Map<string, string | null>(); // client id -> secret (null: a public client)
  const refreshTokens = new Map<string, { clientId: string; userId: string }>();
  const tokenRequests: URLSearchParams[] = [];
  const pageTokens = new Map<string, { query: string; offset: number }>(); // X's next_token is opaque and reusable
  const requests: XRecorded[] = [];
  let forced: { status: 401 | 429 | 503; left: number } | null = null;
  // One 15-minute window for the whole peer (X keeps one per endpoint; tests need only one).
  const window = { limit: 450, remaining: 450, reset: Math.floor(Date.now() / 1000) + 900 };

  const rateHeaders = () => ({
    "x-rate-limit-limit": String(window.limit),
    "x-rate-limit-remaining": String(window.remaining),
    "x-rate-limit-reset": String(window.reset),
  });

  /** Counts the request against the window; a 429 answer when it is spent, as X does. */
  function spend(): Answer | null {
    if (Date.now() / 1000 >= window.reset) Object.assign(window, { remaining: window.limit, reset: Math.floor(Date.now() / 1000) + 900 });
    if (window.remaining <= 0) return { ...TOO_MANY, headers: rateHeaders() };
    window.remaining--;
    return null;
  }

  function search(q: URLSearchParams): Answer {
    const query = q.get("query") ?? "";
    if (!query.trim()) return invalid("query", "", "The `query` query parameter can not be empty");
    const unparsable = queryProblem(query);
    if (unparsable) return invalid("query", query, unparsable);
    const max = Number(q.get("max_results") ?? "10");
    if (!Number.isInteger(max) || max < 10 || max > 100) {
      return invalid("max_results", q.get("max_results")!, `The \`max_results\` query parameter value [${q.get("max_results")}] is not between 10 and 100`);
    }
    const startTime = q.get("start_time");
    if (startTime !== null) {
      const earliest = new Date(Date.now() - SEVEN_DAYS_MS);
      if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z$/.test(startTime) || Date.parse(startTime) < earliest.getTime()) {
        return invalid("start_time", startTime, `Invalid 'start_time':'${startTime}'. 'start_time' must be on or after ${earliest.toISOString()}`);
      }
    }
    const sinceId = q.get("since_id");
    if (sinceId !== null && !/^\d+$/.test(sinceId)) return invalid("since_id", sinceId, `The \`since_id\` query parameter value [${sinceId}] is not valid`);
    const windowStart = Date.now() - SEVEN_DAYS_MS;
    if (sinceId !== null && postedAt(sinceId) < windowStart) {
      const after = new Date(windowStart).toISOString().slice(0, 16);
      return invalid("since_id", sinceId, `'since_id' must be a tweet id created after ${after}Z. Please use a 'since_id' that is larger than ${snowflake(windowStart)}`);
    }
    const untilId = q.get("until_id");
    if (untilId !== null && !/^\d+$/.test(untilId)) return invalid("until_id", untilId, `The \`until_id\` query parameter value [${untilId}] is not valid`);
    let offset = 0;
    const token = q.get("next_token");
    if (token !== null) {
      const at = pageTokens.get(token);
      // A next_token belongs to the query it was issued for.
      if (!at || at.query !== query) return invalid("next_token", token, `The \`next_token\` query parameter value [${token}] is not valid for this request`);
      offset = at.offset;
    }

    // Query matching: bare words must all appear, -words must not; operators (lang:, is:, -is:) are ignored.
    const words = query.toLowerCase().split(/\s+/).filter((w) => w && !w.includes(":"));
    const must = words.filter((w) => !w.startsWith("-"));
    const mustNot = words.filter((w) => w.startsWith("-")).map((w) => w.slice(1));
    const matches = posts
      .filter((p) => Date.parse(p.created_at) >= Date.now() - SEVEN_DAYS_MS) // recent search: last 7 days only
      .filter((p) => must.every((w) => p.text.toLowerCase().includes(w)) && !mustNot.some((w) => p.text.toLowerCase().includes(w)))
      .filter((p) => sinceId === null || BigInt(p.id) > BigInt(sinceId))
      .filter((p) => untilId === null || BigInt(p.id) < BigInt(untilId))
      .filter((p) => startTime === null || Date.parse(p.created_at) >= Date.parse(startTime))
      .sort((a, b) => (BigInt(b.id) > BigInt(a.id) ? 1 : -1)); // newest first
    const page = matches.slice(offset, offset + max);
    if (page.length === 0) return { status: 200, json: { meta: { result_count: 0 } } };

    // Only the requested fields come back, besides id, text and edit_history_tweet_ids.
    const fields = new Set((q.get("tweet.fields") ?? "").split(",").filter(Boolean));
    const data = page.map((p) => ({
      id: p.id,
      text: p.text,
      edit_history_tweet_ids: [p.id],
      ...(fields.has("author_id") ? { author_id: p.author_id } : {}),
      ...(fields.has("created_at") ? { created_at: p.created_at } : {}),
      ...(fields.has("public_metrics") ? { public_metrics: { ...p.public_metrics, bookmark_count: 0, impression_count: 0 } } : {}),
    }));
    const meta: Record<string, unknown> = { newest_id: page[0].id, oldest_id: page[page.length - 1].id, result_count: page.length };
    if (offset + max < matches.length) {
      const next = randomBytes(16).toString("hex");
      pageTokens.set(next, { query, offset: offset + max });
      meta.next_token = next;
    }
    const expansions = (q.get("expansions") ?? "").split(",");
    const authorIds = new Set(page.map((p) => p.author_id));
    const includes = expansions.includes("author_id") ? { users: users.filter((u) => authorIds.has(u.id)) } : undefined;
    return { status: 200, json: { data, ...(includes ? { includes } : {}), meta } };
  }

  function createPost(userId: string, headers: http.IncomingHttpHeaders, raw: string): Answer {
    if (!(headers["content-type"] ?? "").startsWith("application/json")) return problem(400, "Invalid Request", "Content-Type must be application/json");
    let body: { text?: unknown; reply?: { in_reply_to_tweet_id?: unknown } };
    try { body = JSON.parse(raw); } catch { return problem(400, "Invalid Request", "The request body is not valid JSON"); }
    if (typeof body.text !== "string" || !body.text) return invalid("text", String(body.text ?? ""), "The `text` field is required");
    const target = body.reply?.in_reply_to_tweet_id;
    const parent = target === undefined ? undefined : [...posts, ...created].find((p) => p.id === target);
    if (target !== undefined && !parent) {
      return problem(403, "Forbidden", "You attempted to reply to a Tweet that is deleted or not visible to you.");
    }
    // Since 2026-02-24 X refuses programmatic replies unless the post's author engaged the replying account: it is
    // their own post, or the post mentions (@username) or quotes the account.
    const me = users.find((u) => u.id === userId);
    if (parent && parent.author_id !== userId && !(me && new RegExp(`@${me.username}\\b`, "i").test(parent.text)) && !(parent.quotes ?? []).includes(userId)) {
      return problem(403, "Forbidden", "Reply to this conversation is not allowed because you have not been mentioned or otherwise engaged by the author of the post you are replying to.");
    }
    if (created.some((p) => p.author_id === userId && p.text === body.text)) {
      return problem(403, "Forbidden", "You are not allowed to create a Tweet with duplicate content.");
    }
    const id = snowflake(Date.now(), created.length + 1);
    created.push({
      id, text: body.text, author_id: userId, created_at: new Date().toISOString(), in_reply_to_tweet_id: String(target ?? ""),
      public_metrics: { retweet_count: 0, reply_count: 0, like_count: 0, quote_count: 0 },
    });
    return { status: 201, json: { data: { id, text: body.text, edit_history_tweet_ids: [id] } } };
  }

  /**
   * POST /2/oauth2/token, grant_type=refresh_token: a new two-hour user token and a new refresh token; the one used
   * stops working at once (X rotates them). Confidential clients authenticate with Basic; public ones send client_id.
   */
  function refresh(headers: http.IncomingHttpHeaders, raw: string): Answer {
    const form = new URLSearchParams((headers["content-type"] ?? "").startsWith("application/x-www-form-urlencoded") ? raw : "");
    tokenRequests.push(form);
    const basic = /^Basic (.+)$/.exec(headers.authorization ?? "")?.[1];
    const [basicId, basicSecret] = basic ? Buffer.from(basic, "base64").toString("utf8").split(":").map(decodeURIComponent) : [];
    const clientId = basicId ?? form.get("client_id") ?? "";
    if (!oauthClients.has(clientId)) return { status: 400, json: { error: "invalid_request", error_description: "Missing required parameter [client_id]." } };
    const secret = oauthClients.get(clientId);
    if (secret !== null && basicSecret !== secret) return { status: 401, json: { error: "unauthorized_client", error_description: "Missing valid authorization header" } };
    if (form.get("grant_type") !== "refresh_token") return { status: 400, json: { error: "invalid_request", error_description: "Missing required parameter [grant_type]." } };
    const held = refreshTokens.get(form.get("refresh_token") ?? "");
    if (!held || held.clientId !== clientId) return { status: 400, json: { error: "invalid_request", error_description: "Value passed for the token was invalid." } };
    refreshTokens.delete(form.get("refresh_token")!);
    const access = randomBytes(24).toString("base64url");
    const next = randomBytes(24).toString("base64url");
    userTokens.set(access, held.userId);
    userTokenExpiry.set(access, Date.now() + 7200_000);
    refreshTokens.set(next, held);
    return { status: 200, json: { token_type: "bearer", expires_in: 7200, access_token: access, scope: "tweet.read tweet.write users.read offline.access", refresh_token: next } };
  }

  function route(method: string, url: URL, headers: http.IncomingHttpHeaders, body: string): Answer {
    if (method === "POST" && url.pathname === "/2/oauth2/token") return refresh(headers, body);
    if (forced && forced.left > 0) {
      forced.left--;
      if (forced.status === 401) return UNAUTHORIZED;
      if (forced.status === 503) return problem(503, "Service Unavailable", "Service Unavailable");
      return { ...TOO_MANY, headers: { ...rateHeaders(), "x-rate-limit-remaining": "0" } };
    }
    const token = /^Bearer (.+)$/.exec(headers.authorization ?? "")?.[1];
    const isApp = token !== undefined && appTokens.has(token);
    const lapsed = token !== undefined && (userTokenExpiry.get(token) ?? Infinity) <= Date.now();
    const userId = token !== undefined && !lapsed ? userTokens.get(token) : undefined;
    if (!isApp && !userId) return UNAUTHORIZED;

    const withQuota = (a: Answer): Answer => ({ ...a, headers: { ...rateHeaders(), ...a.headers } });
    if (method === "GET" && url.pathname === "/2/tweets/search/recent") return spend() ?? withQuota(search(url.searchParams));
    if (method === "POST" && url.pathname === "/2/tweets") {
      if (!userId) {
        return problem(403, "Unsupported Authentication",
          "Authenticating with OAuth 2.0 Application-Only is forbidden for this endpoint.  Supported authentication types are [OAuth 1.0a User Context, OAuth 2.0 User Context].",
          "https://api.twitter.com/2/problems/unsupported-authentication");
      }
      return spend() ?? withQuota(createPost(userId, headers, body));
    }
    return problem(404, "Not Found Error", `Could not find ${url.pathname}`, "https://api.twitter.com/2/problems/resource-not-found");
  }

  const server = bodyServer((req, res, url, body) => {
    const a = route(req.method ?? "GET", url, req.headers, body);
    requests.push({ method: req.method ?? "GET", path: url.pathname, query: url.searchParams, headers: req.headers, body, at: Date.now(), status: a.status });
    res.writeHead(a.status, { "content-type": "application/json; charset=utf-8", ...a.headers });
    res.end(a.json === undefined ? "" : JSON.stringify(a.json));
  });
  const baseUrl = await listenLocal(server, opts.port);

  return {
    url: baseUrl,
    /** Every request received, in order. */
    requests,
    /** Posts created through POST /2/tweets. */
    created,
    setData(data: { users?: XUserFixture[]; posts?: XPostFixture[] }) {
      if (data.users) users = data.users;
      if (data.posts) posts = data.posts;
    },
    addAppToken(token: string) { appTokens.add(token); },
    /** A user-context token; with a lifetime, X answers 401 for it once that is over. */
    addUserToken(token: string, userId: string, expiresInSeconds?: number) {
      userTokens.set(token, userId);
      if (expiresInSeconds !== undefined) userTokenExpiry.set(token, Date.now() + expiresInSeconds * 1000);
    },
    /** An OAuth 2.0 client: with a secret, a confidential client (Basic auth at the token endpoint); null, a public one. */
    addOAuthClient(clientId: string, secret: string | null) { oauthClients.set(clientId, secret); },
    /** A refresh token issued to the client for the user. */
    addRefreshToken(token: string, clientId: string, userId: string) { refreshTokens.set(token, { clientId, userId }); },
    /** Lapses a user token now, as two hours passing would. */
    expireUserToken(token: string) { userTokenExpiry.set(token, Date.now()); },
    /** Forms sent to the token endpoint, in order. */
    tokenRequests,
    /** The next n requests answer 401, 429 (window spent, with x-rate-limit-* headers) or 503, whatever they ask. */
    failNext(n: number, status: 401 | 429 | 503) { forced = { status, left: n }; },
    setRateLimit(w: { limit?: number; remaining?: number; resetEpochSeconds?: number }) {
      if (w.limit !== undefined) window.limit = w.limit;
      window.remaining = w.remaining ?? window.limit;
      if (w.resetEpochSeconds !== undefined) window.reset = w.resetEpochSeconds;
    },
    /** Forget data, tokens, requests and failures; a fresh full window. */
    reset() {
      users = []; posts = []; created.length = 0; requests.length = 0; forced = null;
      appTokens.clear(); userTokens.clear(); userTokenExpiry.clear(); oauthClients.clear(); refreshTokens.clear(); tokenRequests.length = 0; pageTokens.clear();
      Object.assign(window, { limit: 450, remaining: 450, reset: Math.floor(Date.now() / 1000) + 900 });
    },
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
export type XServer = Awaited<ReturnType<typeof startXServer>>;
