import { QUEUES } from "@trendgate/contracts";
import { createLogger } from "@trendgate/logger";
import { startWorkers } from "../../apps/worker/src/run-workers.ts";
import { waitFor } from "../helpers/config.ts";
import { startStack, type Stack } from "../helpers/stack.ts";
import { startRedditAdsServer, type RedditAdsServer } from "../peers/reddit-ads-server.ts";

// Reddit's Conversions API v3 as it fails, through the product's real path (push route -> conversions outbox ->
// batching worker -> the Reddit stand-in): 429 and 5xx are retried with backoff, a restart window (connections
// refused) delays events, and an accepted batch whose answer outlasts our timeout is sent again. Reddit keeps one
// event per (pixel, metadata.conversion_id), so that second copy is harmless: the advertiser sees each conversion once.

const BASE = "/api/integrations/community-ads";
let reddit: RedditAdsServer;
let stack: Stack;
let workers: ReturnType<typeof startWorkers> | null = null;
beforeEach(async () => { reddit = await startRedditAdsServer(); });
afterEach(async () => {
  await workers?.close();
  workers = null;
  await stack?.close();
  await reddit.close();
});

async function start() {
  stack = await startStack({
    OUTBOX_RETRY_SCHEDULE_SECONDS: "1,1,1,1", SWEEP_INTERVAL_MS: "300", SWEEP_GRACE_SECONDS: "1",
    REDDIT_ADS_CLIENT_ID: reddit.app.clientId, REDDIT_ADS_CLIENT_SECRET: reddit.app.clientSecret, REDDIT_ADS_AUTHORIZE_URL: reddit.authorizeUrl,
    REDDIT_ADS_TOKEN_URL: reddit.tokenUrl, REDDIT_ADS_API_URL: reddit.url,
  }, 0);
  const a = await stack.gw.account();
  expect((await stack.gw.http.put(`${BASE}/token`).set(a.auth).send({ access_token: reddit.addConversionToken() })).status).toBe(200);
  const pixelId = `a2_f${Date.now().toString(36)}`;
  expect((await stack.gw.http.put(`${BASE}/selection`).set(a.auth).send({ account_id: "t2_abc123", pixel_id: pixelId, event_name: "purchase" })).status).toBe(200);
  return { a, pixelId };
}

async function push(a: { auth: Record<string, string> }, conversionId: string): Promise<string> {
  const r = await stack.gw.http.post(`${BASE}/push`).set(a.auth).send({ data: { conversion_id: conversionId, value: 1 } });
  expect(r.status).toBe(202);
  return r.body.id;
}

/** The conversion-events worker, in this process. */
function work() {
  workers = startWorkers(stack.gw.deps.config, createLogger({ level: "silent" }), [QUEUES.conversionEvents]);
}

/** The event as the API shows it, once it is no longer waiting. */
const settled = (a: { auth: Record<string, string> }, id: string, timeoutMs = 30_000) => waitFor(async () => {
  const r = await stack.gw.http.get(`${BASE}/events/${id}`).set(a.auth);
  return r.body.status && r.body.status !== "pending" && r.body.status !== "queued" && r.body.status !== "retrying" ? r.body : null;
}, { timeoutMs, everyMs: 100 });

test("429 and 5xx answers delay a conversion event; it reaches Reddit once and is recorded succeeded", async () => {
  const { a, pixelId } = await start();
  reddit.failNext(1, 429);
  const id = await push(a, "outage-1");
  work();
  // the 429 is recorded (this account's: earlier files in this jest worker's database left attempts of their own)
  await waitFor(async () => ((await stack.gw.deps.db.outboxAttempt.count({ where: { accountId: a.accountId } })) >= 1 ? true : null), { timeoutMs: 10_000, everyMs: 50 });
  reddit.failNext(2, 503);
  const done = await settled(a, id);

  expect(done.status).toBe("succeeded");
  expect(done.attempts.map((x: any) => [x.outcome, x.response_status])).toEqual([["retrying", 429], ["retrying", 503], ["retrying", 503], ["succeeded", 200]]);
  expect(reddit.received.map((r) => r.event.metadata.conversion_id)).toEqual(["outage-1"]);
  expect([...reddit.unique(pixelId).keys()]).toEqual(["outage-1"]);
}, 60_000);

test("a restart window (connections refused) delays a conversion event; it reaches Reddit once", async () => {
  const { a, pixelId } = await start();
  const down = reddit.restart(2500);
  const id = await push(a, "restart-1");
  work();
  await down;
  const done = await settled(a, id);

  expect(done.status).toBe("succeeded");
  expect(done.attempts.at(-1)).toMatchObject({ outcome: "succeeded", response_status: 200 });
  expect(done.attempts.slice(0, -1).every((x: any) => x.outcome === "retrying" && x.response_status === null)).toBe(true);
  expect(reddit.received.map((r) => r.event.metadata.conversion_id)).toEqual(["restart-1"]);
  expect([...reddit.unique(pixelId).keys()]).toEqual(["restart-1"]);
}, 60_000);

test("a batch Reddit accepted but answered after our timeout is sent again, and Reddit's de-duplication on conversion_id keeps one conversion", async () => {
  const { a, pixelId } = await start();
  reddit.delayMs = 17_000; // past the connector's 15 s timeout
  const id = await push(a, "slow-1");
  work();
  await waitFor(async () => reddit.received.length >= 1 ? true : null, { timeoutMs: 10_000, everyMs: 50 });
  reddit.delayMs = 0;
  const done = await settled(a, id, 45_000);

  expect(done.status).toBe("succeeded");
  expect(done.attempts.map((x: any) => [x.outcome, x.response_status])).toEqual([["retrying", null], ["succeeded", 200]]);
  expect(reddit.received.map((r) => r.event.metadata.conversion_id)).toEqual(["slow-1", "slow-1"]); // sent twice
  expect([...reddit.unique(pixelId).keys()]).toEqual(["slow-1"]); // counted once
}, 90_000);
