import { addOutboxMessages, createDb, recordOutboxAttempts, type Db } from "@trendgate/db";
import { newAccount, QUEUE } from "./kit.ts";

// Attempt records of concurrent jobs are written in one statement (the outbox's hot path). Each record
// still applies to its own message only, once, and only while the message has fewer attempts.

let db: Db;
beforeAll(() => { db = createDb(process.env.DATABASE_URL!); });
afterAll(() => db.$disconnect());

async function messages(n: number) {
  const accountId = await newAccount(db);
  return db.$transaction((tx) => addOutboxMessages(tx, Array.from({ length: n }, (_, i) => ({ queue: QUEUE, accountId, payload: { type: "post_item" as const, item_id: `item_${i}` } }))));
}

test("one call records each message's attempt and answers per record, in order", async () => {
  const [a, b, c] = await messages(3);
  const next = new Date(Date.now() + 60_000);
  const out = await recordOutboxAttempts(db, [
    { messageId: a.id, attempt: 1, outcome: "succeeded", durationMs: 3, result: { ok: 1 } },
    { messageId: b.id, attempt: 1, outcome: "retrying", durationMs: 4, errorClass: "unavailable", errorMessage: "503", responseStatus: 503, nextRetryAt: next },
    { messageId: c.id, attempt: 1, outcome: "failed", durationMs: 5, errorClass: "bad_request", errorMessage: "no" },
  ]);
  expect(out).toEqual([{ recorded: true, status: "succeeded" }, { recorded: true, status: "pending" }, { recorded: true, status: "failed" }]);
  const rows = await db.outboxMessage.findMany({ where: { id: { in: [a.id, b.id, c.id] } } });
  const byId = new Map(rows.map((r) => [r.id, r]));
  expect(byId.get(a.id)).toMatchObject({ status: "succeeded", attempts: 1, result: { ok: 1 } });
  expect(byId.get(b.id)).toMatchObject({ status: "pending", attempts: 1, lastError: "503" });
  expect(byId.get(b.id)!.nextAttemptAt.getTime()).toBe(next.getTime());
  expect(byId.get(c.id)).toMatchObject({ status: "failed", attempts: 1, lastError: "no" });
  expect(await db.outboxAttempt.count({ where: { messageId: { in: [a.id, b.id, c.id] } } })).toBe(3);
});

test("a duplicate record in the same call, or an attempt recorded before, changes nothing", async () => {
  const [a, b] = await messages(2);
  const first = await recordOutboxAttempts(db, [
    { messageId: a.id, attempt: 1, outcome: "succeeded", durationMs: 1 },
    { messageId: a.id, attempt: 1, outcome: "failed", durationMs: 1, errorClass: "bad_request", errorMessage: "dup" },
  ]);
  expect(first).toEqual([{ recorded: true, status: "succeeded" }, { recorded: false, status: null }]);
  const again = await recordOutboxAttempts(db, [
    { messageId: a.id, attempt: 1, outcome: "failed", durationMs: 1, errorClass: "bad_request", errorMessage: "late" },
    { messageId: b.id, attempt: 1, outcome: "succeeded", durationMs: 1 },
    { messageId: "obx_missing", attempt: 1, outcome: "succeeded", durationMs: 1 },
  ]);
  expect(again).toEqual([{ recorded: false, status: null }, { recorded: true, status: "succeeded" }, { recorded: false, status: null }]);
  expect(await db.outboxMessage.findUnique({ where: { id: a.id } })).toMatchObject({ status: "succeeded", lastError: null });
  expect(await db.outboxAttempt.count({ where: { messageId: a.id } })).toBe(1);
});

test("a cancelled message stays cancelled when an attempt in flight asks for a retry", async () => {
  const [a] = await messages(1);
  await db.outboxMessage.update({ where: { id: a.id }, data: { status: "cancelled" } });
  const [r] = await recordOutboxAttempts(db, [{ messageId: a.id, attempt: 1, outcome: "retrying", durationMs: 1, errorClass: "unavailable", nextRetryAt: new Date() }]);
  expect(r).toEqual({ recorded: true, status: "cancelled" });
});
