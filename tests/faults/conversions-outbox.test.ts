import { QUEUES } from "@trendgate/contracts";
import { createLogger } from "@trendgate/logger";
import type { OutboxAttemptRecord } from "@trendgate/db";
import { AttemptSpool } from "@trendgate/delivery";
import { startWorkers } from "../../apps/worker/src/run-workers.ts";
import { waitFor } from "../helpers/config.ts";
import { appProcess, onCleanup, privateRedis, runCleanups, sleep } from "../helpers/faults-proc-kit.ts";
import { startStack, type Stack } from "../helpers/stack.ts";
import { startRedditAdsServer, type RedditAdsServer } from "../peers/reddit-ads-server.ts";

// Issue 10, "Done when": conversion events ride the shared outbox, batched per pixel by the conversion-events
// worker, so a worker killed with -9 mid-load and a Redis FLUSHALL lose none. Real pieces throughout: the push route,
// the outbox processor and sweeper, the batching handler, the Reddit stand-in. Reddit de-duplicates on
// conversion_id, so an event may reach it twice only when its batch was in flight at the kill (at least once);
// every event reaches it at least once and is recorded succeeded, each attempt recorded once.

const BASE = "/api/integrations/community-ads";
let reddit: RedditAdsServer;
beforeEach(async () => { reddit = await startRedditAdsServer(); });
afterEach(async () => { await runCleanups(); await reddit.close(); });

// The Reddit stand-in is on loopback: the gateway and the worker processes are configured to reach it.
const ENV = { OUTBOUND_ALLOWLIST: "127.0.0.1", OUTBOX_RETRY_SCHEDULE_SECONDS: "1,1,1", SWEEP_INTERVAL_MS: "300", SWEEP_GRACE_SECONDS: "1" };
const providerEnv = () => ({
  REDDIT_ADS_CLIENT_ID: reddit.app.clientId, REDDIT_ADS_CLIENT_SECRET: reddit.app.clientSecret, REDDIT_ADS_AUTHORIZE_URL: reddit.authorizeUrl,
  REDDIT_ADS_TOKEN_URL: reddit.tokenUrl, REDDIT_ADS_API_URL: reddit.url,
});

async function adsStack(redisUrl: string): Promise<Stack> {
  const s = await startStack({ ...ENV, ...providerEnv(), REDIS_URL: redisUrl }, 0);
  onCleanup(async () => {
    await s.gw.deps.db.outboxMessage.updateMany({ where: { queue: QUEUES.conversionEvents, status: "pending" }, data: { status: "cancelled" } });
    await s.close();
  });
  return s;
}

/** An account connected with a conversion token, a pixel selected, and `n` events pushed (not yet sent: no workers run). */
async function pushed(s: Stack, n: number, tag: string) {
  const a = await s.gw.account();
  expect((await s.gw.http.put(`${BASE}/token`).set(a.auth).send({ access_token: reddit.addConversionToken() })).status).toBe(200);
  const pixelId = `a2_${tag}${Date.now().toString(36)}`;
  expect((await s.gw.http.put(`${BASE}/selection`).set(a.auth).send({ account_id: "t2_abc123", pixel_id: pixelId, event_name: "purchase" })).status).toBe(200);
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await s.gw.http.post(`${BASE}/push`).set(a.auth).send({ data: { conversion_id: `${tag}-${i}`, value: i } });
    expect(r.status).toBe(202);
    ids.push(r.body.id);
  }
  return { a, pixelId, ids, conversionIds: Array.from({ length: n }, (_, i) => `${tag}-${i}`) };
}

const succeeded = (s: Stack, ids: string[]) => s.gw.deps.db.outboxMessage.count({ where: { id: { in: ids }, status: "succeeded" } });

/** Messages whose attempt rows are not exactly 1..attempts with the last one succeeded. */
async function attemptsRecordedOnce(s: Stack, ids: string[]) {
  const db = s.gw.deps.db;
  const msgs = await db.outboxMessage.findMany({ where: { id: { in: ids } }, select: { id: true, attempts: true } });
  const rows = await db.outboxAttempt.findMany({ where: { messageId: { in: ids } }, orderBy: { attempt: "asc" } });
  return msgs.filter((m) => {
    const a = rows.filter((r) => r.messageId === m.id);
    return !(m.attempts >= 1 && a.length === m.attempts && a.every((x, i) => x.attempt === i + 1) && a[a.length - 1].outcome === "succeeded");
  }).map((m) => m.id);
}

test("a worker process killed (-9) mid-load loses no conversion event; only batches in flight at the kill reach Reddit twice", async () => {
  const redis = await privateRedis();
  const s = await adsStack(redis.url);
  const batches = [];
  for (let i = 0; i < 5; i++) batches.push(await pushed(s, 60, `kill${i}`)); // 5 pixels, 60 events each
  const ids = batches.flatMap((b) => b.ids);
  const conversionIds = batches.flatMap((b) => b.conversionIds);
  const pixels = new Set(batches.map((b) => b.pixelId));
  reddit.delayMs = 150;
  const workerEnv = {
    ...ENV, ...providerEnv(), REDIS_URL: redis.url, QUEUE_PREFIX: s.gw.deps.config.QUEUE_PREFIX, WORKER_QUEUES: QUEUES.conversionEvents,
    WORKER_LOCK_DURATION_MS: "3000", WORKER_STALLED_INTERVAL_MS: "1000", OUTBOX_CONCURRENCY: "4",
  };
  const first = appProcess("worker", workerEnv);
  await waitFor(async () => reddit.received.length >= 60, { timeoutMs: 60_000, everyMs: 5 });
  const inFlight = reddit.inFlight();
  first.child.kill("SIGKILL");
  expect((await first.exited).signal).toBe("SIGKILL");
  await sleep(200);
  const atKill = reddit.received.length;
  expect(atKill).toBeLessThan(300); // it died mid-load

  appProcess("worker", workerEnv);
  await waitFor(async () => (await succeeded(s, ids)) === ids.length, { timeoutMs: 120_000, everyMs: 250 });
  await sleep(1000);
  const unique = new Map([...pixels].flatMap((p) => [...reddit.unique(p)]));
  const extra = reddit.received.filter((r) => pixels.has(r.pixelId)).length - unique.size;
  console.log(`conversions kill -9: 300 events on 5 pixels; at the kill ${atKill} received, ${inFlight} events in requests whose answer was in flight; afterwards ${extra} events received twice (Reddit de-duplicates them on conversion_id)`);
  expect(extra).toBeLessThanOrEqual(inFlight);
  expect(conversionIds.filter((c) => !unique.has(c))).toEqual([]); // none lost
  expect([...unique.keys()].filter((c) => !conversionIds.includes(c))).toEqual([]);
  expect(await attemptsRecordedOnce(s, ids)).toEqual([]);
}, 240_000);

test("after a FLUSHALL the sweeper re-queues every conversion event from Postgres and each is sent once", async () => {
  const redis = await privateRedis();
  const s = await adsStack(redis.url);
  const { pixelId, ids, conversionIds } = await pushed(s, 120, "flush");
  expect(await s.gw.deps.queues.get(QUEUES.conversionEvents).getJobCountByTypes("waiting", "delayed")).toBe(120);
  await redis.flushall();
  const w = startWorkers(s.gw.deps.config, createLogger({ level: "silent" }), [QUEUES.conversionEvents]);
  onCleanup(() => w.close());
  await waitFor(async () => (await succeeded(s, ids)) === ids.length, { timeoutMs: 60_000, everyMs: 200 });
  await sleep(800);
  const mine = reddit.received.filter((r) => r.pixelId === pixelId);
  expect(mine.map((r) => r.event.metadata.conversion_id).sort()).toEqual([...conversionIds].sort()); // each exactly once
  expect(reddit.requests.filter((r) => r.pixelId === pixelId).length).toBeLessThan(120); // batched
  expect(await attemptsRecordedOnce(s, ids)).toEqual([]);
}, 120_000);

test("a conversion event refused for good is replayed on request: one more attempt, recorded after the first, and Reddit gets it", async () => {
  const redis = await privateRedis();
  const s = await adsStack(redis.url);
  reddit.failNext(1, 400);
  const { a, pixelId, ids: [id], conversionIds: [conversionId] } = await pushed(s, 1, "replay");
  const w = startWorkers(s.gw.deps.config, createLogger({ level: "silent" }), [QUEUES.conversionEvents]);
  onCleanup(() => w.close());
  const event = (done: (e: any) => boolean) => waitFor(async () => {
    const r = await s.gw.http.get(`${BASE}/events/${id}`).set(a.auth);
    return done(r.body) ? r.body : null;
  }, { timeoutMs: 30_000, everyMs: 100 });
  const failed = await event((e) => e.status === "failed");
  expect(failed.attempts).toEqual([expect.objectContaining({ attempt: 1, outcome: "failed", response_status: 400 })]);
  expect(reddit.unique(pixelId).size).toBe(0);

  const replay = await s.gw.http.post(`${BASE}/events/${id}/replay`).set(a.auth);
  expect(replay.status).toBe(202);
  expect(replay.body).toEqual({ id, status: "queued", attempt: 2 });
  const done = await event((e) => e.status === "succeeded");
  expect(done.attempts.map((x: any) => [x.attempt, x.outcome])).toEqual([[1, "failed"], [2, "succeeded"]]);
  expect([...reddit.unique(pixelId).keys()]).toEqual([conversionId]);

  const again = await s.gw.http.post(`${BASE}/events/${id}/replay`).set(a.auth);
  expect(again.status).toBe(409);
  expect(again.body).toMatchObject({ code: "conflict" });
  const stranger = await s.gw.account();
  expect((await s.gw.http.post(`${BASE}/events/${id}/replay`).set(stranger.auth)).status).toBe(404);
}, 60_000);

test("a batch leaves out a member whose last attempt was sent but waits in the spool for its record: it is recorded, never sent again", async () => {
  const redis = await privateRedis();
  const s = await adsStack(redis.url);
  const { ids, pixelId } = await pushed(s, 10, "spooled");
  // Message 3 was sent by an earlier batch whose record could not be written (Postgres down): kept in the spool.
  const spool = new AttemptSpool<OutboxAttemptRecord>(s.gw.deps.queues.connection, s.gw.deps.config.QUEUE_PREFIX, QUEUES.conversionEvents,
    { id: (r) => r.messageId, attempt: (r) => r.attempt }, (r) => r);
  await spool.keep({ messageId: ids[3], attempt: 1, outcome: "succeeded", responseStatus: 200, errorClass: null, errorMessage: null, durationMs: 5, nextRetryAt: null });

  const w = startWorkers(s.gw.deps.config, createLogger({ level: "silent" }), [QUEUES.conversionEvents]);
  onCleanup(() => w.close());
  await waitFor(async () => (await succeeded(s, ids)) === ids.length, { timeoutMs: 60_000, everyMs: 250 });
  await sleep(1000);

  const sent = reddit.received.filter((r) => r.pixelId === pixelId).map((r) => r.event.metadata.conversion_id);
  expect(sent.filter((c) => c === "spooled-3")).toEqual([]); // not sent again
  expect(sent.filter((c) => c !== "spooled-3").sort()).toEqual(Array.from({ length: 10 }, (_, i) => `spooled-${i}`).filter((c) => c !== "spooled-3").sort());
  expect(await attemptsRecordedOnce(s, ids)).toEqual([]); // its kept record written, once
  expect(await spool.find(ids[3])).toBeNull();
}, 90_000);
