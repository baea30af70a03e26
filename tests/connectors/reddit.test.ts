import { OutboundClient, OutboundGuard } from "@trendgate/delivery";
import { RedditClient } from "../../packages/connectors/social/src/reddit/client.ts";
import { ProviderError, type ProviderContext } from "../../packages/connectors/social/src/types.ts";
import { startRedditServer, type RedditPostFixture, type RedditServer } from "../peers/reddit-server.ts";
import { providerError } from "../helpers/provider.ts";

const outbound = new OutboundClient({
  guard: new OutboundGuard(["127.0.0.1"]), connectTimeoutMs: 1000, timeoutMs: 3000, maxResponseBytes: 5 * 1024 * 1024, userAgent: "trendgate-test",
});
const context = (baseUrl: string): ProviderContext => ({ baseUrl, request: (m, u, i) => outbound.request(m, u, i) });

const USER_AGENT = "server:trendgate-test:0.1.0 (by /u/trendgate_bot)";
const TOKEN = "read-token";
const USER_TOKEN = "user-token";

/** A post n minutes old. */
function post(id: string, n: number, title: string, extra: Partial<RedditPostFixture> = {}): RedditPostFixture {
  return { id, subreddit: "solar", title, score: 0, num_comments: 0, created_utc: Math.floor(Date.now() / 1000) - n * 60, ...extra };
}


let peer: RedditServer;
let reddit: RedditClient;
beforeAll(async () => {
  peer = await startRedditServer();
  reddit = new RedditClient(context(peer.apiUrl), { authBaseUrl: peer.authUrl, userAgent: USER_AGENT });
});
afterAll(async () => { await peer.close(); });
beforeEach(() => {
  peer.reset();
  peer.addToken(TOKEN, { scopes: ["read"] });
  peer.addToken(USER_TOKEN, { user: "trendgate_bot", scopes: ["read", "submit"] });
});

describe("subreddit search", () => {
  test("returns one observation per matching post with fullname, engagement count, permalink and time", async () => {
    const a = post("1abc", 5, "Solar & storage: first month results", { score: 41, num_comments: 7, selftext: "Numbers inside" });
    peer.setPosts([a, post("1abd", 8, "Wind only"), post("1abe", 60 * 30, "solar last month")]);

    const page = await reddit.searchSubreddit({ subreddit: "solar", query: "solar" }, TOKEN);

    expect(page.items).toEqual([{
      externalId: "t3_1abc",
      topic: "solar",
      count: 49,
      sentiment: expect.any(Number),
      observedAt: new Date(a.created_utc * 1000),
      link: "https://www.reddit.com/r/solar/comments/1abc/solar_storage_first_month_results/",
      text: "Solar & storage: first month results", // raw_json=1: no &amp;
    }]);
    expect(page.next).toBeNull();
    const r = peer.requests[0];
    expect(r.path).toBe("/r/solar/search");
    expect(Object.fromEntries(r.query)).toMatchObject({ q: "solar", restrict_sr: "1", sort: "new", t: "day", limit: "100" });
  });

  test("a post voted below zero still counts as one mention", async () => {
    peer.setPosts([post("1neg", 1, "solar scam?", { score: -12, num_comments: 2 })]);
    const page = await reddit.searchSubreddit({ subreddit: "solar", query: "solar" }, TOKEN);
    expect(page.items[0].count).toBe(1);
  });

  test("pages with `after` across three pages, newest first, no post twice", async () => {
    peer.setPosts(Array.from({ length: 7 }, (_, i) => post(`p${i}`, i + 1, `solar update ${i}`)));

    const p1 = await reddit.searchSubreddit({ subreddit: "solar", query: "solar", limit: 3 }, TOKEN);
    const p2 = await reddit.searchSubreddit({ subreddit: "solar", query: "solar", limit: 3, after: p1.next! }, TOKEN);
    const p3 = await reddit.searchSubreddit({ subreddit: "solar", query: "solar", limit: 3, after: p2.next! }, TOKEN);

    expect(p1.next).toBe("t3_p2");
    expect(p3.next).toBeNull();
    expect([...p1.items, ...p2.items, ...p3.items].map((o) => o.externalId)).toEqual(["t3_p0", "t3_p1", "t3_p2", "t3_p3", "t3_p4", "t3_p5", "t3_p6"]);
  });

  test("sentiment: positive for a clearly happy title, negative for a clearly angry one, 0 for a neutral one", async () => {
    peer.setPosts([
      post("good", 1, "Love my new solar panels, amazing and excellent results, so happy"),
      post("bad", 2, "Terrible solar installer, awful scam, worst disaster, I hate it"),
      post("flat", 3, "Solar inverter model numbers listed"),
    ]);
    const { items } = await reddit.searchSubreddit({ subreddit: "solar", query: "solar" }, TOKEN);
    const by = Object.fromEntries(items.map((o) => [o.externalId, o.sentiment!]));
    expect(by.t3_good).toBeGreaterThan(0.1);
    expect(by.t3_bad).toBeLessThan(-0.1);
    expect(by.t3_flat).toBe(0);
    for (const s of Object.values(by)) expect(Math.abs(s)).toBeLessThanOrEqual(1);
  });

  test("quota comes from X-Ratelimit-Used/Remaining/Reset", async () => {
    peer.setPosts([post("q1", 1, "hello")]);
    peer.setRateLimit({ limit: 600, used: 100, resetSeconds: 240 });
    const before = Date.now();
    const page = await reddit.searchSubreddit({ subreddit: "solar", query: "hello" }, TOKEN);
    expect(page.quota).toMatchObject({ limit: 600, remaining: 499, cost: 1 });
    expect(page.quota.resetAt!.getTime()).toBeGreaterThanOrEqual(before + 239_000);
    expect(page.quota.resetAt!.getTime()).toBeLessThanOrEqual(Date.now() + 240_000);
  });

  test("a subreddit that does not exist (Reddit redirects) -> bad_request", async () => {
    peer.setPosts([post("x1", 1, "hello")]);
    const e = await providerError(() => reddit.searchSubreddit({ subreddit: "nosuchsubxyz", query: "hello" }, TOKEN));
    expect(e).toMatchObject({ kind: "bad_request", detail: { status: 302 } });
    expect(e.message).toContain("does the subreddit exist?");
  });

  test("a private subreddit is a bad request, not a reason to re-authorize", async () => {
    peer.setPosts([post("x1", 1, "hello")]);
    peer.markPrivate("secretclub");
    const e = await providerError(() => reddit.searchSubreddit({ subreddit: "secretclub", query: "hello" }, TOKEN));
    expect(e).toMatchObject({ kind: "bad_request", detail: { status: 403, providerCode: "private" } });
  });
});

describe("errors", () => {
  beforeEach(() => peer.setPosts([post("e1", 1, "solar")]));

  test("429 -> rate_limited, retryAfterMs from X-Ratelimit-Reset seconds", async () => {
    peer.setRateLimit({ resetSeconds: 120 });
    peer.failNext(1, 429);
    const e = await providerError(() => reddit.searchSubreddit({ subreddit: "solar", query: "solar" }, TOKEN));
    expect(e).toMatchObject({ provider: "reddit", kind: "rate_limited", detail: { status: 429, retryAfterMs: 120_000 } });
    await expect(reddit.searchSubreddit({ subreddit: "solar", query: "solar" }, TOKEN)).resolves.toMatchObject({ items: [{ externalId: "t3_e1" }] });
  });

  test("a used-up window gives 429 on its own", async () => {
    peer.setRateLimit({ limit: 5, used: 5, resetSeconds: 30 });
    const e = await providerError(() => reddit.searchSubreddit({ subreddit: "solar", query: "solar" }, TOKEN));
    expect(e).toMatchObject({ kind: "rate_limited", detail: { retryAfterMs: 30_000 } });
  });

  test("an invalid or expired token -> unauthorized, telling what to do", async () => {
    peer.addToken("expired", { scopes: ["read"], expiresInSeconds: -1 });
    for (const token of ["wrong", "expired"]) {
      const e = await providerError(() => reddit.searchSubreddit({ subreddit: "solar", query: "solar" }, token));
      expect(e).toMatchObject({ kind: "unauthorized", detail: { status: 401, providerCode: "invalid_token" } });
      expect(e.message).toBe("reddit: search: Reddit rejected the credentials (401 invalid_token); get a new token or re-authorize the Reddit connection");
    }
  });

  test("a token without the read scope -> unauthorized", async () => {
    peer.addToken("identity-only", { scopes: ["identity"] });
    const e = await providerError(() => reddit.searchSubreddit({ subreddit: "solar", query: "solar" }, "identity-only"));
    expect(e).toMatchObject({ kind: "unauthorized", detail: { status: 403, providerCode: "insufficient_scope" } });
  });

  test("the bearer token and our User-Agent are sent; a generic agent is blocked like Reddit does", async () => {
    await reddit.searchSubreddit({ subreddit: "solar", query: "solar" }, TOKEN);
    expect(peer.requests[0].headers).toMatchObject({ authorization: `Bearer ${TOKEN}`, "user-agent": USER_AGENT });

    const generic = new RedditClient(context(peer.apiUrl), { authBaseUrl: peer.authUrl, userAgent: "python-requests/2.31" });
    const e = await providerError(() => generic.searchSubreddit({ subreddit: "solar", query: "solar" }, TOKEN));
    expect(e).toMatchObject({ kind: "unauthorized", detail: { status: 403 } });
    expect(e.message).toContain("check the User-Agent");
    expect(() => new RedditClient(context(peer.apiUrl), { authBaseUrl: peer.authUrl, userAgent: " " })).toThrow(/User-Agent/);
  });

  test("5xx -> unavailable", async () => {
    peer.failNext(1, 503);
    await expect(reddit.searchSubreddit({ subreddit: "solar", query: "solar" }, TOKEN)).rejects.toMatchObject({ kind: "unavailable", detail: { status: 503 } });
  });

  test("a subreddit name that is not one is refused before any request", async () => {
    await expect(reddit.searchSubreddit({ subreddit: "../api/comment", query: "x" }, TOKEN)).rejects.toMatchObject({ kind: "bad_request" });
    expect(peer.requests).toHaveLength(0);
  });
});

describe("client credentials", () => {
  test("gets an app-only token from the auth host with Basic auth, and it works for search", async () => {
    peer.registerApp("my-client-id", "my-secret");
    peer.setPosts([post("c1", 1, "solar")]);

    const { accessToken, expiresAt } = await reddit.clientCredentialsToken("my-client-id", "my-secret");

    expect(expiresAt.getTime()).toBeGreaterThan(Date.now() + 3590_000);
    expect(expiresAt.getTime()).toBeLessThanOrEqual(Date.now() + 3600_000);
    const r = peer.requests[0];
    expect([r.host, r.method, r.path]).toEqual(["auth", "POST", "/api/v1/access_token"]);
    expect(r.headers.authorization).toBe(`Basic ${Buffer.from("my-client-id:my-secret").toString("base64")}`);
    expect(r.headers["user-agent"]).toBe(USER_AGENT);
    expect(r.body).toBe("grant_type=client_credentials");

    const page = await reddit.searchSubreddit({ subreddit: "solar", query: "solar" }, accessToken);
    expect(page.items.map((o) => o.externalId)).toEqual(["t3_c1"]);
    expect(peer.requests[1].host).toBe("api");
  });

  test("a wrong secret -> unauthorized", async () => {
    peer.registerApp("my-client-id", "my-secret");
    const e = await providerError(() => reddit.clientCredentialsToken("my-client-id", "wrong"));
    expect(e).toMatchObject({ kind: "unauthorized", detail: { status: 401 } });
  });
});

describe("comment", () => {
  beforeEach(() => peer.setPosts([post("t1", 1, "solar question")]));

  test("posts the form and returns the new comment's fullname", async () => {
    const { id, quota } = await reddit.comment({ thingId: "t3_t1", text: "Have a look at this" }, USER_TOKEN);

    expect(id).toMatch(/^t1_[a-z0-9]+$/);
    expect(peer.comments).toEqual([{ name: id, parent: "t3_t1", text: "Have a look at this", author: "trendgate_bot" }]);
    const r = peer.requests[0];
    expect([r.method, r.path, r.headers["content-type"], r.headers["user-agent"]]).toEqual(["POST", "/api/comment", "application/x-www-form-urlencoded", USER_AGENT]);
    expect(Object.fromEntries(new URLSearchParams(r.body))).toEqual({ api_type: "json", thing_id: "t3_t1", text: "Have a look at this" });
    expect(quota.remaining).toEqual(expect.any(Number));
  });

  test("RATELIMIT inside a 200 -> rate_limited with the wait from Reddit's message", async () => {
    peer.setCommentCooldown(5 * 60);
    await reddit.comment({ thingId: "t3_t1", text: "first" }, USER_TOKEN);
    const e = await providerError(() => reddit.comment({ thingId: "t3_t1", text: "second" }, USER_TOKEN));
    expect(e).toMatchObject({ kind: "rate_limited", detail: { status: 200, providerCode: "RATELIMIT", retryAfterMs: 5 * 60_000 } });
    expect(e.message).toContain("you are doing that too much. try again in 5 minutes.");
    expect(peer.comments).toHaveLength(1);
  });

  test("RATELIMIT in seconds", async () => {
    peer.setCommentCooldown(9);
    await reddit.comment({ thingId: "t3_t1", text: "first" }, USER_TOKEN);
    await expect(reddit.comment({ thingId: "t3_t1", text: "second" }, USER_TOKEN)).rejects.toMatchObject({ detail: { retryAfterMs: 9000 } });
  });

  test("an app-only token cannot comment (USER_REQUIRED) -> unauthorized", async () => {
    const e = await providerError(() => reddit.comment({ thingId: "t3_t1", text: "hi" }, TOKEN));
    expect(e).toMatchObject({ kind: "unauthorized", detail: { providerCode: "USER_REQUIRED" } });
    expect(e.message).toContain("use a user token with the submit scope");
  });

  test("Reddit's other form errors are bad requests", async () => {
    const e = await providerError(() => reddit.comment({ thingId: "t3_t1", text: "   " }, USER_TOKEN));
    expect(e).toMatchObject({ kind: "bad_request", detail: { providerCode: "NO_TEXT" } });
  });
});
