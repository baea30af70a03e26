import { addOutboxMessageGrouped, createDb, type Db } from "@trendgate/db";
import { newAccount, QUEUE } from "./kit.ts";

// Messages added on their own in the same moment (conversion pushes without an Idempotency-Key) share one INSERT:
// each caller still learns its own row, a duplicate of (queue, dedup_key) is null whether the first came in the same
// statement or long before, and a row Postgres refuses fails only its own caller.

let db: Db;
beforeAll(() => { db = createDb(process.env.DATABASE_URL!); });
afterAll(() => db.$disconnect());

const msg = (accountId: string, dedupKey: string, item = dedupKey) => ({ queue: QUEUE, accountId, dedupKey, payload: { type: "post_item" as const, item_id: item } });

test("concurrent adds go in one statement, each answered with its own row; duplicates of the same moment or of before are null", async () => {
  const accountId = await newAccount(db);
  const before = await addOutboxMessageGrouped(db, msg(accountId, `${accountId}:early`));
  expect(before).not.toBeNull();
  const rows = await Promise.all([
    addOutboxMessageGrouped(db, msg(accountId, `${accountId}:a`)),
    addOutboxMessageGrouped(db, msg(accountId, `${accountId}:b`)),
    addOutboxMessageGrouped(db, msg(accountId, `${accountId}:a`, "again")), // the same key, in the same statement
    addOutboxMessageGrouped(db, msg(accountId, `${accountId}:early`)), // the same key as one stored before
  ]);
  expect(rows.map((r) => r === null)).toEqual([false, false, true, true]);
  const stored = await db.outboxMessage.findMany({ where: { accountId }, orderBy: { id: "asc" } });
  expect(stored.map((m) => m.dedupKey).sort()).toEqual([`${accountId}:a`, `${accountId}:b`, `${accountId}:early`]);
  // Each answer is the caller's own message, due now (a UTC instant, as the dispatch computes its delay from it).
  const a = stored.find((m) => m.dedupKey === `${accountId}:a`)!;
  expect(rows[0]!.id).toBe(a.id);
  expect((a.payload as { item_id: string }).item_id).toBe(`${accountId}:a`);
  expect(Math.abs(rows[0]!.next_attempt_at.getTime() - Date.now())).toBeLessThan(10_000);
});

test("a row Postgres refuses fails its own caller only; the others of the same statement are stored", async () => {
  const accountId = await newAccount(db);
  const [good, bad, other] = await Promise.allSettled([
    addOutboxMessageGrouped(db, msg(accountId, `${accountId}:good`)),
    addOutboxMessageGrouped(db, msg(accountId, `${accountId}:bad`, "nul \u0000 in jsonb")), // jsonb refuses \u0000
    addOutboxMessageGrouped(db, msg(accountId, `${accountId}:other`)),
  ]);
  expect([good.status, bad.status, other.status]).toEqual(["fulfilled", "rejected", "fulfilled"]);
  expect((await db.outboxMessage.findMany({ where: { accountId } })).map((m) => m.dedupKey).sort()).toEqual([`${accountId}:good`, `${accountId}:other`]);
});
