// POST …/{id}/test racing a DELETE of the same subscription: the test delivery's row must never be inserted after its
// subscription is gone (a foreign-key violation, 500). It answers 404 (or 202 when it committed first, the DELETE
// then removing its delivery with the subscription) and leaves nothing behind.
import { QUEUES } from "@trendgate/contracts";
import { createTestDelivery, isDbReferenceGone, newId } from "@trendgate/db";
import { waitFor } from "../helpers/config.ts";
import { startGateway, type TestGateway } from "../helpers/gateway.ts";
import { webhookBody } from "../helpers/stack.ts";

let gw: TestGateway;
beforeAll(async () => { gw = await startGateway(); });
afterAll(async () => { await gw.close(); });

const BASE = "/api/integrations/webhooks";

async function subscription() {
  const account = await gw.account();
  const res = await gw.http.post(BASE).set(account.auth).send(webhookBody("https://hooks.example.com/race"));
  expect(res.status).toBe(201);
  return { ...account, id: res.body.id as string };
}

const deliveries = (subscriptionId: string) => gw.deps.db.webhookDelivery.count({ where: { subscriptionId } });
const queuedFor = async (webhookId: string) =>
  (await gw.deps.queues.get(QUEUES.webhookDeliveries).getJobs(["waiting", "delayed", "prioritized", "active"]))
    .filter((j) => j?.data?.webhook_id === webhookId).length;

test("the db layer: a test delivery for a subscription deleted since it was read is not found, not a foreign-key violation", async () => {
  const s = await subscription();
  await gw.http.delete(`${BASE}/${s.id}`).set(s.auth).expect(204);
  const d = { id: newId("msg"), accountId: s.accountId, subscriptionId: s.id, payload: { test: true }, velocity: 0 };
  expect(await gw.deps.db.$transaction((tx) => createTestDelivery(tx, d))).toBe(false);
  expect(await createTestDelivery(gw.deps.db, d)).toBe(false); // outside a transaction too
  expect(await gw.deps.db.webhookDelivery.findUnique({ where: { id: d.id } })).toBeNull();
  // The net under the lock: the foreign-key violation a bare insert meets is recognised as "gone".
  const err = await gw.deps.db.webhookDelivery.create({ data: { ...d, trigger: "test", payload: {}, nextAttemptAt: new Date() } }).catch((e: unknown) => e);
  expect(isDbReferenceGone(err)).toBe(true);
  // Another account's subscription is not found either.
  const other = await subscription();
  expect(await createTestDelivery(gw.deps.db, { ...d, subscriptionId: other.id })).toBe(false);
  expect(await deliveries(other.id)).toBe(0);
});

test("a DELETE committing between the route's read and its insert: 404, nothing written or queued", async () => {
  const s = await subscription();
  // The DELETE runs first and holds the subscription's row, uncommitted: the route still reads the subscription, then
  // its insert waits for that row. The DELETE commits once the route is waiting.
  const client = await gw.deps.db.$pool.connect();
  let committed = false;
  try {
    await client.query("BEGIN");
    await client.query("DELETE FROM webhook_executions WHERE subscription_id = $1", [s.id]);
    await client.query("DELETE FROM webhook_subscriptions WHERE id = $1", [s.id]);
    const answer = gw.http.post(`${BASE}/${s.id}/test`).set(s.auth).set("Idempotency-Key", `race-${s.id}`).then((r) => r);
    await waitFor(() => blockedBy(client), { timeoutMs: 10_000 });
    await client.query("COMMIT");
    committed = true;
    const res = await answer;
    expect({ status: res.status, code: res.body.code }).toEqual({ status: 404, code: "not_found" });
  } finally {
    if (!committed) await client.query("ROLLBACK").catch(() => {});
    client.release();
  }
  expect(await deliveries(s.id)).toBe(0);
  expect(await queuedFor(s.id)).toBe(0);
  expect(await gw.deps.db.webhookSubscription.findUnique({ where: { id: s.id } })).toBeNull();
});

test("20 tests racing 20 deletes: each test answers 202 or 404 (or 409), each delete 204 or 404, never 500; nothing is left", async () => {
  const subs = await Promise.all(Array.from({ length: 20 }, () => subscription()));
  const answers = await Promise.all(subs.map(async (s) => {
    const [test, del] = await Promise.all([
      gw.http.post(`${BASE}/${s.id}/test`).set(s.auth),
      gw.http.delete(`${BASE}/${s.id}`).set(s.auth),
    ]);
    return { test: test.status, del: del.status };
  }));
  for (const a of answers) {
    expect([202, 404, 409]).toContain(a.test);
    expect([204, 404]).toContain(a.del);
  }
  expect(await gw.deps.db.webhookSubscription.count({ where: { id: { in: subs.map((s) => s.id) } } })).toBe(0);
  expect(await gw.deps.db.webhookDelivery.count({ where: { subscriptionId: { in: subs.map((s) => s.id) } } })).toBe(0);
});

/** Whether a backend is waiting for a lock `client`'s transaction holds. */
async function blockedBy(client: { query: (q: string) => Promise<{ rows: { pid: number }[] }> }) {
  const { rows: [me] } = await client.query("SELECT pg_backend_pid() AS pid");
  const { rows } = await gw.deps.db.$pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))", [me!.pid]);
  return rows[0]!.n > 0;
}
