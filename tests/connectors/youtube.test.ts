import { OutboundClient, OutboundGuard } from "@trendgate/delivery";
import { ProviderError, type ProviderContext } from "../../packages/connectors/social/src/types.ts";
import { YouTubeClient } from "../../packages/connectors/social/src/youtube/client.ts";
import { QuotaLedger } from "../../packages/connectors/social/src/youtube/quota.ts";
import { nextPacificMidnight } from "../../packages/connectors/social/src/youtube/pacific-day.ts";
import { startYouTubeServer, type FixtureVideo, type YouTubeServer } from "../peers/youtube-server.ts";

const KEY = "AIzaSy-test-key";
const outbound = new OutboundClient({ guard: new OutboundGuard(["127.0.0.1"]), connectTimeoutMs: 1000, timeoutMs: 3000, maxResponseBytes: 5 * 1024 * 1024, userAgent: "trendgate-test" });
const context = (baseUrl: string): ProviderContext => ({ baseUrl, request: (m, u, i) => outbound.request(m, u, i) });

let yt: YouTubeServer;
beforeAll(async () => { yt = await startYouTubeServer({ apiKey: KEY }); });
afterAll(async () => { await yt.close(); });
// Each test is a fresh project: its own day of quota at the stand-in.
beforeEach(() => { yt.requests.length = 0; yt.setVideos([]); yt.resetQuota(); });

/** A clock the test moves; the ledger and the client read it. */
const clockAt = (iso: string) => { const c = { t: new Date(iso), now: () => c.t }; return c; };
const client = (opts: { apiKey?: string; ledger?: QuotaLedger } = {}) =>
  new YouTubeClient(context(yt.baseUrl), { apiKey: opts.apiKey ?? KEY, ledger: opts.ledger });

const kite = (i: number, extra: Partial<FixtureVideo> = {}): FixtureVideo => ({
  id: `kite${String(i).padStart(3, "0")}`, title: `Solar kite test #${i}`, channelTitle: "Sky Lab",
  publishedAt: new Date(Date.UTC(2025, 5, 1, 0, i)).toISOString(), viewCount: 1000 + i, likeCount: 10 + i, commentCount: i, ...extra,
});

async function rejection(p: Promise<unknown>): Promise<ProviderError> {
  try { await p; } catch (e) { if (e instanceof ProviderError) return e; throw e; }
  throw new Error("expected a ProviderError");
}

describe("search", () => {
  test("pages through results newest first, sends the documented parameters and decodes escaped titles", async () => {
    yt.setVideos([
      ...Array.from({ length: 7 }, (_, i) => kite(i + 1)),
      kite(8, { title: "Solar kite & \"Friends\" won't quit" }),
      kite(9, { title: "Unrelated cooking show" }),
      kite(10, { publishedAt: "2025-05-01T00:00:00Z" }), // before publishedAfter
    ]);
    const yc = client();
    const publishedAfter = new Date("2025-05-31T12:00:00.250Z");
    const seen: string[] = [];
    let token: string | null = null;
    let pages = 0;
    do {
      const page = await yc.searchVideos({ q: "solar kite", publishedAfter, maxResults: 3, pageToken: token, regionCode: "DE" });
      seen.push(...page.items.map((v) => v.videoId));
      token = page.next;
      pages++;
      expect(page.quota).toMatchObject({ limit: 100, remaining: 100 - pages, cost: 1 });
    } while (token);
    expect(pages).toBe(3);
    expect(seen).toEqual(["kite008", "kite007", "kite006", "kite005", "kite004", "kite003", "kite002", "kite001"]);

    const first = yt.on("/youtube/v3/search")[0].query;
    expect(Object.fromEntries(first)).toMatchObject({
      part: "snippet", type: "video", order: "date", q: "solar kite", maxResults: "3",
      publishedAfter: "2025-05-31T12:00:00Z", regionCode: "DE", key: KEY,
    });
    expect(first.has("pageToken")).toBe(false);
    expect(yt.on("/youtube/v3/search")[1].query.get("pageToken")).toBeTruthy();

    const again = await yc.searchVideos({ q: "solar kite", publishedAfter, maxResults: 1 });
    expect(again.items[0]).toEqual({ videoId: "kite008", title: "Solar kite & \"Friends\" won't quit", channelTitle: "Sky Lab", publishedAt: new Date(kite(8).publishedAt) });
  });

  test("asks for 50 results a page by default (every page costs the same)", async () => {
    await client().searchVideos({ q: "x" });
    expect(yt.requests[0].query.get("maxResults")).toBe("50");
  });
});

describe("statistics", () => {
  test("fetches ids in calls of at most 50 and returns counts as numbers", async () => {
    yt.setVideos(Array.from({ length: 120 }, (_, i) => kite(i, i === 3 ? { likeCount: null, commentCount: null } : {})));
    const ids = [...Array.from({ length: 120 }, (_, i) => kite(i).id), "kite000", "deleted-video"]; // a duplicate, a gone one
    const { items, quota } = await client().videoStatistics(ids);

    expect(yt.on("/youtube/v3/videos").map((r) => r.query.get("id")!.split(",").length)).toEqual([50, 50, 21]);
    expect(yt.requests.every((r) => r.query.get("part") === "statistics,snippet" && r.query.get("key") === KEY)).toBe(true);
    expect(items).toHaveLength(120);
    expect(items[5]).toEqual({ videoId: "kite005", title: "Solar kite test #5", channelTitle: "Sky Lab", publishedAt: new Date(kite(5).publishedAt), viewCount: 1005, likeCount: 15, commentCount: 5 });
    expect(items[3]).toMatchObject({ viewCount: 1003, likeCount: null, commentCount: null }); // hidden by the owner
    expect(quota).toMatchObject({ limit: 10_000, remaining: 10_000 - 3, cost: 3 });
  });

  test("topicMomentum: one observation per video, counting views + likes + comments", async () => {
    yt.setVideos([kite(1), kite(2, { likeCount: null })]);
    const observedAt = new Date("2025-06-02T10:00:00Z");
    const page = await client().topicMomentum({ q: "solar kite", publishedAfter: new Date("2025-05-01T00:00:00Z"), observedAt });
    expect(page.items).toEqual([
      { externalId: "kite002", topic: "solar kite", count: 1002 + 0 + 2, observedAt, link: "https://www.youtube.com/watch?v=kite002", text: "Solar kite test #2" },
      { externalId: "kite001", topic: "solar kite", count: 1001 + 11 + 1, observedAt, link: "https://www.youtube.com/watch?v=kite001", text: "Solar kite test #1" },
    ]);
    expect(page.next).toBeNull();
    expect(page.quota.search).toMatchObject({ remaining: 99, cost: 1 });
    expect(page.quota.videos).toMatchObject({ remaining: 9_999, cost: 1 });
  });
});

describe("API key", () => {
  test("the key travels as key= and a wrong one is reported as unauthorized (classic keyInvalid body)", async () => {
    const e = await rejection(client({ apiKey: "wrong" }).searchVideos({ q: "x" }));
    expect(yt.requests[0].query.get("key")).toBe("wrong");
    expect(e).toMatchObject({ kind: "unauthorized", detail: { status: 400, providerCode: "keyInvalid" } });
  });

  test("the newer bad-key body (400 badRequest + API_KEY_INVALID) is unauthorized too, not bad_request", async () => {
    yt.failNext(1, "apiKeyInvalid");
    const e = await rejection(client().searchVideos({ q: "x" }));
    expect(e.kind).toBe("unauthorized");
    expect(e.message).toContain("API key not valid");
  });

  test("a missing key is a 403 forbidden: unauthorized", async () => {
    const e = await rejection(client({ apiKey: "" }).searchVideos({ q: "x" }));
    expect(e).toMatchObject({ kind: "unauthorized", detail: { status: 403, providerCode: "forbidden" } });
  });
});

describe("quota", () => {
  test("nextPacificMidnight follows Los Angeles time, DST included", () => {
    const cases: [string, string][] = [
      ["2025-01-15T03:00:00Z", "2025-01-15T08:00:00Z"], // 19:00 PST on the 14th: UTC is already on the 15th
      ["2025-07-01T12:00:00Z", "2025-07-02T07:00:00Z"], // summer: PDT, UTC-7
      ["2025-03-09T07:59:59Z", "2025-03-09T08:00:00Z"], // one second before a PST midnight
      ["2025-03-09T08:00:00Z", "2025-03-10T07:00:00Z"], // DST starts at 02:00 on the 9th: a 23-hour quota day
      ["2025-11-02T07:30:00Z", "2025-11-03T08:00:00Z"], // DST ends at 02:00 on 2 Nov: a 25-hour quota day
      ["2025-12-31T23:00:00Z", "2026-01-01T08:00:00Z"], // 15:00 PST on New Year's Eve
    ];
    for (const [now, reset] of cases) expect([now, nextPacificMidnight(new Date(now)).toISOString()]).toEqual([now, new Date(reset).toISOString()]);
  });

  test("quotaExceeded becomes quota_exhausted until the next midnight Pacific, and later calls stay local", async () => {
    const clock = clockAt("2025-03-09T09:30:00Z"); // 01:30 PST, on the day DST starts
    const yc = client({ ledger: new QuotaLedger({ now: clock.now }) });
    yt.failNext(1, "quotaExceeded");
    const e = await rejection(yc.videoStatistics(["a"]));
    expect(e).toMatchObject({ kind: "quota_exhausted", detail: { status: 403, providerCode: "quotaExceeded", resetAt: new Date("2025-03-10T07:00:00Z") } });

    const local = await rejection(yc.videoStatistics(["a"]));
    expect(local).toMatchObject({ kind: "quota_exhausted", detail: { providerCode: "localQuotaExceeded", resetAt: new Date("2025-03-10T07:00:00Z") } });
    expect(yt.requests).toHaveLength(1);
    expect(yc.ledger.state("search.list").remaining).toBe(100); // the search bucket is separate

    clock.t = new Date("2025-03-10T07:00:00Z"); // midnight PDT: a new quota day
    await expect(yc.videoStatistics(["a"])).resolves.toMatchObject({ items: [] });
    expect(yt.requests).toHaveLength(2);
  });

  test("the ledger refuses the 101st search of a Pacific day without calling YouTube", async () => {
    const clock = clockAt("2025-06-10T18:00:00Z");
    const ledger = new QuotaLedger({ now: clock.now });
    const yc = client({ ledger });
    for (let i = 0; i < 100; i++) await yc.searchVideos({ q: `q${i}` });
    expect(yt.on("/youtube/v3/search")).toHaveLength(100);

    const e = await rejection(yc.searchVideos({ q: "one too many" }));
    expect(e).toMatchObject({ kind: "quota_exhausted", detail: { providerCode: "localQuotaExceeded", resetAt: new Date("2025-06-11T07:00:00Z") } });
    expect(yt.on("/youtube/v3/search")).toHaveLength(100);
    expect(ledger.state("search.list")).toEqual({ limit: 100, remaining: 0, resetAt: new Date("2025-06-11T07:00:00Z"), cost: 1 });
    expect(ledger.state("videos.list").remaining).toBe(10_000);

    // Persisted and restored (another process, same day): still refused, still without a call.
    const saved = JSON.parse(JSON.stringify(ledger.snapshot()));
    const restored = new QuotaLedger({ now: clock.now });
    restored.restore(saved);
    await expect(client({ ledger: restored }).searchVideos({ q: "again" })).rejects.toMatchObject({ kind: "quota_exhausted" });
    expect(yt.on("/youtube/v3/search")).toHaveLength(100);

    // Yesterday's snapshot does not carry over into a new Pacific day.
    clock.t = new Date("2025-06-11T07:00:01Z");
    yt.resetQuota(); // YouTube's day turns over too
    const nextDay = new QuotaLedger({ now: clock.now });
    nextDay.restore(saved);
    await client({ ledger: nextDay }).searchVideos({ q: "fresh day" });
    expect(yt.on("/youtube/v3/search")).toHaveLength(101);
  });

  test("costs are configurable: on the older pricing a search takes 100 units from the shared bucket", async () => {
    const ledger = new QuotaLedger({ limits: { default: 250 }, costs: { "search.list": { bucket: "default", units: 100 } } });
    const yc = client({ ledger });
    expect((await yc.searchVideos({ q: "a" })).quota).toMatchObject({ limit: 250, remaining: 150, cost: 100 });
    await yc.searchVideos({ q: "b" });
    await expect(yc.searchVideos({ q: "c" })).rejects.toMatchObject({ kind: "quota_exhausted" });
    expect(ledger.state("videos.list").remaining).toBe(50); // videos.list shares that bucket
    expect(yt.requests).toHaveLength(2);
  });
});

describe("other errors", () => {
  test("rateLimitExceeded is rate_limited, with a default wait or the server's Retry-After", async () => {
    yt.failNext(1, "rateLimitExceeded");
    expect(await rejection(client().searchVideos({ q: "x" }))).toMatchObject({ kind: "rate_limited", detail: { status: 403, providerCode: "rateLimitExceeded", retryAfterMs: 60_000 } });
    yt.failNext(1, "rateLimitExceeded", { "retry-after": "7" });
    expect(await rejection(client().searchVideos({ q: "x" }))).toMatchObject({ kind: "rate_limited", detail: { retryAfterMs: 7_000 } });
  });

  test("5xx and network failures are unavailable; a malformed request is bad_request", async () => {
    yt.failNext(1, "backendError");
    expect(await rejection(client().videoStatistics(["a"]))).toMatchObject({ kind: "unavailable", detail: { status: 500, providerCode: "backendError" } });

    const gone = await startYouTubeServer({ apiKey: KEY });
    await gone.close();
    const offline = new YouTubeClient(context(gone.baseUrl), { apiKey: KEY });
    expect(await rejection(offline.searchVideos({ q: "x" }))).toMatchObject({ kind: "unavailable", detail: { status: null, providerCode: "ECONNREFUSED" } });

    const e = await rejection(client().searchVideos({ q: "x", pageToken: "not-a-token" }));
    expect(e).toMatchObject({ kind: "bad_request", detail: { status: 400, providerCode: "invalidPageToken" } });
  });
});
