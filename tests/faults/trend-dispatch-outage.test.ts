import { waitFor } from "../helpers/config.ts";
import { startStack, trendEvent, type Stack } from "../helpers/stack.ts";
import { startN8nServer, type N8nServer } from "../peers/n8n-server.ts";

// Trend-event dispatch is one unit: an event counts as dispatched only once its webhook firings, operator items and
// workflow pushes exist. Here the database drops the trend-events worker's connection exactly when it writes the
// workflow push (a Postgres restart or failover does that to every open connection: FATAL 57P01): the event must
// still reach the workflow, once, instead of being marked dispatched without its push.

const BASE = "/api/integrations/workflow";
let n8n: N8nServer;
let stack: Stack;
beforeAll(async () => {
  n8n = await startN8nServer();
  stack = await startStack({ OUTBOX_RETRY_SCHEDULE_SECONDS: "1,1,1", SWEEP_INTERVAL_MS: "500", SWEEP_GRACE_SECONDS: "1" });
});
afterAll(async () => {
  await stack.gw.deps.db.$executeRawUnsafe(`DROP TRIGGER IF EXISTS tg_test_drop_once ON outbox_messages`);
  await stack.gw.deps.db.$executeRawUnsafe(`DROP FUNCTION IF EXISTS tg_test_drop_once()`);
  await stack.gw.deps.db.$executeRawUnsafe(`DROP SEQUENCE IF EXISTS tg_test_drop_once_seq`);
  await stack.close();
  await n8n.close();
});

test("a connection lost while the event's workflow push is written: the push still arrives, once", async () => {
  const a = await stack.gw.account();
  const c = await stack.gw.http.post(`${BASE}/connect`).set(a.auth).send({ api_key: n8n.apiKey, api_base_url: n8n.url });
  expect(c.status).toBe(200);
  const wf = n8n.addWorkflow({ name: "Trends", webhook: { path: "trends" } });
  const sel = await stack.gw.http.put(`${BASE}/selection`).set(a.auth)
    .send({ workflow_id: wf.id, workflow_name: wf.name, default_event: "trend_lifecycle", api_base_url: n8n.url, auto_push: true });
  expect(sel.status).toBe(200);

  // The first workflow push written for this account ends its session's connection (sequences are not rolled back,
  // so only the first try fails).
  const { db } = stack.gw.deps;
  await db.$executeRawUnsafe(`CREATE SEQUENCE tg_test_drop_once_seq`);
  await db.$executeRawUnsafe(`
    CREATE FUNCTION tg_test_drop_once() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.account_id = '${a.accountId}' AND nextval('tg_test_drop_once_seq') = 1 THEN PERFORM pg_terminate_backend(pg_backend_pid()); END IF;
      RETURN NEW;
    END $$`);
  await db.$executeRawUnsafe(`CREATE TRIGGER tg_test_drop_once BEFORE INSERT ON outbox_messages FOR EACH ROW EXECUTE FUNCTION tg_test_drop_once()`);

  const e = trendEvent(a.accountId);
  await stack.publish(e);
  const pushed = () => n8n.pushes.filter((p) => p.headers["x-trendgate-event-id"] === e.id);
  await waitFor(async () => pushed().length === 1, { timeoutMs: 30_000 });
  expect((await db.$queryRawUnsafe<{ v: bigint }[]>(`SELECT last_value AS v FROM tg_test_drop_once_seq`))[0].v).toBeGreaterThanOrEqual(2n); // it did fail once
  const row = await db.trendEventRecord.findUniqueOrThrow({ where: { id: e.id } });
  expect(row.dispatchedAt).not.toBeNull();
  await new Promise((r) => setTimeout(r, 1500));
  expect(pushed()).toHaveLength(1);
});
