import { QUEUES } from "@trendgate/contracts";
import { registry } from "@trendgate/connectors";
import { catalogProblemsOf } from "../helpers/account-events.ts";
import { startStack, type Stack } from "../helpers/stack.ts";
import { waitFor } from "../helpers/config.ts";
import { snowflake, startXServer, type XPostFixture, type XServer } from "../peers/x-server.ts";
import { startYouTubeServer, type FixtureVideo, type YouTubeServer } from "../peers/youtube-server.ts";
import { startRedditServer, type RedditServer } from "../peers/reddit-server.ts";
import { startTrendsServer, type TrendsServer } from "../peers/google-trends-server.ts";

// The social connectors end to end: gateway (configure, status, actions) -> social-poll worker -> local provider
// stand-ins on 127.0.0.1 -> signals in Postgres.

const BEARER = "app-bearer-token";
const USER_TOKEN = "user-context-token";
const YT_KEY = "AIzaSy-test-key";
const TRENDS_TOKEN = "trends-token";
const TRENDS_OAUTH = { clientId: "trends-client.apps.googleusercontent.com", clientSecret: "trends-client-secret", refreshToken: "1//trends-refresh" };
const BASE = "/api/integrations/social";

let stack: Stack;
let xp: XServer;
let yt: YouTubeServer;
let rd: RedditServer;
let gt: TrendsServer;

beforeAll(async () => {
  [xp, yt, rd, gt] = await Promise.all([startXServer(), startYouTubeServer({ apiKey: YT_KEY }), startRedditServer(), startTrendsServer({ token: TRENDS_TOKEN, oauth: TRENDS_OAUTH })]);
  // The scheduler ticks hourly here: each test polls with tick() when it wants to.
  stack = await startStack({ OUTBOUND_ALLOWLIST: "127.0.0.1", SOCIAL_POLL_INTERVAL_SECONDS: "3600", SOCIAL_POLL_TICK_SECONDS: "3600" });
});
afterAll(async () => {
  await stack?.close();
  await Promise.all([xp?.close(), yt?.close(), rd?.close(), gt?.close()]);
});
beforeEach(async () => {
  // Earlier tests' connections are not due any more: each test polls only its own.
  await db().socialConnection.updateMany({ data: { nextPollAt: null } });
  xp.reset();
  xp.addAppToken(BEARER);
  xp.addUserToken(USER_TOKEN, "11");
  xp.setData({ users: [{ id: "11", name: "Ada", username: "ada" }] });
  yt.requests.length = 0;
  yt.setVideos([]);
  rd.reset();
  gt.reset();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let seq = 0;
/** A post n minutes old; its id carries its time, as X's do. */
function post(n: number, text: string): XPostFixture {
  const at = Date.now() - n * 60_000;
  return {
    id: snowflake(at, seq++), text, author_id: "11",
    created_at: new Date(at).toISOString(),
    public_metrics: { retweet_count: 1, reply_count: 0, like_count: 2, quote_count: 0 },
  };
}

const xBody = (over: Record<string, unknown> = {}) => ({
  credentials: { bearer_token: BEARER, user_token: USER_TOKEN }, terms: ["solar"], options: { page_size: 10, max_pages: 5, category: "energy/solar" },
  base_url: xp.url, ...over,
});

async function connectX(auth: Record<string, string>, over: Record<string, unknown> = {}) {
  const res = await stack.gw.http.put(`${BASE}/x/connection`).set(auth).send(xBody(over));
  expect(res.status).toBe(200);
  return res.body;
}

const status = async (auth: Record<string, string>, provider: string) => (await stack.gw.http.get(`${BASE}/${provider}/status`).set(auth)).body;
const tick = () => stack.gw.deps.queues.add(QUEUES.socialPoll, {});
const db = () => stack.gw.deps.db;

/** Runs a scheduler tick and waits until the connection has been polled after `since`. */
async function tickAndWait(connectionId: string, since = new Date(0)) {
  await tick();
  return waitFor(async () => {
    const c = await db().socialConnection.findUnique({ where: { id: connectionId } });
    return c?.lastPolledAt && c.lastPolledAt > since ? c : null;
  });
}

describe("providers", () => {
  test("GET /providers lists every registered social provider with its connection and action paths, each served", async () => {
    expect((await stack.gw.http.get(`${BASE}/providers`)).status).toBe(401);
    const a = await stack.gw.account();
    const res = await stack.gw.http.get(`${BASE}/providers`).set(a.auth);
    expect(res.status).toBe(200);
    expect(res.body.data.map((p: any) => p.id)).toEqual(registry.ofKind("social").map((c) => c.manifest.id));
    const byId = Object.fromEntries(res.body.data.map((p: any) => [p.id, p]));
    expect(byId.x).toEqual({
      id: "x", display_name: "X", kind: "social", polled: true, connection_path: `${BASE}/x/connection`, connected: false,
      actions: [{ name: "reply", path: `${BASE}/x/reply`, summary: expect.stringContaining("reply"), approval: true }],
    });
    expect(byId.reddit).toMatchObject({ polled: true, actions: [{ name: "poll", path: `${BASE}/reddit/poll`, approval: false }] });
    expect(byId.youtube).toMatchObject({ display_name: "YouTube", polled: true, actions: [{ name: "poll", approval: false }] });
    expect(byId.google_trends).toMatchObject({ display_name: "Google Trends", polled: false, actions: [{ name: "validate", path: `${BASE}/google_trends/validate` }] });

    // Every listed path is a route: without a connection it answers "connection not found", not "no such route".
    for (const p of res.body.data) {
      const put = await stack.gw.http.put(p.connection_path).set(a.auth).send({});
      expect({ path: p.connection_path, status: put.status }).toEqual({ path: p.connection_path, status: 422 });
      const st = await stack.gw.http.get(p.connection_path.replace(/connection$/, "status")).set(a.auth);
      expect({ id: p.id, code: st.body.code }).toEqual({ id: p.id, code: "not_found" });
      for (const action of p.actions) {
        const r = await stack.gw.http.post(action.path).set(a.auth).send({});
        expect({ path: action.path, code: r.body.code }).toEqual({ path: action.path, code: expect.stringMatching(/^(not_found|validation_failed)$/) });
      }
    }
  });
});

describe("configure", () => {
  test("PUT stores the connection, never returns the credentials, and seals them at rest", async () => {
    const a = await stack.gw.account();
    const res = await stack.gw.http.put(`${BASE}/x/connection`).set(a.auth).send(xBody({ terms: ["solar", "wind", "solar"] }));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ provider: "x", status: "active", terms: ["solar", "wind"], base_url: xp.url, last_error: null });
    expect(res.body.options).toMatchObject({ page_size: 10, max_pages: 5, category: "energy/solar" });
    expect(JSON.stringify(res.body)).not.toContain(BEARER);
    expect(res.body).not.toHaveProperty("credentials");

    const row = await db().socialConnection.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(row.credentialsCiphertext).toMatch(/^v1\./);
    expect(row.credentialsCiphertext).not.toContain(BEARER);

    const st = await stack.gw.http.get(`${BASE}/x/status`).set(a.auth);
    expect(st.status).toBe(200);
    expect(JSON.stringify(st.body)).not.toContain(BEARER);
    expect(st.body).toMatchObject({ connection_id: res.body.id, provider: "x", status: "active", terms: ["solar", "wind"], recent_observations: { hours: 24, count: 0 } });
  });

  test("bad input answers 422 naming each field", async () => {
    const a = await stack.gw.account();
    const res = await stack.gw.http.put(`${BASE}/x/connection`).set(a.auth).send({ credentials: {}, terms: [], base_url: "ftp://x" });
    expect(res.status).toBe(422);
    const paths = res.body.errors.map((e: any) => e.path);
    expect(paths).toEqual(expect.arrayContaining(["credentials.bearer_token", "terms", "base_url"]));

    const reddit = await stack.gw.http.put(`${BASE}/reddit/connection`).set(a.auth)
      .send({ credentials: { client_id: "id", client_secret: "s" }, terms: ["solar"], options: { subreddits: ["no spaces allowed"], user_agent: "test:trendgate:1.0 (by /u/x)" } });
    expect(reddit.status).toBe(422);
    expect(reddit.body.errors.map((e: any) => e.path)).toContain("options.subreddits.0");
    // A generic User-Agent (Reddit throttles or blocks it) is refused when saved, naming the form Reddit wants.
    const agent = await stack.gw.http.put(`${BASE}/reddit/connection`).set(a.auth)
      .send({ credentials: { client_id: "id", client_secret: "s" }, terms: ["solar"], options: { subreddits: ["solar"], user_agent: "python-requests/2.31" } });
    expect(agent.status).toBe(422);
    expect(agent.body.errors).toEqual([expect.objectContaining({ path: "options.user_agent", message: expect.stringContaining("(by /u/") })]);
  });

  test("another account's connection is 404", async () => {
    const a = await stack.gw.account();
    const b = await stack.gw.account();
    await connectX(a.auth);
    expect((await stack.gw.http.get(`${BASE}/x/status`).set(b.auth)).status).toBe(404);
    expect((await stack.gw.http.post(`${BASE}/x/reply`).set(b.auth).send({ in_reply_to_id: "1", text: "hi" })).status).toBe(404);
    expect((await stack.gw.http.post(`${BASE}/youtube/poll`).set(b.auth)).status).toBe(404);
  });
});

describe("X polling", () => {
  test("a tick polls due connections: every page is stored as signals, then only newer posts are fetched", async () => {
    const a = await stack.gw.account();
    const conn = await connectX(a.auth);
    const posts = Array.from({ length: 25 }, (_, i) => post(i + 1, `solar launch ${i}`));
    xp.setData({ posts: [...posts, post(3, "wind only")] });

    const polled = await tickAndWait(conn.id);
    expect(polled.status).toBe("active");
    const signals = await db().signal.findMany({ where: { accountId: a.accountId, source: "x" } });
    expect(signals).toHaveLength(25);
    expect(signals[0]).toMatchObject({ topic: "solar", category: "energy/solar", count: 4 });
    expect(new Set(signals.map((s) => s.externalId))).toEqual(new Set(posts.map((p) => p.id)));
    const searches = xp.requests.filter((r) => r.path === "/2/tweets/search/recent");
    expect(searches).toHaveLength(3); // 10 + 10 + 5
    expect(searches[1].query.get("next_token")).toBeTruthy();
    expect(polled.nextPollAt!.getTime()).toBeGreaterThan(Date.now() + 3000 * 1000);

    const st = await status(a.auth, "x");
    expect(st.recent_observations.count).toBe(25);
    expect(st.quota.last).toMatchObject({ limit: 450, remaining: 447, cost: 3 });

    // Due again: only posts newer than the newest seen are asked for and stored.
    const fresh = post(0, "solar news just now");
    xp.setData({ posts: [...posts, fresh] });
    await db().socialConnection.update({ where: { id: conn.id }, data: { nextPollAt: new Date() } });
    xp.requests.length = 0;
    await tickAndWait(conn.id, polled.lastPolledAt!);
    expect(xp.requests[0].query.get("since_id")).toBe(posts[0].id);
    expect(await db().signal.count({ where: { accountId: a.accountId, source: "x" } })).toBe(26);
  });

  test("X's window is paced: a poll stops before a search the window cannot pay for, and the next one starts at that term", async () => {
    const a = await stack.gw.account();
    const conn = await connectX(a.auth, { terms: ["alpha", "beta", "gamma"], options: { page_size: 10, max_pages: 2 } });
    xp.setData({ posts: [post(3, "alpha beta gamma")] });
    // Three requests left in the window: alpha leaves 2, beta leaves 1, gamma (up to 2 pages) waits for the reset.
    const reset = Math.floor(Date.now() / 1000) + 600;
    xp.setRateLimit({ limit: 450, remaining: 3, resetEpochSeconds: reset });
    xp.requests.length = 0;
    const searched = () => xp.requests.filter((r) => r.path === "/2/tweets/search/recent").map((r) => `${r.query.get("query")}:${r.status}`);
    let polled = await tickAndWait(conn.id);
    expect(searched()).toEqual(["alpha:200", "beta:200"]);
    expect(polled.status).toBe("active");
    expect(polled.nextPollAt!.getTime()).toBeGreaterThanOrEqual(reset * 1000);

    // The window resets; the next poll starts with the term it stopped before.
    xp.setRateLimit({ limit: 450, remaining: 450, resetEpochSeconds: reset + 900 });
    await db().socialConnection.update({ where: { id: conn.id }, data: { nextPollAt: new Date() } });
    xp.requests.length = 0;
    polled = await tickAndWait(conn.id, polled.lastPolledAt!);
    expect(searched()).toEqual(["gamma:200", "alpha:200", "beta:200"]);
    expect(await db().signal.count({ where: { accountId: a.accountId, source: "x" } })).toBe(1);
  });

  test("a burst larger than one poll's pages is read over the next polls, not cut off: every post counts", async () => {
    const a = await stack.gw.account();
    const conn = await connectX(a.auth, { options: { page_size: 10, max_pages: 2, category: "energy/solar" } });
    const seen = post(60, "solar before the burst");
    xp.setData({ posts: [seen] });
    let polled = await tickAndWait(conn.id);
    const again = async () => {
      await db().socialConnection.update({ where: { id: conn.id }, data: { nextPollAt: new Date() } });
      xp.requests.length = 0;
      polled = await tickAndWait(conn.id, polled.lastPolledAt!);
      return xp.requests.filter((r) => r.path === "/2/tweets/search/recent");
    };
    const count = () => db().signal.count({ where: { accountId: a.accountId, source: "x" } });

    // 30 new posts between two polls; a poll reads at most 2 pages of 10.
    const burst = Array.from({ length: 30 }, (_, i) => post(i + 1, `solar burst ${i}`));
    xp.setData({ posts: [seen, ...burst] });
    let searches = await again();
    expect(searches).toHaveLength(2);
    expect(await count()).toBe(1 + 20);
    // The next poll reads the rest of the burst (older than the oldest read, newer than the post seen before it)...
    const late = post(0, "solar after the burst");
    xp.setData({ posts: [seen, ...burst, late] });
    searches = await again();
    expect(searches[0].query.get("since_id")).toBe(seen.id);
    expect(searches[0].query.get("until_id")).toBe(burst[19].id);
    expect(await count()).toBe(1 + 30);
    // ...and then moves on from the newest post of the burst.
    searches = await again();
    expect(searches[0].query.get("since_id")).toBe(burst[0].id);
    expect(searches[0].query.get("until_id")).toBeNull();
    expect(await count()).toBe(1 + 30 + 1);
    expect(new Set((await db().signal.findMany({ where: { accountId: a.accountId, source: "x" } })).map((s) => s.externalId))).toEqual(new Set([seen, ...burst, late].map((p) => p.id)));
  });

  test("DELETE …/connection disconnects: polling stops, the signals stay, the credentials are gone; another account's answers 404", async () => {
    const a = await stack.gw.account();
    const conn = await connectX(a.auth);
    xp.setData({ posts: [post(2, "solar before disconnect")] });
    await tickAndWait(conn.id);
    const b = await stack.gw.account();
    expect((await stack.gw.http.delete(`${BASE}/x/connection`).set(b.auth)).status).toBe(404);

    const del = await stack.gw.http.delete(`${BASE}/x/connection`).set(a.auth);
    expect(del.status).toBe(204);
    expect((await stack.gw.http.get(`${BASE}/x/status`).set(a.auth)).status).toBe(404);
    expect(await db().socialConnection.count({ where: { id: conn.id } })).toBe(0);
    expect(await db().signal.count({ where: { accountId: a.accountId, source: "x" } })).toBe(1);
    xp.requests.length = 0;
    await tick();
    await sleep(800);
    expect(xp.requests).toHaveLength(0);
    expect((await stack.gw.http.delete(`${BASE}/x/connection`).set(a.auth)).status).toBe(404);
  });

  test("the daily read cap (X bills per post read) stops reading for the rest of the UTC day: quota_exhausted until midnight", async () => {
    const a = await stack.gw.account();
    const conn = await connectX(a.auth, { options: { page_size: 10, max_pages: 5, max_posts_per_day: 25, category: "energy/solar" } });
    xp.setData({ posts: Array.from({ length: 40 }, (_, i) => post(i + 1, `solar cap ${i}`)) });
    let polled = await tickAndWait(conn.id);
    expect(polled.status).toBe("active");
    expect(await db().signal.count({ where: { accountId: a.accountId, source: "x" } })).toBe(20); // 2 pages of 10 fit under 25
    expect((await status(a.auth, "x")).quota.spend).toMatchObject({ posts: 20, cap: 25 });

    await db().socialConnection.update({ where: { id: conn.id }, data: { nextPollAt: new Date() } });
    xp.requests.length = 0;
    polled = await tickAndWait(conn.id, polled.lastPolledAt!);
    expect(xp.requests).toHaveLength(0); // nothing more is read (and billed) today
    expect(polled.status).toBe("quota_exhausted");
    const midnight = new Date(); midnight.setUTCHours(24, 0, 0, 0);
    expect(polled.nextPollAt!.getTime()).toBe(midnight.getTime());
    expect(polled.lastError).toMatch(/daily read cap of 25 posts/);
  });

  test("a 429 sets rate_limited until X's reset, and the next tick skips the connection", async () => {
    const a = await stack.gw.account();
    const conn = await connectX(a.auth);
    const reset = Math.floor(Date.now() / 1000) + 900;
    xp.setRateLimit({ resetEpochSeconds: reset });
    xp.failNext(1, 429);

    const polled = await tickAndWait(conn.id);
    expect(polled.status).toBe("rate_limited");
    expect(polled.lastError).toMatch(/rate limit/i);
    expect(polled.nextPollAt!.getTime()).toBeGreaterThanOrEqual(reset * 1000 - 2000);

    const before = xp.requests.length;
    await tick();
    await sleep(1000);
    expect(xp.requests.length).toBe(before);
    expect((await status(a.auth, "x")).status).toBe("rate_limited");
  });

  test("after a 429 the status shows the window spent until the retry time, not the quota read before it", async () => {
    const a = await stack.gw.account();
    const conn = await connectX(a.auth);
    xp.setData({ posts: [post(3, "solar first")] });
    let polled = await tickAndWait(conn.id);
    expect((await status(a.auth, "x")).quota.last.remaining).toBeGreaterThan(0);
    const reset = Math.floor(Date.now() / 1000) + 900;
    xp.setRateLimit({ resetEpochSeconds: reset });
    xp.failNext(1, 429);
    await db().socialConnection.update({ where: { id: conn.id }, data: { nextPollAt: new Date() } });
    polled = await tickAndWait(conn.id, polled.lastPolledAt!);
    expect(polled.status).toBe("rate_limited");
    const st = await status(a.auth, "x");
    expect(st.quota.last.remaining).toBe(0);
    expect(Math.abs(Date.parse(st.quota.last.reset_at) - polled.nextPollAt!.getTime())).toBeLessThan(1000);
  });

  test("a 401 sets needs_reauth with a clear error and an account event; polling stops until new credentials", async () => {
    const a = await stack.gw.account();
    const conn = await connectX(a.auth);
    xp.failNext(1, 401);

    const polled = await tickAndWait(conn.id);
    expect(polled.status).toBe("needs_reauth");
    expect(polled.nextPollAt).toBeNull();
    const st = await status(a.auth, "x");
    expect(st.last_error).toMatch(/re-authorize the X connection/);

    const events = await stack.gw.http.get("/api/events?type=connector.needs_reauth").set(a.auth);
    expect(events.body.data).toHaveLength(1);
    expect(events.body.data[0].data).toMatchObject({ connection_id: conn.id, provider: "x" });
    expect(catalogProblemsOf(events.body.data)).toEqual([]);
    expect((await stack.gw.http.post(`${BASE}/x/reply`).set(a.auth).send({ in_reply_to_id: "1", text: "hi" })).status).toBe(409);

    // Replacing the credentials makes it active and due again; its first good poll tells the account it recovered.
    const again = await connectX(a.auth);
    expect(again).toMatchObject({ id: conn.id, status: "active", last_error: null });
    const types = async () => ((await stack.gw.http.get("/api/events").set(a.auth)).body.data as any[]).map((e) => e.type);
    expect(await types()).not.toContain("connector.recovered");
    await tickAndWait(conn.id, polled.lastPolledAt!);
    expect(await types()).toEqual(["connector.recovered", "connector.needs_reauth"]);
    await db().socialConnection.update({ where: { id: conn.id }, data: { nextPollAt: new Date() } });
    await tickAndWait(conn.id, (await db().socialConnection.findUniqueOrThrow({ where: { id: conn.id } })).lastPolledAt!);
    expect(await types()).toEqual(["connector.recovered", "connector.needs_reauth"]); // once
  });

  test("a reply refused for its user token fails alone: searches go on with the app token and the connection stays active", async () => {
    const a = await stack.gw.account();
    const conn = await connectX(a.auth, { credentials: { bearer_token: BEARER, user_token: "expired-user-token" } });
    const target = post(5, "solar target post");
    xp.setData({ posts: [target] });
    let polled = await tickAndWait(conn.id);
    const draft = await stack.gw.http.post(`${BASE}/x/reply`).set(a.auth).send({ in_reply_to_id: target.id, text: "Thanks!" });
    expect((await stack.gw.http.post(`${BASE}/x/reply`).set(a.auth).send({ draft_id: draft.body.id, decision: "approve" })).status).toBe(202);
    const done = await waitFor(async () => (await status(a.auth, "x")).actions.find((x: any) => x.id === draft.body.id && !["queued", "retrying"].includes(x.status)));
    expect(done).toMatchObject({ status: "failed", error: expect.stringContaining("polling continues") });

    const st = await status(a.auth, "x");
    expect(st.status).toBe("active");
    expect(st.next_poll_at).not.toBeNull();
    const fresh = post(0, "solar news after the failed reply");
    xp.setData({ posts: [target, fresh] });
    await db().socialConnection.update({ where: { id: conn.id }, data: { nextPollAt: new Date() } });
    polled = await tickAndWait(conn.id, polled.lastPolledAt!);
    expect(polled.status).toBe("active");
    expect(await db().signal.count({ where: { accountId: a.accountId, source: "x", externalId: fresh.id } })).toBe(1);
    expect((await stack.gw.http.get("/api/events?type=connector.needs_reauth").set(a.auth)).body.data).toEqual([]);
  });

  test("with a refresh token, a reply after the user token's two hours gets a new token first and stores the rotated pair, sealed", async () => {
    const a = await stack.gw.account();
    xp.addOAuthClient("x-client", "x-client-secret");
    xp.addUserToken("user-token-1", "11", 7200);
    xp.addRefreshToken("refresh-1", "x-client", "11");
    const creds = { bearer_token: BEARER, user_token: "user-token-1", user_refresh_token: "refresh-1", client_id: "x-client", client_secret: "x-client-secret" };
    const conn = await connectX(a.auth, { credentials: creds, terms: ["nothing-matches-here"] });
    const target = post(5, "solar target post");
    xp.setData({ posts: [target] });
    const replyOnce = async (text: string) => {
      const draft = await stack.gw.http.post(`${BASE}/x/reply`).set(a.auth).send({ in_reply_to_id: target.id, text });
      expect((await stack.gw.http.post(`${BASE}/x/reply`).set(a.auth).send({ draft_id: draft.body.id, decision: "approve" })).status).toBe(202);
      return waitFor(async () => (await status(a.auth, "x")).actions.find((x: any) => x.id === draft.body.id && !["queued", "retrying"].includes(x.status)));
    };

    expect(await replyOnce("First")).toMatchObject({ status: "succeeded" });
    expect(xp.tokenRequests).toHaveLength(0); // the token given is still valid

    xp.expireUserToken("user-token-1"); // two hours later
    expect(await replyOnce("Second")).toMatchObject({ status: "succeeded" });
    expect(xp.tokenRequests.map((f) => [f.get("grant_type"), f.get("refresh_token")])).toEqual([["refresh_token", "refresh-1"]]);
    // X rotated the refresh token; the new pair is stored sealed, never in the clear, and used from now on.
    const row = await db().socialConnection.findUniqueOrThrow({ where: { id: conn.id } });
    const stored = JSON.parse(stack.gw.deps.secrets.open(row.credentialsCiphertext));
    expect(stored).toMatchObject({ bearer_token: BEARER, client_id: "x-client", user_token: expect.not.stringMatching(/^user-token-1$/), user_refresh_token: expect.not.stringMatching(/^refresh-1$/) });
    expect(JSON.stringify(await status(a.auth, "x"))).not.toContain(stored.user_refresh_token);
    xp.expireUserToken(stored.user_token);
    expect(await replyOnce("Third")).toMatchObject({ status: "succeeded" });
    expect(xp.tokenRequests.map((f) => f.get("refresh_token"))).toEqual(["refresh-1", stored.user_refresh_token]);
    expect(xp.created.map((p) => p.text)).toEqual(["First", "Second", "Third"]);

    // A refresh token X no longer honours fails the reply with what to do; searches go on.
    const revoked = await connectX(a.auth, { credentials: { ...creds, user_token: "gone", user_refresh_token: "revoked" }, terms: ["nothing-matches-here"] });
    expect(await replyOnce("Fourth")).toMatchObject({ status: "failed", error: expect.stringMatching(/invalid_request.*new credentials/) });
    expect((await status(a.auth, "x")).status).toBe("active");
    expect(revoked.id).toBe(conn.id);
    // A refresh token needs its OAuth client.
    const bad = await stack.gw.http.put(`${BASE}/x/connection`).set(a.auth).send(xBody({ credentials: { bearer_token: BEARER, user_refresh_token: "r" } }));
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: any) => e.path)).toEqual(["credentials.client_id"]);
  });

  test("X's reply rule (since February 2026): only to authors who mentioned or quoted the account; a refusal says so and is not a credentials problem", async () => {
    const a = await stack.gw.account();
    await connectX(a.auth, { terms: ["nothing-matches-here"] });
    const stranger = { ...post(4, "solar take from a stranger"), author_id: "22" };
    const mention = { ...post(3, "solar question for @ada"), author_id: "22" };
    const quoting = { ...post(2, "solar quote"), author_id: "22", quotes: ["11"] };
    xp.setData({ posts: [stranger, mention, quoting] });
    const replyTo = async (target: XPostFixture, text: string) => {
      const draft = await stack.gw.http.post(`${BASE}/x/reply`).set(a.auth).send({ in_reply_to_id: target.id, text });
      await stack.gw.http.post(`${BASE}/x/reply`).set(a.auth).send({ draft_id: draft.body.id, decision: "approve" });
      return waitFor(async () => (await status(a.auth, "x")).actions.find((x: any) => x.id === draft.body.id && !["queued", "retrying"].includes(x.status)));
    };
    const refused = await replyTo(stranger, "Hello stranger");
    expect(refused).toMatchObject({ status: "failed", error: expect.stringMatching(/X refused the post \(403 Reply to this conversation is not allowed/) });
    expect(refused.error).not.toMatch(/credentials/);
    expect(await replyTo(mention, "Thanks for asking")).toMatchObject({ status: "succeeded" });
    expect(await replyTo(quoting, "Thanks for quoting")).toMatchObject({ status: "succeeded" });
    expect(xp.created.map((p) => p.text)).toEqual(["Thanks for asking", "Thanks for quoting"]);
  });

  test("a reply is drafted, waits for approval, and is posted by the worker only once approved", async () => {
    const a = await stack.gw.account();
    await connectX(a.auth, { terms: ["nothing-matches-here"] });
    const target = post(5, "solar target post");
    xp.setData({ posts: [target] });
    const reply = (body: object) => stack.gw.http.post(`${BASE}/x/reply`).set(a.auth).send(body);

    const draft = await reply({ in_reply_to_id: target.id, text: "Thanks for sharing!" });
    expect(draft.status).toBe(201);
    expect(draft.body).toMatchObject({ action: "reply", status: "awaiting_approval", input: { in_reply_to_id: target.id, text: "Thanks for sharing!" } });
    await new Promise((r) => setTimeout(r, 500));
    expect(xp.created).toEqual([]); // nothing is posted before approval
    expect((await status(a.auth, "x")).actions[0]).toMatchObject({ id: draft.body.id, status: "awaiting_approval" });

    const approved = await reply({ draft_id: draft.body.id, decision: "approve" });
    expect(approved.status).toBe(202);
    expect(approved.body.status).toBe("queued");
    const done = await waitFor(async () => (await status(a.auth, "x")).actions.find((x: any) => x.id === draft.body.id && !["queued", "retrying"].includes(x.status)));
    expect(done).toMatchObject({ status: "succeeded", result: { post_id: expect.any(String) } });
    expect(xp.created).toEqual([expect.objectContaining({ text: "Thanks for sharing!", in_reply_to_tweet_id: target.id })]);
    expect((await reply({ draft_id: draft.body.id, decision: "approve" })).status).toBe(409); // decided once

    const other = await reply({ in_reply_to_id: target.id, text: "Not this one" });
    const rejected = await reply({ draft_id: other.body.id, decision: "reject" });
    expect(rejected.status).toBe(200);
    expect(rejected.body.status).toBe("rejected");
    expect((await reply({ draft_id: "act_01kaqzzzzzzzzzzzzzzzzzzzzz", decision: "approve" })).status).toBe(404);
    await new Promise((r) => setTimeout(r, 300));
    expect(xp.created).toHaveLength(1);
  });
});

describe("YouTube polling", () => {
  // Google counts quota per Cloud project: each test names its own, so none inherits another's spent ledger.
  let projects = 0;
  const ytOptions = () => ({ project: `social-api-test-${++projects}` });
  const video = (i: number, views: number, extra: Partial<FixtureVideo> = {}): FixtureVideo => ({
    id: `kite${i}`, title: `Solar kite test #${i}`, channelTitle: "Sky Lab", publishedAt: new Date(Date.now() - 3_600_000).toISOString(),
    viewCount: views, likeCount: 10, commentCount: 5, ...extra,
  });
  const connect = async (auth: Record<string, string>) => {
    const res = await stack.gw.http.put(`${BASE}/youtube/connection`).set(auth).send({ credentials: { api_key: YT_KEY }, terms: ["solar kite"], options: ytOptions(), base_url: yt.baseUrl });
    expect(res.status).toBe(200);
    expect(JSON.stringify(res.body)).not.toContain(YT_KEY);
    return res.body;
  };
  const pollNow = async (auth: Record<string, string>) => {
    const res = await stack.gw.http.post(`${BASE}/youtube/poll`).set(auth);
    expect(res.status).toBe(202);
    return waitFor(async () => (await status(auth, "youtube")).actions.find((x: any) => x.id === res.body.id && x.status !== "queued"));
  };

  test("poll stores each video's engagement as a signal per hour, and the quota ledger persists across polls", async () => {
    const a = await stack.gw.account();
    const conn = await connect(a.auth);
    yt.setVideos([video(1, 1000), video(2, 50)]);

    expect(await pollNow(a.auth)).toMatchObject({ status: "succeeded", result: { stored: 2 } });
    const signals = await db().signal.findMany({ where: { accountId: a.accountId, source: "youtube" }, orderBy: { externalId: "asc" } });
    expect(signals.map((s) => [s.externalId.replace(/@.*/, ""), s.count, s.category])).toEqual([["kite1", 1015, "social/youtube"], ["kite2", 65, "social/youtube"]]);
    expect(signals[0].externalId).toMatch(/^kite1@\d{4}-\d\d-\d\dT\d\d:00Z$/);

    // Same hour: no second signal, the reading is kept for the next hour; two more units spent.
    yt.setVideos([video(1, 1500), video(2, 50)]);
    expect(await pollNow(a.auth)).toMatchObject({ status: "succeeded", result: { stored: 0 } });
    let st = await status(a.auth, "youtube");
    expect(st.quota.ledger.spent).toEqual({ search: 2, default: 2 });
    expect(st.quota.last.search).toMatchObject({ limit: 100, remaining: 98 });

    // Next hour (as if: the readings and their signals are moved an hour back): the delta since the kept reading is counted.
    const row = await db().socialConnection.findUniqueOrThrow({ where: { id: conn.id } });
    const cursor = row.cursor as any;
    for (const v of Object.values<any>(cursor.terms["solar kite"].videos)) v.hour = "2000-01-01T00:00Z";
    await db().socialConnection.update({ where: { id: conn.id }, data: { cursor } });
    for (const s of signals) await db().signal.updateMany({ where: { id: s.id }, data: { externalId: s.externalId.replace(/@.*/, "@2000-01-01T00:00Z") } });
    expect(await pollNow(a.auth)).toMatchObject({ status: "succeeded", result: { stored: 1 } });
    const kite1 = await db().signal.findMany({ where: { accountId: a.accountId, source: "youtube", externalId: { startsWith: "kite1@" } } });
    expect(kite1.map((s) => s.count).sort((x, y) => x - y)).toEqual([500, 1015].sort((x, y) => x - y));

    // YouTube says the quota is spent: quota_exhausted until midnight Pacific, the ledger marks the bucket used up.
    yt.failNext(1, "quotaExceeded");
    expect(await pollNow(a.auth)).toMatchObject({ status: "failed" });
    st = await status(a.auth, "youtube");
    expect(st.status).toBe("quota_exhausted");
    expect(st.quota.ledger.spent.search).toBe(100);
    expect(Date.parse(st.next_poll_at)).toBeGreaterThan(Date.now());
    expect(Date.parse(st.next_poll_at)).toBeLessThanOrEqual(Date.now() + 25 * 3_600_000);
  });

  test("polls are paced so the day's 100 searches last until midnight Pacific, whatever the poll interval", async () => {
    const a = await stack.gw.account();
    const terms = Array.from({ length: 10 }, (_, i) => `kite term ${i}`);
    const put = await stack.gw.http.put(`${BASE}/youtube/connection`).set(a.auth).send({ credentials: { api_key: YT_KEY }, terms, options: ytOptions(), base_url: yt.baseUrl });
    expect(put.status).toBe(200);
    yt.setVideos([video(1, 1000)]);
    const polled = await tickAndWait(put.body.id);
    expect(polled.status).toBe("active");
    const st = await status(a.auth, "youtube");
    expect(st.quota.last.search.remaining).toBe(90); // 10 searches spent, one per term
    const untilReset = Date.parse(st.quota.last.search.reset_at) - polled.lastPolledAt!.getTime();
    const gap = polled.nextPollAt!.getTime() - polled.lastPolledAt!.getTime();
    // 9 more polls of 10 searches, spread over the time to the reset: hours apart, not the 1 h interval.
    expect(Math.abs(gap - Math.max(untilReset / 9, 3600 * 1000))).toBeLessThan(2000);
    expect(gap).toBeGreaterThan(untilReset / 9 - 2000);
  });

  test("simultaneous polls of one connection are counted exactly: every search in the quota ledger", async () => {
    const a = await stack.gw.account();
    await connect(a.auth);
    yt.setVideos([video(1, 1000)]);
    yt.requests.length = 0;
    const done = await Promise.all(Array.from({ length: 6 }, () => pollNow(a.auth)));
    expect(done.every((d: any) => d.status === "succeeded")).toBe(true);
    const searches = yt.requests.filter((r) => r.path.endsWith("/search")).length;
    const st = await status(a.auth, "youtube");
    expect(st.quota.ledger.spent.search).toBe(searches);
    expect(searches).toBeGreaterThanOrEqual(6);
  });

  test("a bad key sets needs_reauth and records an account event", async () => {
    const a = await stack.gw.account();
    await connect(a.auth);
    yt.failNext(1, "keyInvalid");
    await pollNow(a.auth);
    const st = await status(a.auth, "youtube");
    expect(st).toMatchObject({ status: "needs_reauth", next_poll_at: null });
    expect(st.last_error).toMatch(/keyInvalid/);
    const events = await stack.gw.http.get("/api/events?type=connector.needs_reauth").set(a.auth);
    expect(events.body.data[0].data).toMatchObject({ provider: "youtube" });
  });
});

describe("Reddit polling", () => {
  test("poll fetches an app-only token and stores each subreddit's matching posts", async () => {
    const a = await stack.gw.account();
    rd.registerApp("app-id", "app-secret");
    const now = Math.floor(Date.now() / 1000);
    rd.setPosts([
      { id: "1a", subreddit: "solar", title: "Solar panels on every roof", score: 10, num_comments: 2, created_utc: now - 60 },
      { id: "1b", subreddit: "solar", title: "Wind only", score: 1, num_comments: 0, created_utc: now - 120 },
    ]);
    const put = await stack.gw.http.put(`${BASE}/reddit/connection`).set(a.auth).send({
      credentials: { client_id: "app-id", client_secret: "app-secret" }, terms: ["solar"],
      options: { subreddits: ["solar"], user_agent: "server:trendgate-test:0.1.0 (by /u/trendgate_bot)" },
      base_url: rd.apiUrl, auth_base_url: rd.authUrl,
    });
    expect(put.status).toBe(200);
    expect(JSON.stringify(put.body)).not.toContain("app-secret");

    const res = await stack.gw.http.post(`${BASE}/reddit/poll`).set(a.auth);
    expect(res.status).toBe(202);
    const done = await waitFor(async () => (await status(a.auth, "reddit")).actions.find((x: any) => x.id === res.body.id && x.status !== "queued"));
    expect(done).toMatchObject({ status: "succeeded", result: { stored: 1 } });
    const signals = await db().signal.findMany({ where: { accountId: a.accountId, source: "reddit" } });
    expect(signals.map((s) => [s.externalId, s.count, s.topic])).toEqual([["t3_1a", 13, "solar"]]);
  });
});

describe("Reddit polling under limits and refusals", () => {
  const UA = "server:trendgate-test:0.1.0 (by /u/trendgate_bot)";
  async function connectReddit(auth: Record<string, string>, terms: string[], subreddits: string[]) {
    rd.registerApp("app-id", "app-secret");
    const put = await stack.gw.http.put(`${BASE}/reddit/connection`).set(auth).send({
      credentials: { client_id: "app-id", client_secret: "app-secret" }, terms, options: { subreddits, user_agent: UA }, base_url: rd.apiUrl, auth_base_url: rd.authUrl,
    });
    expect(put.status).toBe(200);
    return put.body;
  }
  // Searches Reddit answered (a token held from an earlier test, unknown to the reset stand-in, is refused once with 401).
  const searched = () => rd.requests.filter((r) => /\/search\/?$/.test(r.path) && r.status !== 401).map((r) => `${r.path.split("/")[2]}:${r.query.get("q")}`);
  const pollNow = async (auth: Record<string, string>) => {
    const res = await stack.gw.http.post(`${BASE}/reddit/poll`).set(auth);
    expect(res.status).toBe(202);
    return waitFor(async () => (await status(auth, "reddit")).actions.find((x: any) => x.id === res.body.id && x.status !== "queued"));
  };

  test("Reddit's window is paced: a poll stops before running out of requests and the next one starts where it stopped, so every term is searched", async () => {
    const a = await stack.gw.account();
    const now = Math.floor(Date.now() / 1000);
    const subs = ["solar", "wind", "tides"];
    rd.setPosts(subs.map((sub, i) => ({ id: `rr${i}`, subreddit: sub, title: "alpha beta gamma", score: 1, num_comments: 0, created_utc: now - 60 })));
    const conn = await connectReddit(a.auth, ["alpha", "beta", "gamma"], subs);
    rd.setRateLimit({ limit: 5, used: 0, resetSeconds: 600 });
    rd.requests.length = 0;
    let polled = await tickAndWait(conn.id);
    // 4 searches answered; one request left, fewer than a search may take (max_pages 2): no 429, a pause until the reset.
    expect(searched()).toHaveLength(4);
    expect(polled.status).toBe("active");
    expect(polled.lastError).toBeNull();
    expect(polled.nextPollAt!.getTime()).toBeGreaterThan(Date.now() + 590_000);

    // The window resets; the next poll resumes at the search it stopped before.
    rd.setRateLimit({ used: 0, resetSeconds: 600 });
    await db().socialConnection.update({ where: { id: conn.id }, data: { nextPollAt: new Date() } });
    rd.requests.length = 0;
    polled = await tickAndWait(conn.id, polled.lastPolledAt!);
    expect(searched()[0]).toBe("wind:beta"); // the 5th of alpha, beta, gamma x solar, wind, tides
    expect(searched().filter((x) => x.endsWith(":gamma")).length).toBeGreaterThan(0);
  });

  test("one subreddit that refuses (private) does not stop the others: the connection stays active and says which was skipped", async () => {
    const a = await stack.gw.account();
    const now = Math.floor(Date.now() / 1000);
    rd.setPosts([
      { id: "ok1", subreddit: "solar", title: "solar roofs", score: 3, num_comments: 1, created_utc: now - 60 },
      { id: "ok2", subreddit: "secretclub", title: "solar club", score: 3, num_comments: 1, created_utc: now - 60 },
    ]);
    rd.markPrivate("secretclub");
    const conn = await connectReddit(a.auth, ["solar"], ["secretclub", "solar"]);
    const polled = await tickAndWait(conn.id);
    expect(polled.status).toBe("active");
    expect(polled.nextPollAt).not.toBeNull();
    expect(polled.lastError).toMatch(/r\/secretclub skipped: .*private/);
    const signals = await db().signal.findMany({ where: { accountId: a.accountId, source: "reddit" } });
    expect(signals.map((x) => x.externalId)).toEqual(["t3_ok1"]);
  });

  test("a burst larger than one poll's pages is read on by the next polls (Reddit's `after`), not skipped", async () => {
    const a = await stack.gw.account();
    const now = Math.floor(Date.now() / 1000);
    const seen = { id: "seen1", subreddit: "solar", title: "solar before", score: 1, num_comments: 0, created_utc: now - 3000 };
    rd.setPosts([seen]);
    const conn = await connectReddit(a.auth, ["solar"], ["solar"]);
    let polled = await tickAndWait(conn.id);
    const again = async () => {
      await db().socialConnection.update({ where: { id: conn.id }, data: { nextPollAt: new Date() } });
      polled = await tickAndWait(conn.id, polled.lastPolledAt!);
    };
    const count = () => db().signal.count({ where: { accountId: a.accountId, source: "reddit" } });
    expect(await count()).toBe(1);
    // 250 new posts; a poll reads at most 2 pages of 100.
    const burst = Array.from({ length: 250 }, (_, i) => ({ id: `b${i}`, subreddit: "solar", title: `solar burst ${i}`, score: 1, num_comments: 0, created_utc: now - 1000 + i }));
    rd.setPosts([seen, ...burst]);
    await again();
    expect(await count()).toBe(1 + 200);
    await again();
    expect(await count()).toBe(1 + 250);
    // Then on from the newest post of the burst: a later post is read, nothing twice.
    rd.setPosts([seen, ...burst, { id: "late1", subreddit: "solar", title: "solar after", score: 1, num_comments: 0, created_utc: now + 5 }]);
    await again();
    expect(await count()).toBe(1 + 250 + 1);
  });

  test("the app token is asked for once and used for its hour; one Reddit revoked early is replaced without needing new credentials", async () => {
    const a = await stack.gw.account();
    rd.setPosts([{ id: "tk1", subreddit: "solar", title: "solar", score: 1, num_comments: 0, created_utc: Math.floor(Date.now() / 1000) - 60 }]);
    const conn = await connectReddit(a.auth, ["solar"], ["solar"]);
    const tokenRequests = () => rd.requests.filter((r) => r.host === "auth").length;
    let polled = await tickAndWait(conn.id);
    const again = async () => {
      await db().socialConnection.update({ where: { id: conn.id }, data: { nextPollAt: new Date() } });
      polled = await tickAndWait(conn.id, polled.lastPolledAt!);
    };
    const issued = tokenRequests();
    expect(issued).toBeLessThanOrEqual(1); // none when a token from an earlier poll of this app is still held
    await again();
    await again();
    expect(tokenRequests()).toBe(issued);

    rd.failNext(1, 401); // the held token is refused (revoked) before its hour is over
    await again();
    expect(polled.status).toBe("active");
    expect(tokenRequests()).toBe(issued + 1);
    expect(rd.requests.filter((r) => r.host === "api").slice(-2).map((r) => r.status)).toEqual([401, 200]);
  });

  test("every subreddit refusing still puts the connection in error", async () => {
    const a = await stack.gw.account();
    rd.setPosts([{ id: "p1", subreddit: "secretclub", title: "solar", score: 1, num_comments: 0, created_utc: Math.floor(Date.now() / 1000) - 60 }]);
    rd.markPrivate("secretclub");
    const conn = await connectReddit(a.auth, ["solar"], ["secretclub"]);
    const polled = await tickAndWait(conn.id);
    expect(polled.status).toBe("error");
  });

  test("poll now while the rate limit is spent does not call Reddit; it says when the scheduled poll runs", async () => {
    const a = await stack.gw.account();
    rd.setPosts([{ id: "q1", subreddit: "solar", title: "solar", score: 1, num_comments: 0, created_utc: Math.floor(Date.now() / 1000) - 60 }]);
    const conn = await connectReddit(a.auth, ["solar"], ["solar"]);
    rd.failNext(1, 429);
    const polled = await tickAndWait(conn.id);
    expect(polled.status).toBe("rate_limited");
    rd.requests.length = 0;
    for (let i = 0; i < 3; i++) {
      const done = await pollNow(a.auth);
      expect(done).toMatchObject({ status: "failed", error: expect.stringMatching(/^not polled: rate limited until .*Z, when the scheduled poll runs$/) });
    }
    expect(rd.requests).toHaveLength(0); // no 429s and no token requests
  });
});

describe("Google Trends validation", () => {
  test("with a refresh token, each validation gets a fresh access token from Google's token endpoint, so it keeps working past the hour", async () => {
    const a = await stack.gw.account();
    const day = 86_400_000;
    gt.setSeries("kite surf", Array.from({ length: 35 }, (_, i) => ({ time: new Date(Date.now() - (36 - i) * day).toISOString(), searchInterest: 20 })));
    gt.setPollsUntilDone(1);
    const creds = { refresh_token: TRENDS_OAUTH.refreshToken, client_id: TRENDS_OAUTH.clientId, client_secret: TRENDS_OAUTH.clientSecret };
    const put = await stack.gw.http.put(`${BASE}/google_trends/connection`).set(a.auth).send({ credentials: creds, base_url: gt.baseUrl, token_url: gt.tokenUrl });
    expect(put.status).toBe(200);
    expect(JSON.stringify(put.body)).not.toContain(TRENDS_OAUTH.refreshToken);
    const validate = async () => {
      const res = await stack.gw.http.post(`${BASE}/google_trends/validate`).set(a.auth).send({ term: "kite surf" });
      return waitFor(async () => (await status(a.auth, "google_trends")).actions.find((x: any) => x.id === res.body.id && x.status !== "queued"), { timeoutMs: 15_000 });
    };
    const before = gt.tokenRequests.length;
    expect(await validate()).toMatchObject({ status: "succeeded", result: { verdict: "refuted" } });
    gt.expireIssued(); // an hour later
    expect(await validate()).toMatchObject({ status: "succeeded" });
    expect(gt.tokenRequests.slice(before).map((f) => [f.grant_type, f.refresh_token])).toEqual([["refresh_token", TRENDS_OAUTH.refreshToken], ["refresh_token", TRENDS_OAUTH.refreshToken]]);

    // A revoked refresh token: the validation fails saying to send new credentials.
    const revoked = await stack.gw.http.put(`${BASE}/google_trends/connection`).set(a.auth).send({ credentials: { ...creds, refresh_token: "1//revoked" }, base_url: gt.baseUrl, token_url: gt.tokenUrl });
    expect(revoked.status).toBe(200);
    expect(await validate()).toMatchObject({ status: "failed", error: expect.stringMatching(/invalid_grant.*new credentials/) });
  });

  test("credentials need an access token, or a refresh token with its OAuth client (422 naming what is missing)", async () => {
    const a = await stack.gw.account();
    const put = (credentials: object) => stack.gw.http.put(`${BASE}/google_trends/connection`).set(a.auth).send({ credentials, base_url: gt.baseUrl });
    const none = await put({});
    expect(none.status).toBe(422);
    expect(none.body.errors.map((e: any) => e.path)).toEqual(["credentials.access_token"]);
    const half = await put({ refresh_token: "1//x" });
    expect(half.body.errors.map((e: any) => e.path).sort()).toEqual(["credentials.client_id", "credentials.client_secret"]);
  });


  test("validate queues a momentum check whose verdict is readable in the status", async () => {
    const a = await stack.gw.account();
    const day = 86_400_000;
    const end = Date.now() - 2 * day;
    gt.setSeries("solar kite", Array.from({ length: 35 }, (_, i) => ({
      time: new Date(end - (34 - i) * day).toISOString(), searchInterest: i >= 28 ? 60 : 20,
    })));
    gt.setPollsUntilDone(1);
    const put = await stack.gw.http.put(`${BASE}/google_trends/connection`).set(a.auth).send({ credentials: { access_token: TRENDS_TOKEN }, base_url: gt.baseUrl });
    expect(put.status).toBe(200);
    expect(put.body.next_poll_at).toBeNull();

    const res = await stack.gw.http.post(`${BASE}/google_trends/validate`).set(a.auth).send({ term: "solar kite" });
    expect(res.status).toBe(202);
    const done = await waitFor(async () => (await status(a.auth, "google_trends")).actions.find((x: any) => x.id === res.body.id && x.status !== "queued"), { timeoutMs: 15_000 });
    expect(done).toMatchObject({ status: "succeeded", result: { term: "solar kite", verdict: "confirmed" } });
  });
});
