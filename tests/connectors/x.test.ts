import http from "node:http";
import type { AddressInfo } from "node:net";
import { OutboundClient, OutboundGuard } from "@trendgate/delivery";
import { ProviderError, type ProviderContext } from "../../packages/connectors/social/src/types.ts";
import { XClient } from "../../packages/connectors/social/src/x/client.ts";
import { snowflake, startXServer, type XPostFixture, type XServer } from "../peers/x-server.ts";
import { providerError } from "../helpers/provider.ts";

const outbound = new OutboundClient({
  guard: new OutboundGuard(["127.0.0.1"]), connectTimeoutMs: 1000, timeoutMs: 3000, maxResponseBytes: 5 * 1024 * 1024, userAgent: "trendgate-test",
});
const contextFor = (baseUrl: string): ProviderContext => ({ baseUrl, request: (m, u, i) => outbound.request(m, u, i) });

const BEARER = "app-bearer-token";
const USER_TOKEN = "user-context-token";
const users = [{ id: "11", name: "Ada", username: "ada" }, { id: "12", name: "Bob", username: "bob_builds" }];

/** Posts n minutes old, newest with the highest id (X ids carry their time). */
function post(n: number, text: string, metrics: Partial<XPostFixture["public_metrics"]> = {}, authorId = "11"): XPostFixture {
  const at = Date.now() - n * 60_000;
  return {
    id: snowflake(at),
    text,
    author_id: authorId,
    created_at: new Date(at).toISOString(),
    public_metrics: { retweet_count: 0, reply_count: 0, like_count: 0, quote_count: 0, ...metrics },
  };
}

/** Runs fn and returns the ProviderError it throws. */

let peer: XServer;
let x: XClient;
beforeAll(async () => {
  peer = await startXServer();
  x = new XClient(contextFor(peer.url));
});
afterAll(async () => { await peer.close(); });
beforeEach(() => {
  peer.reset();
  peer.addAppToken(BEARER);
  peer.addUserToken(USER_TOKEN, "11");
  peer.setData({ users });
});

describe("recent search", () => {
  test("returns one observation per matching post, with engagement count, author link and time", async () => {
    const a = post(5, "Solar panels are everywhere now", { like_count: 10, retweet_count: 2, reply_count: 3, quote_count: 1 }, "12");
    const b = post(30, "my solar roof went live");
    peer.setData({ posts: [b, a, post(10, "wind turbines only")] });

    const page = await x.searchRecent({ query: "solar" }, BEARER);

    expect(page.items).toEqual([
      { externalId: a.id, topic: "solar", count: 17, observedAt: new Date(a.created_at), link: `https://x.com/bob_builds/status/${a.id}`, text: a.text },
      { externalId: b.id, topic: "solar", count: 1, observedAt: new Date(b.created_at), link: `https://x.com/ada/status/${b.id}`, text: b.text },
    ]);
    expect(page.next).toBeNull();
  });

  test("a query's operators are sent to X while the observations count towards the given topic", async () => {
    peer.setData({ posts: [post(1, "solar farm news"), post(2, "solar sucks")] });
    const page = await x.searchRecent({ query: "solar -sucks lang:en", topic: "solar" }, BEARER);
    expect(page.items.map((o) => [o.topic, o.text])).toEqual([["solar", "solar farm news"]]);
    expect(peer.requests[0].query.get("query")).toBe("solar -sucks lang:en");
  });

  test("no match gives an empty page (X omits `data`)", async () => {
    const page = await x.searchRecent({ query: "nothing-matches" }, BEARER);
    expect(page).toMatchObject({ items: [], next: null });
  });

  test("pages through next_token: three pages, no post twice, newest first", async () => {
    peer.setData({ posts: Array.from({ length: 25 }, (_, i) => post(i + 1, `launch day #${i + 1}`)) });

    const p1 = await x.searchRecent({ query: "launch", maxResults: 10 }, BEARER);
    const p2 = await x.searchRecent({ query: "launch", maxResults: 10, nextToken: p1.next! }, BEARER);
    const p3 = await x.searchRecent({ query: "launch", maxResults: 10, nextToken: p2.next! }, BEARER);

    expect([p1.items.length, p2.items.length, p3.items.length]).toEqual([10, 10, 5]);
    expect(p1.next).toEqual(expect.any(String));
    expect(p3.next).toBeNull();
    const texts = [...p1.items, ...p2.items, ...p3.items].map((o) => o.text);
    expect(texts).toEqual(Array.from({ length: 25 }, (_, i) => `launch day #${i + 1}`));
  });

  test("searchAll follows next_token up to maxPages and reports the total cost", async () => {
    peer.setData({ posts: Array.from({ length: 25 }, (_, i) => post(i + 1, `launch ${i}`)) });

    const all = await x.searchAll({ query: "launch", maxResults: 10, maxPages: 5 }, BEARER);
    expect(all.items).toHaveLength(25);
    expect(all.next).toBeNull();
    expect(all.quota.cost).toBe(3);
    expect(peer.requests.map((r) => r.query.get("query"))).toEqual(["launch", "launch", "launch"]);

    const two = await x.searchAll({ query: "launch", maxResults: 10, maxPages: 2 }, BEARER);
    expect(two.items).toHaveLength(20);
    expect(two.next).toEqual(expect.any(String));
  });

  test("searchAll keeps the pages it already paid for when a later page is rate limited", async () => {
    peer.setData({ posts: Array.from({ length: 25 }, (_, i) => post(i + 1, `launch ${i}`)) });
    peer.setRateLimit({ remaining: 1 }); // the window runs out after the first page

    const result = await x.searchAll({ query: "launch", maxResults: 10, maxPages: 3 }, BEARER);

    expect(result.items.map((o) => o.text)).toEqual(Array.from({ length: 10 }, (_, i) => `launch ${i}`));
    expect(result.interrupted?.kind).toBe("rate_limited");
    // The token to resume from is the one that failed; X's next_token can be reused.
    peer.setRateLimit({ remaining: 450 });
    const resumed = await x.searchRecent({ query: "launch", maxResults: 10, nextToken: result.next! }, BEARER);
    expect(resumed.items[0].text).toBe("launch 10");
  });

  test("since_id returns only posts newer than the last one seen (polling)", async () => {
    const older = post(20, "ai news old");
    const newer = post(2, "ai news new");
    peer.setData({ posts: [older, newer] });
    const page = await x.searchRecent({ query: "ai", sinceId: older.id }, BEARER);
    expect(page.items.map((o) => o.externalId)).toEqual([newer.id]);
  });

  test("start_time is sent in X's format and filters older posts", async () => {
    peer.setData({ posts: [post(120, "ai old"), post(10, "ai recent")] });
    const page = await x.searchRecent({ query: "ai", startTime: new Date(Date.now() - 60 * 60_000) }, BEARER);
    expect(page.items.map((o) => o.text)).toEqual(["ai recent"]);
    expect(peer.requests[0].query.get("start_time")).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  test("quota comes from x-rate-limit-* headers", async () => {
    const reset = Math.floor(Date.now() / 1000) + 600;
    peer.setRateLimit({ limit: 450, remaining: 300, resetEpochSeconds: reset });
    const page = await x.searchRecent({ query: "anything" }, BEARER);
    expect(page.quota).toEqual({ limit: 450, remaining: 299, resetAt: new Date(reset * 1000), cost: 1 });
  });
});

describe("errors", () => {
  test("429 -> rate_limited, waiting until x-rate-limit-reset", async () => {
    const reset = Math.floor(Date.now() / 1000) + 90;
    peer.setRateLimit({ resetEpochSeconds: reset });
    peer.failNext(1, 429);

    const e = await providerError(() => x.searchRecent({ query: "solar" }, BEARER));
    expect(e).toMatchObject({ provider: "x", kind: "rate_limited", detail: { status: 429, resetAt: new Date(reset * 1000) } });
    const expected = reset * 1000 - Date.now();
    expect(e.detail.retryAfterMs).toBeGreaterThan(expected - 2000);
    expect(e.detail.retryAfterMs).toBeLessThanOrEqual(expected + 1000);

    // Only that request was limited.
    await expect(x.searchRecent({ query: "solar" }, BEARER)).resolves.toMatchObject({ items: [] });
  });

  test("a spent window gives 429 on its own, as X does", async () => {
    peer.setRateLimit({ limit: 2, remaining: 1 });
    await x.searchRecent({ query: "a" }, BEARER);
    const e = await providerError(() => x.searchRecent({ query: "a" }, BEARER));
    expect(e.kind).toBe("rate_limited");
    expect(e.detail.retryAfterMs).toBeGreaterThan(800_000); // the rest of the 15-minute window
  });

  test("a wrong bearer token -> unauthorized, telling to re-authorize", async () => {
    const e = await providerError(() => x.searchRecent({ query: "solar" }, "not-a-token"));
    expect(e).toMatchObject({ kind: "unauthorized", detail: { status: 401 } });
    expect(e.message).toMatch(/^x: recent search: X rejected the token \(401 Unauthorized\); re-authorize the X connection$/);
  });

  test("401 from X on a valid-looking token (revoked) -> unauthorized", async () => {
    peer.failNext(1, 401);
    await expect(x.searchRecent({ query: "solar" }, BEARER)).rejects.toMatchObject({ kind: "unauthorized" });
  });

  test("the bearer token is what X receives, and the request asks for the fields we read", async () => {
    await x.searchRecent({ query: "solar" }, BEARER);
    const r = peer.requests[0];
    expect(r.method).toBe("GET");
    expect(r.path).toBe("/2/tweets/search/recent");
    expect(r.headers.authorization).toBe(`Bearer ${BEARER}`);
    expect(r.query.get("tweet.fields")).toBe("created_at,public_metrics,author_id");
    expect(r.query.get("expansions")).toBe("author_id");
  });

  test("max_results outside 10..100 -> bad_request with X's explanation", async () => {
    const e = await providerError(() => x.searchRecent({ query: "solar", maxResults: 5 }, BEARER));
    expect(e).toMatchObject({ kind: "bad_request", detail: { status: 400 } });
    expect(e.message).toContain("is not between 10 and 100");
  });

  test("5xx -> unavailable; nothing listening -> unavailable", async () => {
    peer.failNext(1, 503);
    await expect(x.searchRecent({ query: "solar" }, BEARER)).rejects.toMatchObject({ kind: "unavailable", detail: { status: 503 } });

    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const e = await providerError(() => new XClient(contextFor(`http://127.0.0.1:${port}`)).searchRecent({ query: "solar" }, BEARER));
    expect(e).toMatchObject({ kind: "unavailable", detail: { status: null, providerCode: "ECONNREFUSED" } });
  });
});

describe("reply", () => {
  test("posts a reply with the user token and returns the new post id", async () => {
    const target = post(3, "is solar worth it?");
    peer.setData({ posts: [target] });

    const { id, quota } = await x.reply({ inReplyToId: target.id, text: "Yes, here is why" }, USER_TOKEN);

    expect(peer.created).toEqual([expect.objectContaining({ id, text: "Yes, here is why", author_id: "11", in_reply_to_tweet_id: target.id })]);
    const r = peer.requests[0];
    expect([r.method, r.path, r.headers.authorization]).toEqual(["POST", "/2/tweets", `Bearer ${USER_TOKEN}`]);
    expect(JSON.parse(r.body)).toEqual({ text: "Yes, here is why", reply: { in_reply_to_tweet_id: target.id } });
    expect(quota.remaining).toEqual(expect.any(Number));
  });

  test("an app-only bearer cannot post -> unauthorized naming the token type", async () => {
    const target = post(3, "hello");
    peer.setData({ posts: [target] });
    const e = await providerError(() => x.reply({ inReplyToId: target.id, text: "hi" }, BEARER));
    expect(e).toMatchObject({ kind: "unauthorized", detail: { status: 403, providerCode: "https://api.twitter.com/2/problems/unsupported-authentication" } });
    expect(e.message).toContain("Application-Only is forbidden");
  });

  test("a duplicate reply is a bad request, not a credentials problem", async () => {
    const target = post(3, "hello");
    peer.setData({ posts: [target] });
    await x.reply({ inReplyToId: target.id, text: "same words" }, USER_TOKEN);
    const e = await providerError(() => x.reply({ inReplyToId: target.id, text: "same words" }, USER_TOKEN));
    expect(e).toMatchObject({ kind: "bad_request", detail: { status: 403 } });
    expect(e.message).toContain("duplicate content");
  });

  test("replying to a post that is gone is a bad request", async () => {
    const e = await providerError(() => x.reply({ inReplyToId: "1", text: "late reply" }, USER_TOKEN));
    expect(e.kind).toBe("bad_request");
  });
});
