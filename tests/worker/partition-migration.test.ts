import type pg from "pg";
import { MIGRATIONS, scratchDb, type ScratchDb } from "../helpers/scratch-db.ts";

// The migration to day partitions carries what an existing installation has: every signal, webhook attempt and
// outbox attempt, each in the day partition of its time (one older than the days made ahead included), keys and
// ingestion behaving as before. The migrations are applied as SQL in order to a database of this test's own (scratchDb).

const MIGRATION = "20261216000001_partitioned_logs";
let scratch: ScratchDb;
let db: pg.Client;
beforeAll(async () => { scratch = await scratchDb("migration"); db = scratch.client; });
afterAll(() => scratch?.drop());

test("existing signals and attempts move into day partitions, keys and all", async () => {
  const at = MIGRATIONS.indexOf(MIGRATION);
  expect(at).toBeGreaterThan(0);
  await scratch.migrate(MIGRATIONS.slice(0, at));
  await db.query("INSERT INTO accounts (id, name, plan) VALUES ('acc_m', 'm', 'free')");
  const days = [0, 3, 45]; // today, within the days the migration makes, and older than them
  for (const d of days) {
    const t = `now() AT TIME ZONE 'UTC' - interval '${d} days'`;
    await db.query(`INSERT INTO signals (id, account_id, source, external_id, topic, category, count, observed_at, created_at)
                    VALUES ('sig_${d}', 'acc_m', 'x', 'post-${d}', 'AI agents', 'tech/ai', 3, ${t}, ${t})`);
    await db.query(`INSERT INTO webhook_executions (id, account_id, subscription_id, delivery_id, attempt, trigger, outcome, request_url, request_headers, request_body_bytes, duration_ms, created_at)
                    VALUES ('exe_${d}', 'acc_m', 'wh_m', 'msg_${d}', 1, 'trend_event', 'succeeded', 'https://example.com/h', '{}', 2, 5, ${t})`);
    await db.query(`INSERT INTO outbox_attempts (id, message_id, account_id, queue, attempt, outcome, duration_ms, created_at)
                    VALUES ('oba_${d}', 'obx_${d}', 'acc_m', 'chat-messages', 1, 'succeeded', 5, ${t})`);
  }

  await scratch.migrate(MIGRATIONS.slice(at));

  for (const table of ["signals", "webhook_executions", "outbox_attempts"]) {
    const { rows } = await db.query(`SELECT tableoid::regclass::text AS part, id FROM ${table} ORDER BY id`);
    const dayName = (d: number) => `${table}_p${new Date(Date.now() - d * 86_400_000).toISOString().slice(0, 10).replaceAll("-", "")}`;
    // Each row in its own day's partition: the migration makes days back to the oldest row it carries.
    expect(rows.map((r) => r.part).sort()).toEqual(days.map(dayName).sort());
    expect((await db.query(`SELECT relkind FROM pg_class WHERE relname = '${table}'`)).rows[0].relkind).toBe("p");
  }
  // Ingestion's conflict key still finds a stored signal: the same post again is ignored.
  const again = await db.query(`INSERT INTO signals (id, account_id, source, external_id, topic, category, count, observed_at)
    SELECT 'sig_again', account_id, source, external_id, topic, category, count, observed_at FROM signals WHERE id = 'sig_3'
    ON CONFLICT (account_id, source, external_id, observed_at) DO NOTHING`);
  expect(again.rowCount).toBe(0);
  // Days ahead are there for tomorrow's rows; a row no day covers lands in the default partition rather than failing.
  await db.query(`INSERT INTO webhook_executions (id, account_id, subscription_id, delivery_id, attempt, trigger, outcome, request_url, request_headers, request_body_bytes, duration_ms, created_at)
                  VALUES ('exe_ahead', 'acc_m', 'wh_m', 'msg_a', 1, 'trend_event', 'succeeded', 'https://example.com/h', '{}', 2, 5, now() AT TIME ZONE 'UTC' + interval '13 days'),
                         ('exe_far', 'acc_m', 'wh_m', 'msg_f', 1, 'trend_event', 'succeeded', 'https://example.com/h', '{}', 2, 5, now() AT TIME ZONE 'UTC' - interval '400 days')`);
  const parts = (await db.query("SELECT id, tableoid::regclass::text AS part FROM webhook_executions WHERE id IN ('exe_ahead', 'exe_far') ORDER BY id")).rows;
  expect(parts).toEqual([{ id: "exe_ahead", part: expect.stringMatching(/^webhook_executions_p\d{8}$/) }, { id: "exe_far", part: "webhook_executions_default" }]);
});
