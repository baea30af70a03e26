import { addOutboxMessages, cancelOutboxMessages, createDb, recordOutboxAttempt, type Db } from "@trendgate/db";
import { dispatchOutbox, outboxJobId } from "@trendgate/queues";
import { testConfig, waitFor } from "../helpers/config.ts";
import { onCleanup, runCleanups, sleep } from "../helpers/faults-proc-kit.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { addAndDispatch, message, newAccount, posted, QUEUE, startOutboxWorker, type OutboxWorker, type TestPayload } from "./kit.ts";

// The shared outbox, through the real outbox processor with a small handler posting to a local
// server: every message is recorded before its job, every attempt is logged once, retries follow the one retry
// policy (Retry-After honoured), terminal errors stop at once, and deferral (pacing) costs no attempt.

let db: Db;
beforeAll(() => { db = createDb(process.env.DATABASE_URL!); });
afterAll(() => db.$disconnect());
afterEach(async () => {
  await runCleanups();
  // Leftovers of a test must not be swept into the next test's queue (the sweeper reads the whole table).
  await db.outboxMessage.updateMany({ where: { status: "pending" }, data: { status: "cancelled" } });
});

async function setup(respond: Parameters<typeof startReceiver>[0] = () => ({ status: 200, body: "ok" }), env: Record<string, string> = {}) {
  const rx = await startReceiver(respond);
  onCleanup(() => rx.close());
  const config = testConfig({ OUTBOX_RETRY_SCHEDULE_SECONDS: "0.2,0.2", SWEEP_INTERVAL_MS: "300", SWEEP_GRACE_SECONDS: "1", ...env });
  const w = startOutboxWorker(config, rx.url(""));
  onCleanup(() => w.close());
  return { rx, w, accountId: await newAccount(db) };
}

const attemptsOf = (messageId: string) => db.outboxAttempt.findMany({ where: { messageId }, orderBy: { attempt: "asc" } });
const finished = (id: string) => waitFor(async () => {
  const m = await db.outboxMessage.findUnique({ where: { id } });
  return m && m.status !== "pending" ? m : null;
}, { timeoutMs: 15_000 });
const requestsFor = (rx: Receiver, id: string) => posted(rx.received).filter((p) => p.message_id === id);

test("a message is sent once, its success recorded, and a duplicate (same dedup key) is not added", async () => {
  const { rx, w, accountId } = await setup();
  const [id] = await addAndDispatch(db, w.deps.queues, [message(accountId, { path: "/ok" }, { dedupKey: "item_1:post", subjectId: "item_1" })]);

  const done = await finished(id);
  expect(done).toMatchObject({ status: "succeeded", attempts: 1, lastError: null, result: { status: 200, body: "ok" } });
  expect(done.completedAt).not.toBeNull();
  expect(requestsFor(rx, id)).toEqual([{ message_id: id, attempt: 1 }]);
  expect((await attemptsOf(id)).map((a) => [a.attempt, a.outcome, a.errorClass])).toEqual([[1, "succeeded", null]]);
  expect(w.finals).toEqual([{ id, outcome: "succeeded", error: null, attempts: 1 }]);

  // The same (queue, dedup key) again: nothing inserted, so nothing to dispatch, nothing sent.
  const again = await db.$transaction((tx) => addOutboxMessages(tx, [message(accountId, { path: "/ok" }, { dedupKey: "item_1:post" })]));
  expect(again).toEqual([]);
  await sleep(500);
  expect(rx.received).toHaveLength(1);
  expect(await db.outboxMessage.count({ where: { dedupKey: "item_1:post" } })).toBe(1);
});

test("transient failures are retried on the schedule, and a Retry-After is honoured", async () => {
  // 503, then 429 asking for 1 s, then 200.
  const { rx, w, accountId } = await setup((_r, n) => (n === 1 ? { status: 503 } : n === 2 ? { status: 429, headers: { "retry-after": "1" } } : { status: 200, body: "ok" }));
  const [id] = await addAndDispatch(db, w.deps.queues, [message(accountId, { path: "/flaky" })]);

  expect(await finished(id)).toMatchObject({ status: "succeeded", attempts: 3 });
  const attempts = await attemptsOf(id);
  expect(attempts.map((a) => [a.attempt, a.outcome, a.errorClass, a.responseStatus])).toEqual([
    [1, "retrying", "unavailable", 503], [2, "retrying", "rate_limited", 429], [3, "succeeded", null, 200],
  ]);
  const [r1, r2, r3] = rx.on("/flaky");
  expect(posted([r1, r2, r3]).map((p) => p.attempt)).toEqual([1, 2, 3]);
  // Not earlier than planned: the schedule's 0.2 s (-20 % jitter) after the 503, the asked 1 s after the 429.
  expect(r2.at - r1.at).toBeGreaterThanOrEqual(160);
  expect(r3.at - r2.at).toBeGreaterThanOrEqual(1000);
  expect(attempts[1].nextRetryAt!.getTime() - r2.at).toBeGreaterThanOrEqual(1000);
  expect(w.finals).toEqual([{ id, outcome: "succeeded", error: null, attempts: 3 }]);
});

test("a failed attempt ends its BullMQ job as failed (with the reason), and the retry still happens exactly once", async () => {
  const { rx, w, accountId } = await setup((_r, n) => (n === 1 ? { status: 503 } : { status: 201, body: "made" }));
  const [id] = await addAndDispatch(db, w.deps.queues, [message(accountId, { path: "/once-down" })]);

  expect(await finished(id)).toMatchObject({ status: "succeeded", attempts: 2 });
  const queue = w.deps.queues.get(QUEUE);
  const first = await waitFor(async () => { const j = await queue.getJob(outboxJobId(id, 1)); return j && (await j.getState()) === "failed" && j; });
  expect(first.failedReason).toMatch(/^attempt 1 failed: unavailable: test: HTTP 503; attempt 2 at \d{4}-/);
  expect(first.attemptsMade).toBe(1); // BullMQ did not run it again
  expect(first.opts.removeOnFail).toMatchObject({ count: expect.any(Number) }); // the failed set stays bounded
  expect(await (await queue.getJob(outboxJobId(id, 2)))?.returnvalue).toEqual({ outcome: "succeeded", attempt: 2 });
  await sleep(900); // sweeps (300 ms) and a schedule step (0.2 s) later: nothing more
  expect(requestsFor(rx, id)).toEqual([{ message_id: id, attempt: 1 }, { message_id: id, attempt: 2 }]);
  expect((await attemptsOf(id)).map((a) => [a.attempt, a.outcome, a.responseStatus])).toEqual([[1, "retrying", 503], [2, "succeeded", 201]]);
});

test("terminal failures (bad request, unauthorized, not found) are recorded once and never retried", async () => {
  const status: Record<string, number> = { "/bad": 400, "/unauthorized": 401, "/missing": 404 };
  const { rx, w, accountId } = await setup((r) => ({ status: status[r.path] }));
  const ids = await addAndDispatch(db, w.deps.queues, Object.keys(status).map((path) => message(accountId, { path })));

  for (const id of ids) expect(await finished(id)).toMatchObject({ status: "failed", attempts: 1 });
  await sleep(1000); // a retry (0.2 s) would have happened by now
  expect(rx.received).toHaveLength(3);
  const kinds = [];
  for (const id of ids) {
    const attempts = await attemptsOf(id);
    expect(attempts).toHaveLength(1);
    kinds.push([attempts[0].outcome, attempts[0].errorClass, attempts[0].responseStatus, attempts[0].nextRetryAt]);
  }
  expect(kinds).toEqual([["failed", "bad_request", 400, null], ["failed", "unauthorized", 401, null], ["failed", "not_found", 404, null]]);
  const job = await w.deps.queues.get(QUEUE).getJob(outboxJobId(ids[0], 1));
  expect(await job?.getState()).toBe("failed");
  expect(job?.failedReason).toBe("attempt 1 failed: bad_request: test: HTTP 400; no retry (final)");
  expect((await db.outboxMessage.findUnique({ where: { id: ids[1] } }))!.lastError).toBe("test: HTTP 401");
  expect(w.finals.sort((a, b) => a.id.localeCompare(b.id))).toEqual(ids.map((id, i) => ({ id, outcome: "failed", error: `test: HTTP ${[400, 401, 404][i]}`, attempts: 1 })));
});

test("a message whose payload does not match its queue's schema fails at once (invalid_payload), unsent and never retried", async () => {
  const { rx, w, accountId } = await setup();
  // A row written by hand or by a producer out of step with the contract: `path` is not a string.
  const [bad, good] = await addAndDispatch(db, w.deps.queues, [
    message(accountId, { path: 42 } as unknown as TestPayload), message(accountId, { path: "/fine" }),
  ]);

  expect(await finished(bad)).toMatchObject({ status: "failed", attempts: 1, lastError: expect.stringMatching(/^not a chat-messages payload \(path: .*string/) });
  expect(await finished(good)).toMatchObject({ status: "succeeded" });
  await sleep(1500); // a retry (0.2 s) or the sweeper (grace 1 s) would have run it again by now
  const attempts = await attemptsOf(bad);
  expect(attempts.map((a) => [a.attempt, a.outcome, a.errorClass, a.nextRetryAt])).toEqual([[1, "failed", "invalid_payload", null]]);
  expect(w.calls).not.toContain(bad); // the handler never saw it
  expect(rx.received.map((r) => r.path)).toEqual(["/fine"]);
  const job = await w.deps.queues.get(QUEUE).getJob(outboxJobId(bad, 1));
  expect(await job?.getState()).toBe("failed");
  expect(job?.attemptsMade).toBe(1); // BullMQ did not run it again
  expect(job?.failedReason).toMatch(/^attempt 1 failed: invalid_payload: not a chat-messages payload .*; no retry \(final\)$/);
  expect(await w.deps.queues.get(QUEUE).getJob(outboxJobId(bad, 2))).toBeUndefined();
});

test("a message failing every attempt ends failed after the last one in the schedule", async () => {
  const { rx, w, accountId } = await setup(() => ({ status: 503 }));
  const [id] = await addAndDispatch(db, w.deps.queues, [message(accountId, { path: "/down" })]);

  expect(await finished(id)).toMatchObject({ status: "failed", attempts: 3, lastError: "test: HTTP 503" });
  await sleep(800);
  expect(posted(rx.received).map((p) => p.attempt)).toEqual([1, 2, 3]);
  expect((await attemptsOf(id)).map((a) => a.outcome)).toEqual(["retrying", "retrying", "failed"]);
  expect(w.finals).toEqual([{ id, outcome: "failed", error: "test: HTTP 503", attempts: 3 }]);
});

test("a deferred send (pacing) runs again later without using up an attempt", async () => {
  const { rx, w, accountId } = await setup();
  const [id] = await addAndDispatch(db, w.deps.queues, [message(accountId, { path: "/paced", defer: 3 })]);

  expect(await finished(id)).toMatchObject({ status: "succeeded", attempts: 1 });
  expect(w.calls.filter((c) => c === id)).toHaveLength(4); // three deferrals, then the send
  expect(requestsFor(rx, id)).toEqual([{ message_id: id, attempt: 1 }]);
  expect((await attemptsOf(id)).map((a) => [a.attempt, a.outcome])).toEqual([[1, "succeeded"]]);
});

test("an unexpected error in a handler counts as unavailable: recorded and retried", async () => {
  const { rx, w, accountId } = await setup();
  const [id] = await addAndDispatch(db, w.deps.queues, [message(accountId, { path: "/bug", explode: 1 })]);

  expect(await finished(id)).toMatchObject({ status: "succeeded", attempts: 2 });
  expect((await attemptsOf(id)).map((a) => [a.attempt, a.outcome, a.errorClass, a.errorMessage])).toEqual([
    [1, "retrying", "unavailable", "handler bug"], [2, "succeeded", null, null],
  ]);
  expect(requestsFor(rx, id)).toEqual([{ message_id: id, attempt: 2 }]);
});

test("a job that runs again after its attempt was recorded does not send again; it only queues the next attempt", async () => {
  const { rx, w, accountId } = await setup();
  // Attempt 1 ran and its failure was recorded, then the worker died before the job completed (and before it
  // queued attempt 2): BullMQ runs the attempt-1 job again.
  const [row] = await db.$transaction((tx) => addOutboxMessages(tx, [message(accountId, { path: "/once" })]));
  const rec = await recordOutboxAttempt(db, {
    messageId: row.id, attempt: 1, outcome: "retrying", errorClass: "unavailable", errorMessage: "test: HTTP 503", responseStatus: 503,
    durationMs: 5, nextRetryAt: new Date(Date.now() + 300),
  });
  expect(rec).toEqual({ recorded: true, status: "pending" });
  // Recording the same attempt again changes nothing.
  expect(await recordOutboxAttempt(db, { messageId: row.id, attempt: 1, outcome: "failed", durationMs: 1 })).toEqual({ recorded: false, status: null });
  await dispatchOutbox(w.deps.queues, [row]); // the attempt-1 job

  expect(await finished(row.id)).toMatchObject({ status: "succeeded", attempts: 2 });
  const first = await w.deps.queues.get(QUEUE).getJob(outboxJobId(row.id, 1));
  expect(first?.returnvalue).toEqual({ skipped: "attempt already recorded" });
  expect(requestsFor(rx, row.id)).toEqual([{ message_id: row.id, attempt: 2 }]); // attempt 1 was not sent again
  expect((await attemptsOf(row.id)).map((a) => [a.attempt, a.outcome])).toEqual([[1, "retrying"], [2, "succeeded"]]);
});

test("cancelled messages are not sent, and their jobs finish without sending", async () => {
  const { rx, w, accountId } = await setup();
  const ids = await addAndDispatch(db, w.deps.queues, [
    message(accountId, { path: "/cancelled" }, { subjectId: "item_c", notBefore: new Date(Date.now() + 400) }),
    message(accountId, { path: "/kept" }, { subjectId: "item_k", notBefore: new Date(Date.now() + 400) }),
  ]);
  expect(await db.$transaction((tx) => cancelOutboxMessages(tx, "item_c"))).toEqual([ids[0]]);

  expect(await finished(ids[1])).toMatchObject({ status: "succeeded" });
  await waitFor(async () => (await w.deps.queues.get(QUEUE).getJob(outboxJobId(ids[0], 1)))?.returnvalue);
  expect((await w.deps.queues.get(QUEUE).getJob(outboxJobId(ids[0], 1)))!.returnvalue).toEqual({ skipped: "message cancelled" });
  await sleep(1500); // past the sweeper's grace: it leaves cancelled messages alone
  expect(rx.on("/cancelled")).toHaveLength(0);
  expect(await db.outboxMessage.findUnique({ where: { id: ids[0] } })).toMatchObject({ status: "cancelled", attempts: 0 });
  expect(await attemptsOf(ids[0])).toEqual([]);
});

test("a message cancelled while its attempt is in flight keeps the attempt's record but is not retried", async () => {
  const { rx, w, accountId } = await setup(() => ({ status: 503, delayMs: 600 })); // answered after 600 ms
  const [id] = await addAndDispatch(db, w.deps.queues, [message(accountId, { path: "/slow" }, { subjectId: "item_s" })]);
  await waitFor(async () => rx.on("/slow").length === 1); // in flight
  expect(await db.$transaction((tx) => cancelOutboxMessages(tx, "item_s"))).toEqual([id]);

  await waitFor(async () => (await attemptsOf(id)).length === 1);
  await sleep(800);
  expect(await db.outboxMessage.findUnique({ where: { id } })).toMatchObject({ status: "cancelled", attempts: 1, lastError: "test: HTTP 503" });
  expect(rx.on("/slow")).toHaveLength(1);
  expect(w.finals).toEqual([]); // not a final outcome of sending
});
