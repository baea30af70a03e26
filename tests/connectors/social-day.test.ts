import { jest } from "@jest/globals";
import type { Job } from "bullmq";
import { QUEUES } from "@trendgate/contracts";
import { createLogger } from "@trendgate/logger";
import { createWorkerDeps } from "../../apps/worker/src/run-workers.ts";
import { socialPoll } from "../../apps/worker/src/processors/social-poll.ts";
import type { WorkerDeps } from "../../apps/worker/src/processors/types.ts";
import { startGateway, type TestGateway } from "../helpers/gateway.ts";
import { startXServer, type XPostFixture, type XServer } from "../peers/x-server.ts";
import { startRedditServer, type RedditPostFixture, type RedditServer } from "../peers/reddit-server.ts";
import { startYouTubeServer, YOUTUBE_DAILY_QUOTA, type FixtureVideo, type YouTubeServer } from "../peers/youtube-server.ts";

// A day of polling, time compressed: one term per polled provider at default settings (SOCIAL_POLL_INTERVAL_SECONDS,
// SOCIAL_POLL_TICK_SECONDS, the providers' default options), run through production's own path: the scheduler's
// tick claims what is due, each queued poll job runs in the social-poll processor against the stand-ins, which
// enforce the vendors' documented limits (X: 450 searches per 15-minute window; Reddit: 600 requests per 10
// minutes; YouTube: 100 searches and 10,000 units per Pacific day). Only the clock is simulated: Date moves from
// tick to tick (jest's fake Date; timers, sockets, Redis and Postgres stay real), posts appear in the stand-ins at
// their own times, bursts included. The day crosses midnight Pacific, where YouTube's quota resets.

const DAY_MS = 24 * 3600_000;
const T0 = Date.parse("2026-11-26T12:00:00Z"); // 04:00 Pacific: the day crosses YouTube's midnight reset at 08:00Z
const END = T0 + DAY_MS;
/** Polling goes on this long after the last post, so posts of the day's last minutes are read too. */
const SETTLE_MS = 30 * 60_000;
const BEARER = "day-bearer";
const YT_KEY = "AIzaSy-day-key";
const UA = "server:trendgate-day:1.0 (by /u/trendgate_bot)";
const BASE = "/api/integrations/social";

/** A fixed-seed PRNG (mulberry32), so the day is the same on every run. */
function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Arrival times (ms) over the day: a Poisson stream at `perHour` (quieter at night), plus bursts of n in a few minutes. */
function arrivals(random: () => number, perHour: number, bursts: { atHour: number; n: number; minutes: number }[]) {
  const out: number[] = [];
  for (let t = T0; ; ) {
    const hourOfDay = new Date(t).getUTCHours();
    const rate = (hourOfDay >= 2 && hourOfDay < 9 ? perHour / 4 : perHour) / 3600_000;
    t += -Math.log(1 - random()) / rate;
    if (t >= END) break;
    out.push(t);
  }
  for (const b of bursts) for (let i = 0; i < b.n; i++) out.push(T0 + b.atHour * 3600_000 + random() * b.minutes * 60_000);
  return out.sort((a, b) => a - b);
}

/** X ids are snowflakes: milliseconds since X's epoch shifted left 22 bits, so ids grow with time as on X. */
const snowflake = (ms: number, seq: number) => String((BigInt(Math.floor(ms) - 1288834974657) << 22n) + BigInt(seq % 4096));

let gw: TestGateway;
let deps: WorkerDeps;
let xp: XServer;
let rd: RedditServer;
let yt: YouTubeServer;

beforeAll(async () => {
  [xp, rd, yt] = await Promise.all([startXServer(), startRedditServer(), startYouTubeServer({ apiKey: YT_KEY })]);
  // Production's settings: only the outbound allow-list lets the workers reach the stand-ins on 127.0.0.1.
  gw = await startGateway({ OUTBOUND_ALLOWLIST: "127.0.0.1" });
  deps = createWorkerDeps(gw.deps.config, createLogger({ level: "silent" }));
});
afterAll(async () => {
  jest.useRealTimers();
  if (deps) {
    await deps.queues.close();
    deps.queues.connection.disconnect();
    await deps.db.$disconnect();
  }
  await gw?.close();
  await Promise.all([xp?.close(), rd?.close(), yt?.close()]);
});

test("24 simulated hours, one term per polled provider at default settings: within every documented quota, every post read", async () => {
  const random = rng(20261126);
  // X: ~150 posts an hour by day, 1,200 more in six minutes (more than a poll's 3 pages of 100 reads).
  const xPosts: XPostFixture[] = arrivals(random, 150, [{ atHour: 5, n: 1200, minutes: 6 }]).map((ms, i) => ({
    id: snowflake(ms, i), text: `solar post ${i}`, author_id: "11", created_at: new Date(Math.floor(ms)).toISOString(),
    public_metrics: { retweet_count: 0, reply_count: 0, like_count: 1, quote_count: 0 },
  }));
  // Reddit: ~25 posts an hour in r/energy, 450 more in ten minutes (more than a poll's 2 pages of 100 per search).
  const redditAt = arrivals(random, 25, [{ atHour: 14, n: 450, minutes: 10 }]);
  // Reddit's search is a separate index: a post shows up in it some time after it was created (up to 90 s here), so
  // a later poll can find a post older than the newest one it already saw.
  const redditPosts: (RedditPostFixture & { arrives: number })[] = redditAt.map((ms, i) => ({
    id: (1_000_000 + i).toString(36), subreddit: "energy", title: `Solar panel thread ${i}`, score: 1, num_comments: 0,
    created_utc: Math.floor(ms / 1000), arrives: ms + random() * 90_000,
  }));
  // YouTube: 40 videos published over the day, each gaining views at its own pace.
  const videos = Array.from({ length: 40 }, (_, i) => ({
    id: `vid${String(i).padStart(8, "0")}`, published: T0 + random() * (DAY_MS - 2 * 3600_000), viewsPerHour: 100 + Math.floor(random() * 5000), i,
  }));
  const videosAt = (now: number): FixtureVideo[] => videos.filter((v) => v.published <= now).map((v) => ({
    id: v.id, title: `Solar kite flight ${v.i}`, channelTitle: "Kites", publishedAt: new Date(v.published).toISOString(),
    viewCount: Math.floor(((now - v.published) / 3600_000) * v.viewsPerHour), likeCount: 0, commentCount: 0,
  }));

  // Only Date is simulated: real timers keep sockets, Redis and Postgres working.
  jest.useFakeTimers({
    now: T0,
    doNotFake: ["hrtime", "nextTick", "performance", "queueMicrotask", "setImmediate", "clearImmediate", "setInterval", "clearInterval", "setTimeout", "clearTimeout"],
  });
  const show = (now: number) => {
    xp.setData({ users: [{ id: "11", name: "Ada", username: "ada" }], posts: xPosts.filter((p) => Date.parse(p.created_at) <= now) });
    rd.setPosts(redditPosts.filter((p) => p.arrives <= now));
    yt.setVideos(videosAt(now));
  };
  show(T0);
  xp.addAppToken(BEARER);
  rd.registerApp("day-app", "day-secret");
  rd.addSubreddit("energy");

  const a = await gw.account();
  const put = async (provider: string, body: object) => {
    const res = await gw.http.put(`${BASE}/${provider}/connection`).set(a.auth).send(body);
    expect(res.status).toBe(200);
    return res.body.id as string;
  };
  const ids = {
    x: await put("x", { credentials: { bearer_token: BEARER }, terms: ["solar"], base_url: xp.url }),
    reddit: await put("reddit", {
      credentials: { client_id: "day-app", client_secret: "day-secret" }, terms: ["solar"], options: { subreddits: ["energy"], user_agent: UA },
      base_url: rd.apiUrl, auth_base_url: rd.authUrl,
    }),
    youtube: await put("youtube", { credentials: { api_key: YT_KEY }, terms: ["solar kite"], base_url: yt.baseUrl }),
  };

  // Connections of other test files in this database are not this day's: not due.
  await gw.deps.db.socialConnection.updateMany({ where: { accountId: { not: a.accountId } }, data: { nextPollAt: null } });
  const processor = socialPoll.create(deps);
  const queue = deps.queues.get(QUEUES.socialPoll);
  const tickMs = gw.deps.config.SOCIAL_POLL_TICK_SECONDS * 1000;
  const polls: Record<string, number[]> = { x: [], reddit: [], youtube: [] };
  const statuses = new Set<string>();
  let t = T0;
  while (t < END + SETTLE_MS) {
    jest.setSystemTime(t);
    show(t);
    await processor.process({ id: `tick-${t}`, data: {} } as Job); // the scheduler's tick
    for (const job of await queue.getJobs(["waiting"])) {
      const provider = Object.entries(ids).find(([, id]) => id === job.data.connection_id)?.[0];
      if (!provider) { await job.remove(); continue; }
      const r = (await processor.process(job, "sim")) as { status?: string; error?: string | null };
      polls[provider].push(t);
      statuses.add(`${provider}:${r.status}${r.error ? `: ${r.error}` : ""}`);
      await job.remove();
    }
    // The next tick that finds something due (ticks in between would find nothing).
    const rows = await gw.deps.db.socialConnection.findMany({ where: { accountId: a.accountId } });
    const due = Math.min(...rows.map((r) => r.nextPollAt?.getTime() ?? Infinity));
    t = Math.max(t + tickMs, T0 + Math.ceil((due - T0) / tickMs) * tickMs);
  }
  jest.useRealTimers();

  const stored = async (source: string) => (await gw.deps.db.signal.findMany({ where: { accountId: a.accountId, source }, select: { externalId: true } }))
    .map((s) => s.externalId);
  // Each post's text is kept with its signal (a trend's drivers are read from it).
  const untitled = await gw.deps.db.signal.count({ where: { accountId: a.accountId, source: { in: ["x", "reddit", "youtube"] }, text: null } });
  expect(untitled).toBe(0);
  expect(await gw.deps.db.signal.count({ where: { accountId: a.accountId, source: { in: ["x", "reddit", "youtube"] } } })).toBeGreaterThan(0);
  /** The most requests in any `windowMs` (sliding) among these arrival times. */
  const peak = (times: number[], windowMs: number) => {
    let most = 0;
    for (let i = 0, j = 0; i < times.length; i++) {
      while (times[i] - times[j] >= windowMs) j++;
      most = Math.max(most, i - j + 1);
    }
    return most;
  };

  // X: no 429, at most 450 searches in any 15 minutes, every post read (the burst over the following polls).
  const xSearches = xp.requests.filter((r) => r.path === "/2/tweets/search/recent");
  expect(xSearches.filter((r) => r.status !== 200).map((r) => `${new Date(r.at).toISOString()} ${r.status}`)).toEqual([]);
  expect(peak(xSearches.map((r) => r.at), 15 * 60_000)).toBeLessThanOrEqual(450);
  const xRead = new Set(await stored("x"));
  expect(xPosts.filter((p) => !xRead.has(p.id)).map((p) => p.created_at)).toEqual([]);

  // Reddit: no 429, at most 600 requests in any 10 minutes, every post read.
  const redditApi = rd.requests.filter((r) => r.host === "api");
  expect(redditApi.filter((r) => r.status !== 200).map((r) => `${new Date(r.at).toISOString()} ${r.status}`)).toEqual([]);
  expect(peak(redditApi.map((r) => r.at), 10 * 60_000)).toBeLessThanOrEqual(600);
  const redditRead = new Set(await stored("reddit"));
  expect(redditPosts.filter((p) => !redditRead.has(`t3_${p.id}`)).map((p) => new Date(p.arrives).toISOString())).toEqual([]);

  // YouTube: never refused, within both daily buckets on each Pacific day, polled all day long (not spent by
  // morning), and every video seen that was published before the last search.
  expect(yt.requests.filter((r) => r.status !== 200).map((r) => `${new Date(r.at).toISOString()} ${r.status}`)).toEqual([]);
  const pacificDay = (ms: number) => new Intl.DateTimeFormat("en-CA", { timeZone: "America/Los_Angeles" }).format(new Date(ms));
  const perDay = new Map<string, { search: number; other: number }>();
  for (const r of yt.requests) {
    const d = perDay.get(pacificDay(r.at)) ?? { search: 0, other: 0 };
    if (r.path === "/youtube/v3/search") d.search++; else d.other++;
    perDay.set(pacificDay(r.at), d);
  }
  for (const d of perDay.values()) {
    expect(d.search).toBeLessThanOrEqual(YOUTUBE_DAILY_QUOTA.search);
    expect(d.other).toBeLessThanOrEqual(YOUTUBE_DAILY_QUOTA.default);
  }
  const searches = yt.on("/youtube/v3/search").map((r) => r.at);
  const gaps = searches.slice(1).map((s, i) => s - searches[i]);
  expect(Math.max(...gaps)).toBeLessThan(2 * 3600_000); // no dark stretch
  const lastSearch = Math.max(...searches);
  const ytRead = new Set((await stored("youtube")).map((id) => id.split("@")[0]));
  expect(videos.filter((v) => v.published <= lastSearch && !ytRead.has(v.id)).map((v) => v.id)).toEqual([]);

  // Nothing but healthy polls all day.
  expect([...statuses].filter((s) => !s.endsWith(":active"))).toEqual([]);
  if (process.env.SIM_VERBOSE) {
    console.log(JSON.stringify({
      polls: Object.fromEntries(Object.entries(polls).map(([k, v]) => [k, v.length])),
      x: { posts: xPosts.length, read: xRead.size, searches: xSearches.length, peak15min: peak(xSearches.map((r) => r.at), 15 * 60_000) },
      reddit: { posts: redditPosts.length, read: redditRead.size, requests: redditApi.length, tokens: rd.requests.length - redditApi.length, peak10min: peak(redditApi.map((r) => r.at), 10 * 60_000) },
      youtube: { videos: videos.length, seen: ytRead.size, perPacificDay: Object.fromEntries(perDay), maxGapMinutes: Math.round(Math.max(...gaps) / 60_000) },
    }, null, 1));
  }
}, 300_000);
