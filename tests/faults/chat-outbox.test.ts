import { QUEUES } from "@trendgate/contracts";
import { recordOutboxAttempt } from "@trendgate/db";
import { createLogger } from "@trendgate/logger";
import { outboxJobId } from "@trendgate/queues";
import { startWorkers } from "../../apps/worker/src/run-workers.ts";
import { waitFor } from "../helpers/config.ts";
import { appProcess, onCleanup, postgresBehindProxy, privateRedis, runCleanups, sleep } from "../helpers/faults-proc-kit.ts";
import type { Stack } from "../helpers/stack.ts";
import { startChatStack } from "../operator/helpers.ts";
import { startSlackServer, type SlackServer } from "../peers/slack-server.ts";
import { cardsPerItem, chatAccounts, chatQueue, dispatch, newItems, slowSlack } from "./chat-outbox-kit.ts";

// Issue 9, "Done when": operator cards for the team chat ride the shared outbox, so they survive what webhook
// deliveries survive (tests/faults/delivery-recovery.test.ts, tests/webhooks/robustness.test.ts): a worker killed
// with -9 mid-load, and a Redis FLUSHALL (before any worker runs, and while one is posting). Real pieces throughout:
// the chat-messages handler, the outbox processor and sweeper, @slack/web-api against the Slack peer. A card may be
// posted twice only when its post was in flight at the fault (at least once); everything else is posted exactly once.

let slack: SlackServer;
beforeEach(async () => { slack = await startSlackServer(); });
afterEach(async () => {
  await runCleanups();
  slack.assertConforming();
  await slack.close();
});

// Slack's stand-in listens on loopback, which the outbound guard refuses unless allowed (as any connector's).
const ENV = { OUTBOUND_ALLOWLIST: "127.0.0.1", OUTBOX_RETRY_SCHEDULE_SECONDS: "1,1,1", SWEEP_INTERVAL_MS: "300", SWEEP_GRACE_SECONDS: "1", CHAT_POST_INTERVAL_MS: "20" };

/** A gateway (no workers) on a private Redis, pointed at `slackApiUrl`; stopped after the test. */
async function chatStack(slackApiUrl: string, redisUrl: string): Promise<Stack> {
  const s = await startChatStack(slack, { ...ENV, REDIS_URL: redisUrl, SLACK_API_URL: slackApiUrl }, 0);
  onCleanup(async () => {
    // Nothing of this test may be left for the next test's sweeper to send.
    await s.gw.deps.db.outboxMessage.updateMany({ where: { queue: QUEUES.chatMessages, status: "pending" }, data: { status: "cancelled" } });
    await s.close();
  });
  return s;
}

/** Chat workers in this process, on the stack's config; stopped after the test. */
function chatWorker(s: Stack) {
  const w = startWorkers(s.gw.deps.config, createLogger({ level: "silent" }), [QUEUES.chatMessages]);
  onCleanup(() => w.close());
  return w;
}

const succeeded = (s: Stack, ids: string[]) => s.gw.deps.db.outboxMessage.count({ where: { id: { in: ids }, status: "succeeded" } });

/** Every message's attempt rows are exactly 1..attempts (each attempt recorded once), the last one succeeded. */
async function attemptsRecordedOnce(s: Stack, messageIds: string[]) {
  const db = s.gw.deps.db;
  const msgs = await db.outboxMessage.findMany({ where: { id: { in: messageIds } }, select: { id: true, attempts: true } });
  const rows = await db.outboxAttempt.findMany({ where: { messageId: { in: messageIds } }, select: { messageId: true, attempt: true, outcome: true }, orderBy: { attempt: "asc" } });
  const byMessage = new Map<string, { attempt: number; outcome: string }[]>();
  for (const r of rows) (byMessage.get(r.messageId) ?? byMessage.set(r.messageId, []).get(r.messageId)!).push(r);
  return msgs.filter((m) => {
    const a = byMessage.get(m.id) ?? [];
    return !(m.attempts >= 1 && a.length === m.attempts && a.every((x, i) => x.attempt === i + 1) && a[a.length - 1].outcome === "succeeded");
  }).map((m) => ({ id: m.id, attempts: m.attempts, rows: byMessage.get(m.id) ?? [] }));
}

test("a worker process killed (-9) mid-load loses no card; only posts in flight at the kill may appear twice", async () => {
  const redis = await privateRedis();
  const slow = await slowSlack(slack, 120);
  const s = await chatStack(slow.url, redis.url);
  const accounts = await chatAccounts(s, slack, 5, "KILL");
  const channels = accounts.map((a) => a.channelId);
  const { itemIds, messageIds, outbox } = await newItems(s, accounts, 60); // 300 cards, 60 per channel
  await dispatch(s, outbox);
  const queue = chatQueue(s);
  expect(await queue.getWaitingCount()).toBe(300);

  const workerEnv = {
    ...ENV, REDIS_URL: redis.url, QUEUE_PREFIX: s.gw.deps.config.QUEUE_PREFIX, WORKER_QUEUES: QUEUES.chatMessages,
    SLACK_API_URL: slow.url, SLACK_CLIENT_ID: slack.app.clientId, SLACK_CLIENT_SECRET: slack.app.clientSecret,
    WORKER_LOCK_DURATION_MS: "3000", WORKER_STALLED_INTERVAL_MS: "1000",
  };
  const posted = () => [...cardsPerItem(slack, channels).values()].reduce((n, ts) => n + ts.length, 0);
  const first = appProcess("worker", workerEnv);
  await waitFor(async () => posted() >= 60, { timeoutMs: 60_000, everyMs: 5 }); // includes the process's start-up
  const inFlightAtKill = slow.openNow(); // posts Slack made whose answers the worker had not yet got
  first.child.kill("SIGKILL");
  expect((await first.exited).signal).toBe("SIGKILL");
  // Jobs the dead process held: BullMQ keeps them active until their lock expires. Only these can post twice.
  const activeAtKill = await queue.getActiveCount();
  await sleep(200); // requests the dead process had fully sent reach Slack
  const postedAtKill = posted();
  // Posted, but the card not yet stored on its item: the only posts a re-run repeats (a stored card is updated).
  const unstoredAtKill = postedAtKill - await s.gw.deps.db.operatorItem.count({ where: { id: { in: itemIds }, chatMessageTs: { not: null } } });
  expect(postedAtKill).toBeLessThan(itemIds.length); // it died mid-load

  appProcess("worker", workerEnv);
  await waitFor(async () => (await succeeded(s, messageIds)) === messageIds.length, { timeoutMs: 120_000, everyMs: 250 });
  await sleep(1500); // a few more sweeps: nothing late trickles in

  const cards = cardsPerItem(slack, channels);
  const lost = itemIds.filter((id) => !cards.has(id));
  const twice = itemIds.filter((id) => cards.get(id)!.length > 1);
  const extra = twice.reduce((n, id) => n + cards.get(id)!.length - 1, 0);
  console.log(`chat kill -9: ${itemIds.length} cards; at the kill ${postedAtKill} posted (${unstoredAtKill} not yet stored on their item), ` +
    `${activeAtKill} jobs active, ${inFlightAtKill} Slack answers in flight; afterwards ${twice.length} cards posted twice (${extra} extra messages)`);
  expect(lost).toEqual([]);
  expect([...cards.keys()].filter((id) => !itemIds.includes(id))).toEqual([]); // no stray messages
  expect(extra).toBeLessThanOrEqual(activeAtKill);
  expect(extra).toBeLessThanOrEqual(unstoredAtKill);
  expect(itemIds.filter((id) => cards.get(id)!.length > 2)).toEqual([]);

  // Each item shows one of its own cards, and its post is recorded once.
  const items = await s.gw.deps.db.operatorItem.findMany({ where: { id: { in: itemIds } }, select: { id: true, chatChannelId: true, chatMessageTs: true } });
  expect(items.filter((it) => !cards.get(it.id)!.includes(it.chatMessageTs!))).toEqual([]);
  expect(await s.gw.deps.db.outboxMessage.count({ where: { id: { in: messageIds }, status: "succeeded" } })).toBe(300);
  expect(await attemptsRecordedOnce(s, messageIds)).toEqual([]);
}, 240_000);

test("a card posted while Postgres is down is stored on its item once Postgres is back, never posted a second time", async () => {
  const redis = await privateRedis();
  const slow = await slowSlack(slack, 1500); // each card is in the channel 1.5 s before the worker hears so
  const s = await chatStack(slow.url, redis.url);
  const accounts = await chatAccounts(s, slack, 2, "PGDOWN");
  const channels = accounts.map((a) => a.channelId);
  const { itemIds, messageIds, outbox } = await newItems(s, accounts, 4);
  await dispatch(s, outbox);
  const { proxy, url: viaProxy } = await postgresBehindProxy(s.gw.deps.config.DATABASE_URL);
  const w = startWorkers({ ...s.gw.deps.config, DATABASE_URL: viaProxy } as typeof s.gw.deps.config, createLogger({ level: "silent" }), [QUEUES.chatMessages]);
  onCleanup(() => w.close());

  const posted = () => [...cardsPerItem(slack, channels).values()].reduce((n, ts) => n + ts.length, 0);
  await waitFor(async () => posted() >= 2, { timeoutMs: 30_000, everyMs: 5 });
  proxy.down(); // the posted cards' answers arrive while Postgres is down: they cannot be stored on their items
  await sleep(8000);
  proxy.up();
  await waitFor(async () => (await succeeded(s, messageIds)) === messageIds.length, { timeoutMs: 90_000, everyMs: 250 });
  await sleep(1500);

  const cards = cardsPerItem(slack, channels);
  expect(itemIds.filter((id) => cards.get(id)?.length !== 1)).toEqual([]); // one card per item
  const items = await s.gw.deps.db.operatorItem.findMany({ where: { id: { in: itemIds } }, select: { id: true, chatMessageTs: true } });
  expect(items.filter((it) => cards.get(it.id)![0] !== it.chatMessageTs)).toEqual([]); // and it is the one stored
}, 150_000);

test("after a FLUSHALL the sweeper re-queues every lost chat message from Postgres and each card is posted once; messages not due wait until due", async () => {
  const redis = await privateRedis();
  const s = await chatStack(slack.url, redis.url);
  const db = s.gw.deps.db;
  const accounts = await chatAccounts(s, slack, 3, "FLUSH");
  const channels = accounts.map((a) => a.channelId);

  // 150 first posts due now; 30 whose first attempt was throttled (429) and whose retry is due; 30 not due for an hour.
  const due = await newItems(s, accounts, 50);
  const retried = await newItems(s, accounts, 10);
  const later = await newItems(s, accounts, 10);
  for (const messageId of retried.messageIds) {
    const r = await recordOutboxAttempt(db, {
      messageId, attempt: 1, outcome: "retrying", responseStatus: 429, errorClass: "rate_limited", errorMessage: "ratelimited", durationMs: 5,
      nextRetryAt: new Date(Date.now() - 5000),
    });
    expect(r).toEqual({ recorded: true, status: "pending" });
  }
  const hourLater = new Date(Date.now() + 3_600_000);
  await db.outboxMessage.updateMany({ where: { id: { in: later.messageIds } }, data: { nextAttemptAt: hourLater } });
  await dispatch(s, due.outbox);
  await dispatch(s, retried.outbox.map((r) => ({ ...r, attempts: 1 })));
  await dispatch(s, later.outbox.map((r) => ({ ...r, next_attempt_at: hourLater })));
  const queue = chatQueue(s);
  expect(await queue.getJobCounts("waiting", "delayed")).toEqual({ waiting: 180, delayed: 30 });

  expect(await redis.flushall()).toBe("OK");
  expect(await queue.getJobCounts("waiting", "delayed")).toEqual({ waiting: 0, delayed: 0 });

  // A worker comes back: its sweeper finds the lost messages in Postgres.
  chatWorker(s);
  const dueIds = [...due.messageIds, ...retried.messageIds];
  await waitFor(async () => (await succeeded(s, dueIds)) === dueIds.length, { timeoutMs: 90_000, everyMs: 250 });
  await sleep(1500); // more sweeps

  let cards = cardsPerItem(slack, channels);
  const dueItems = [...due.itemIds, ...retried.itemIds];
  expect(dueItems.filter((id) => cards.get(id)?.length !== 1)).toEqual([]); // each posted, once
  expect([...cards.keys()].filter((id) => !dueItems.includes(id))).toEqual([]); // and nothing else yet
  expect(await attemptsRecordedOnce(s, dueIds)).toEqual([]);
  // The throttled ones went out as their attempt 2.
  expect(await db.outboxMessage.count({ where: { id: { in: retried.messageIds }, status: "succeeded", attempts: 2 } })).toBe(30);

  // Not due: left alone, no job queued early.
  expect(await db.outboxMessage.count({ where: { id: { in: later.messageIds }, status: "pending", attempts: 0 } })).toBe(30);
  for (const id of later.messageIds) expect(await queue.getJob(outboxJobId(id, 1))).toBeUndefined();

  // Once they are due (time passing, stood in for by moving their due time), the sweeper sends them too, once each.
  await db.outboxMessage.updateMany({ where: { id: { in: later.messageIds } }, data: { nextAttemptAt: new Date(Date.now() - 5000) } });
  await waitFor(async () => (await succeeded(s, later.messageIds)) === 30, { timeoutMs: 60_000, everyMs: 250 });
  await sleep(1500);
  cards = cardsPerItem(slack, channels);
  const all = [...dueItems, ...later.itemIds];
  expect(all.filter((id) => cards.get(id)?.length !== 1)).toEqual([]);
  expect(cards.size).toBe(210);
  expect(await attemptsRecordedOnce(s, later.messageIds)).toEqual([]);
}, 240_000);

test("a FLUSHALL while a worker is posting loses no card; only posts in flight at the flush may appear twice", async () => {
  const redis = await privateRedis();
  const slow = await slowSlack(slack, 120);
  const s = await chatStack(slow.url, redis.url);
  const accounts = await chatAccounts(s, slack, 3, "MIDFLUSH");
  const channels = accounts.map((a) => a.channelId);
  const { itemIds, messageIds, outbox } = await newItems(s, accounts, 40);
  await dispatch(s, outbox);
  const posted = () => [...cardsPerItem(slack, channels).values()].reduce((n, ts) => n + ts.length, 0);

  chatWorker(s); // keeps running through the flush: jobs running, waiting and deferred (pacing) are all wiped
  await waitFor(async () => posted() >= 30, { timeoutMs: 60_000, everyMs: 5 });
  const activeAtFlush = await chatQueue(s).getActiveCount();
  expect(await redis.flushall()).toBe("OK");
  const postedAtFlush = posted();
  expect(postedAtFlush).toBeLessThan(itemIds.length);

  await waitFor(async () => (await succeeded(s, messageIds)) === messageIds.length, { timeoutMs: 120_000, everyMs: 250 });
  await sleep(1500);
  const cards = cardsPerItem(slack, channels);
  const extra = itemIds.reduce((n, id) => n + Math.max(0, (cards.get(id)?.length ?? 0) - 1), 0);
  console.log(`chat FLUSHALL mid-load: ${itemIds.length} cards; at the flush ${postedAtFlush} posted, ${activeAtFlush} jobs active; afterwards ${extra} extra messages`);
  expect(itemIds.filter((id) => !cards.has(id))).toEqual([]);
  expect([...cards.keys()].filter((id) => !itemIds.includes(id))).toEqual([]);
  expect(extra).toBeLessThanOrEqual(s.gw.deps.config.OUTBOX_CONCURRENCY); // what one worker can have in flight at the flush
  expect(await attemptsRecordedOnce(s, messageIds)).toEqual([]);
}, 240_000);

describe("a chat message's job that runs again does not post again", () => {
  /** Calls about this test's channel (another file's leftover message swept here would call too, and be refused). */
  const callsTo = (channelId: string, method: string) => slack.calls(method).filter((c) => c.params.channel === channelId);

  async function onePostedCard() {
    const redis = await privateRedis();
    const s = await chatStack(slack.url, redis.url);
    const [a] = await chatAccounts(s, slack, 1, "RERUN");
    const { itemIds: [itemId], messageIds: [messageId], outbox } = await newItems(s, [a], 1);
    await dispatch(s, outbox);
    chatWorker(s);
    await waitFor(async () => (await succeeded(s, [messageId])) === 1, { timeoutMs: 30_000 });
    const job = await waitFor(async () => { const j = await chatQueue(s).getJob(outboxJobId(messageId, 1)); return j?.finishedOn ? j : null; });
    expect(job.returnvalue).toMatchObject({ outcome: "succeeded", attempt: 1 });
    expect(slack.messages(a.channelId)).toHaveLength(1);
    return { s, a, itemId, messageId };
  }

  /** Runs the message's attempt-1 job again under its own id, as BullMQ or the sweeper would, and waits for it. */
  async function rerun(s: Stack, messageId: string, how: "retry" | "re-add") {
    const queue = chatQueue(s);
    const jobId = outboxJobId(messageId, 1);
    const before = (await queue.getJob(jobId))!;
    if (how === "retry") await before.retry("completed"); // the same job run again (a stalled job's re-run)
    else {
      await queue.remove(jobId); // removed on completion, then added again (a late re-queue)
      await queue.add(QUEUES.chatMessages, { message_id: messageId, attempt: 1 }, { jobId });
    }
    // Both clear the finished job (retry resets finishedOn and returnvalue): wait for the run after it.
    return waitFor(async () => { const j = await queue.getJob(jobId); return j?.finishedOn ? j : null; }, { timeoutMs: 20_000 });
  }

  test("after its attempt was recorded: the re-run skips it, whether the same job is retried or re-added", async () => {
    const { s, a, messageId } = await onePostedCard();
    for (const how of ["retry", "re-add"] as const) {
      const job = await rerun(s, messageId, how);
      expect(job.returnvalue).toEqual({ skipped: "message succeeded" });
    }
    await sleep(1000); // more sweeps
    expect(slack.messages(a.channelId)).toHaveLength(1);
    expect(callsTo(a.channelId, "chat.postMessage")).toHaveLength(1);
    expect(await attemptsRecordedOnce(s, [messageId])).toEqual([]);
    expect(await s.gw.deps.db.outboxAttempt.count({ where: { messageId } })).toBe(1);
  }, 60_000);

  test("after its card was stored but before its attempt was recorded (a kill between the two): the re-run updates that card, no second post", async () => {
    const { s, a, itemId, messageId } = await onePostedCard();
    const db = s.gw.deps.db;
    const stored = await db.operatorItem.findUniqueOrThrow({ where: { id: itemId } });
    // The state a kill right after storeChatMessage leaves: the card is on the item, the message pending, no attempt.
    await db.outboxAttempt.deleteMany({ where: { messageId } });
    await db.$pool.query("UPDATE outbox_messages SET status = 'pending', attempts = 0, completed_at = NULL, result = NULL WHERE id = $1", [messageId]);

    const job = await rerun(s, messageId, "re-add");
    expect(job.returnvalue).toEqual({ outcome: "succeeded", attempt: 1 });
    expect(callsTo(a.channelId, "chat.postMessage")).toHaveLength(1); // not posted again
    expect(callsTo(a.channelId, "chat.update").map((c) => c.params.ts)).toEqual([stored.chatMessageTs]); // the same card, re-rendered
    expect(slack.messages(a.channelId).map((m) => m.ts)).toEqual([stored.chatMessageTs]);
    expect(await db.outboxMessage.findUniqueOrThrow({ where: { id: messageId } })).toMatchObject({ status: "succeeded", attempts: 1 });
    expect(await attemptsRecordedOnce(s, [messageId])).toEqual([]);
  }, 60_000);
});
