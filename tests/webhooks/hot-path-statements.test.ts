import { createAccount, createDb, newId, recordAttempts, timeOfId, type AttemptRecord, type Db } from "@trendgate/db";

// The attempt records save a statement on their hot path (for latency): recordAttempts skips the subscription
// statement only when it would change nothing.

let db: Db;
beforeAll(() => { db = createDb(process.env.DATABASE_URL!); });
afterAll(() => db.$disconnect());

async function subscription(accountId: string, data: { cooldownSeconds?: number; failingSince?: Date | null } = {}) {
  return db.webhookSubscription.create({
    data: { id: newId("wh"), accountId, url: "http://127.0.0.1:1/x", triggerType: "trend_velocity", deliveryMode: "instant_stream", thresholdValue: 1,
      cooldownSeconds: data.cooldownSeconds ?? 0, failingSince: data.failingSince ?? null, secretCiphertext: "sealed" },
  });
}

function attempt(accountId: string, subscriptionId: string, deliveryId: string, ok: boolean): AttemptRecord {
  return {
    execution: { id: newId("exe"), accountId, subscriptionId, deliveryId, attempt: 1, trigger: "test", outcome: ok ? "succeeded" : "retrying",
      requestUrl: "http://127.0.0.1:1/x", requestHeaders: {}, requestBodyBytes: 1, responseStatus: ok ? 204 : 500, responseBody: "", responseBodyTruncated: false,
      durationMs: 1, errorClass: ok ? null : "http_5xx", errorMessage: ok ? null : "HTTP 500", nextRetryAt: ok ? null : new Date(Date.now() + 60_000) },
    delivery: { status: ok ? "succeeded" : "pending", attempts: 1, nextAttemptAt: new Date(), lastError: ok ? null : "HTTP 500" },
  };
}

test("recordAttempts still sets and clears failing_since (the subscription statement runs whenever it has something to change)", async () => {
  const account = await createAccount(db, "hot path", "free");
  const healthy = await subscription(account.id);
  const failing = await subscription(account.id, { failingSince: new Date(Date.now() - 60_000) });
  const fresh = await subscription(account.id);
  const delivery = async (subscriptionId: string) => (await db.webhookDelivery.create({
    data: { id: newId("msg"), accountId: account.id, subscriptionId, trigger: "test", payload: {}, nextAttemptAt: new Date() } })).id;

  // All succeeded, none failing: only the attempts are written.
  const d1 = await delivery(healthy.id);
  await recordAttempts(db, [attempt(account.id, healthy.id, d1, true)], 86_400);
  expect(await db.webhookDelivery.findUnique({ where: { id: d1 } })).toMatchObject({ status: "succeeded", attempts: 1 });
  expect((await db.webhookSubscription.findUnique({ where: { id: healthy.id } }))?.failingSince).toBeNull();

  // A success for a subscription marked failing clears it; a failure elsewhere in the same batch marks that one.
  const [d2, d3] = [await delivery(failing.id), await delivery(fresh.id)];
  await recordAttempts(db, [attempt(account.id, failing.id, d2, true), attempt(account.id, fresh.id, d3, false)], 86_400);
  expect((await db.webhookSubscription.findUnique({ where: { id: failing.id } }))?.failingSince).toBeNull();
  expect((await db.webhookSubscription.findUnique({ where: { id: fresh.id } }))?.failingSince).not.toBeNull();

  // And a batch of successes only, for the subscription now failing, clears it too.
  const d4 = await delivery(fresh.id);
  await recordAttempts(db, [attempt(account.id, fresh.id, d4, true)], 86_400);
  expect((await db.webhookSubscription.findUnique({ where: { id: fresh.id } }))?.failingSince).toBeNull();
});

test("a batch of attempts written again later (its first commit unconfirmed) records each attempt once, in the day partition of its id's time", async () => {
  const account = await createAccount(db, "rewrite", "free");
  const sub = await subscription(account.id);
  const d = (await db.webhookDelivery.create({ data: { id: newId("msg"), accountId: account.id, subscriptionId: sub.id, trigger: "test", payload: {}, nextAttemptAt: new Date() } })).id;
  const batch = [attempt(account.id, sub.id, d, false)];
  await recordAttempts(db, batch, 86_400);
  await new Promise((r) => setTimeout(r, 20)); // the second write's clock differs
  await recordAttempts(db, batch, 86_400);
  const rows = await db.webhookExecution.findMany({ where: { deliveryId: d } });
  expect(rows.map((r) => [r.id, r.createdAt.getTime()])).toEqual([[batch[0].execution.id, timeOfId(batch[0].execution.id).getTime()]]);
});
