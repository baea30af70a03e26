import { QUEUES } from "@trendgate/contracts";
import { dayPartitions, ensureDays, ensurePartitions, idBefore, insertSignals, newId, PARTITION_DAYS_AHEAD, RETENTION_RULES } from "@trendgate/db";
import { createLogger } from "@trendgate/logger";
import { startWorkers } from "../../apps/worker/src/run-workers.ts";
import { retentionPolicy, runRetentionPass } from "../../apps/worker/src/sweepers/retention.ts";
import { waitFor } from "../helpers/config.ts";
import { signal, startGateway, type TestGateway } from "../helpers/gateway.ts";

// Retention against a real Postgres: old rows go, recent ones stay, pending work stays whatever its age, and
// ingestion keeps its latency while a large backlog is deleted.

let gw: TestGateway;
const accounts: string[] = [];
beforeAll(async () => { gw = await startGateway(); });
// The test database is shared by every test file: pending deliveries and undispatched events made old on purpose
// here would keep other files' outbox sweepers busy. Everything of these accounts goes (trend_events has no FK).
afterAll(async () => {
  for (const table of ["trend_events", "outbox_messages", "webhook_deliveries"]) await q(`DELETE FROM ${table} WHERE account_id = ANY($1::text[])`, [accounts]);
  await q(`DELETE FROM accounts WHERE id = ANY($1::text[])`, [accounts]);
  await gw.close();
});
const account = async () => {
  const a = await gw.account();
  accounts.push(a.accountId);
  return a;
};

const DAY = 86_400_000;
const ago = (days: number) => new Date(Date.now() - days * DAY).toISOString();
const q = (sql: string, params: unknown[] = []) => gw.deps.db.$pool.query(sql, params);
const ts = (i: number) => `($${i}::timestamptz AT TIME ZONE 'UTC')`;
const exists = async (table: string, id: string) => (await q(`SELECT 1 FROM ${table} WHERE id = $1`, [id])).rowCount === 1;
const pass = (over: Partial<Parameters<typeof runRetentionPass>[1]> = {}) =>
  runRetentionPass(gw.deps.db.$pool, { policy: retentionPolicy(gw.deps.config), batchSize: 1000, budgetMs: 120_000, ...over });

/** n signals of `accountId` made (created_at, and their time-ordered ids) `daysAgo` days ago, in one statement. */
async function oldSignals(accountId: string, n: number, daysAgo: number, tag = "old") {
  const at = ago(daysAgo);
  await q(`INSERT INTO signals (id, account_id, source, external_id, topic, category, count, observed_at, created_at)
           SELECT $1 || lpad(i::text, 16, '0'), $2, 'x', $3 || i, 'AI agents', 'tech/ai', 1, ${ts(4)}, ${ts(4)}
             FROM generate_series(1, $5::int) i`, [idBefore("sig", new Date(at)), accountId, `${tag}-${Math.random().toString(36).slice(2)}-`, at, n]);
}

async function subscription(accountId: string) {
  const id = `wh_ret${Math.random().toString(36).slice(2)}`;
  await q(`INSERT INTO webhook_subscriptions (id, account_id, url, trigger_type, delivery_mode, threshold_value, cooldown_seconds, secret_ciphertext, updated_at)
           VALUES ($1, $2, 'https://example.com/h', 'trend.detected', 'every_event', 0, 0, 'x', now())`, [id, accountId]);
  return id;
}

let seq = 0;
const rid = (p: string) => `${p}_rettest${++seq}`;

async function delivery(accountId: string, sub: string, status: string, daysAgo: number, attempts = 1) {
  const id = rid("msg");
  await q(`INSERT INTO webhook_deliveries (id, account_id, subscription_id, event_id, trigger, payload, status, attempts, next_attempt_at, created_at)
           VALUES ($1, $2, $3, $1, 'trend_event', '{}', $4, $5, ${ts(6)}, ${ts(6)})`, [id, accountId, sub, status, attempts, ago(daysAgo)]);
  const exe = rid("exe");
  await q(`INSERT INTO webhook_executions (id, account_id, subscription_id, delivery_id, attempt, trigger, outcome, request_url, request_headers, request_body_bytes, duration_ms, created_at)
           VALUES ($1, $2, $3, $4, 1, 'trend_event', 'retrying', 'https://example.com/h', '{}', 2, 5, ${ts(5)})`, [exe, accountId, sub, id, ago(daysAgo)]);
  return { id, exe };
}

async function outbox(accountId: string, status: string, daysAgo: number) {
  const id = rid("obx");
  await q(`INSERT INTO outbox_messages (id, account_id, queue, payload, status, attempts, next_attempt_at, created_at)
           VALUES ($1, $2, 'chat-messages', '{}', $3, 1, ${ts(4)}, ${ts(4)})`, [id, accountId, status, ago(daysAgo)]);
  const att = rid("oba");
  await q(`INSERT INTO outbox_attempts (id, message_id, account_id, queue, attempt, outcome, duration_ms, created_at)
           VALUES ($1, $2, $3, 'chat-messages', 1, 'retrying', 5, ${ts(4)})`, [att, id, accountId, ago(daysAgo)]);
  return { id, att };
}

async function trendEvent(accountId: string, daysAgo: number, dispatched: boolean) {
  const id = rid("evt");
  await q(`INSERT INTO trend_events (id, account_id, type, trend_id, payload, created_at, dispatched_at)
           VALUES ($1, $2, 'trend.detected', 'trend_x', '{}', ${ts(3)}, CASE WHEN $4 THEN ${ts(3)} END)`, [id, accountId, ago(daysAgo), dispatched]);
  return id;
}

async function accountEvent(accountId: string, daysAgo: number) {
  const id = rid("act");
  await q(`INSERT INTO account_events (id, account_id, type, data, created_at) VALUES ($1, $2, 'webhook.disabled', '{}', ${ts(3)})`, [id, accountId, ago(daysAgo)]);
  return id;
}

/** A console session created `daysAgo` (long ended when old: a session lasts a day at most), its id of that time as newId makes it. */
async function consoleSession(accountId: string, daysAgo: number) {
  const created = new Date(ago(daysAgo));
  const id = `${idBefore("cs", created)}${"0123456789abcdef".slice(0, 16)}`;
  await q(`INSERT INTO console_sessions (id, account_id, link_hash, link_expires_at, session_seconds, created_at) VALUES ($1, $2, $3, ${ts(4)}, 3600, ${ts(4)})`,
    [id, accountId, `hash-${id}`, created.toISOString()]);
  return id;
}

async function reportExport(accountId: string, status: string, expiredDaysAgo: number) {
  const id = rid("rpx");
  await q(`INSERT INTO report_exports (id, account_id, request, status, expires_at) VALUES ($1, $2, '{}', $3, ${ts(4)})`, [id, accountId, status, ago(expiredDaysAgo)]);
  await q("INSERT INTO report_export_chunks (export_id, seq, data) VALUES ($1, 0, '\\x00'), ($1, 1, '\\x01')", [id]);
  return id;
}
const chunks = async (exportId: string) => (await q("SELECT count(*)::int AS n FROM report_export_chunks WHERE export_id = $1", [exportId])).rows[0].n;

test("old rows go, recent rows stay; pending and retrying deliveries, their attempts and undispatched events stay whatever their age", async () => {
  const a = await account();
  const OLD = 400; // beyond every default
  await oldSignals(a.accountId, 2500, OLD); // more than one batch
  await insertSignals(gw.deps.db, a.accountId, [signal({ id: "recent-1" }), signal({ id: "recent-2", observed_at: ago(OLD) })]);
  // Buckets: one of the topic's far past, one inside the detection window.
  const topic = (await q("SELECT id FROM topics WHERE account_id = $1", [a.accountId])).rows[0].id as string;
  const inWindow = ago(2);
  await q(`INSERT INTO topic_buckets (topic_id, bucket_start, count) VALUES ($1, ${ts(2)}, 3), ($1, ${ts(3)}, 4)
           ON CONFLICT DO NOTHING`, [topic, ago(OLD), inWindow]);

  const sub = await subscription(a.accountId);
  const d = {
    oldSucceeded: await delivery(a.accountId, sub, "succeeded", OLD),
    oldFailed: await delivery(a.accountId, sub, "failed", OLD),
    oldPending: await delivery(a.accountId, sub, "pending", OLD, 0),
    oldRetrying: await delivery(a.accountId, sub, "pending", OLD, 4),
    recentSucceeded: await delivery(a.accountId, sub, "succeeded", 1),
  };
  const o = { oldDone: await outbox(a.accountId, "succeeded", OLD), oldPending: await outbox(a.accountId, "pending", OLD), recent: await outbox(a.accountId, "failed", 1) };
  const e = { oldDispatched: await trendEvent(a.accountId, OLD, true), oldUndispatched: await trendEvent(a.accountId, OLD, false), recent: await trendEvent(a.accountId, 1, true) };
  const ae = { old: await accountEvent(a.accountId, OLD), recent: await accountEvent(a.accountId, 1) };
  const cs = { old: await consoleSession(a.accountId, OLD), recent: await consoleSession(a.accountId, 1) };
  const x = {
    expired: await reportExport(a.accountId, "ready", 1), // a day past expires_at
    justExpired: await reportExport(a.accountId, "ready", 0.01), // 15 minutes: within the grace
    running: await reportExport(a.accountId, "running", 1), // still being written: never
    live: await reportExport(a.accountId, "ready", -1),
  };

  const deleted = await pass();
  expect(deleted.signals).toBeGreaterThanOrEqual(2500);

  // Signals go by the time they were observed: the recent one stays; one observed long ago goes, even received now
  // (ingestion refuses those: it can no longer count towards any trend).
  const left = (await q("SELECT external_id FROM signals WHERE account_id = $1 ORDER BY external_id", [a.accountId])).rows.map((r) => r.external_id);
  expect(left).toEqual(["recent-1"]);
  expect((await q(`SELECT count(*)::int AS n FROM topic_buckets WHERE topic_id = $1 AND bucket_start < ${ts(2)}`, [topic, ago(300)])).rows[0].n).toBe(0);
  expect((await q(`SELECT count(*)::int AS n FROM topic_buckets WHERE topic_id = $1 AND bucket_start = ${ts(2)}`, [topic, inWindow])).rows[0].n).toBe(1);

  // Deliveries and their executions.
  expect(await exists("webhook_deliveries", d.oldSucceeded.id)).toBe(false);
  expect(await exists("webhook_executions", d.oldSucceeded.exe)).toBe(false);
  expect(await exists("webhook_deliveries", d.oldFailed.id)).toBe(false);
  for (const k of ["oldPending", "oldRetrying", "recentSucceeded"] as const) {
    expect([k, await exists("webhook_deliveries", d[k].id)]).toEqual([k, true]);
    expect([k, await exists("webhook_executions", d[k].exe)]).toEqual([k, true]);
  }
  // Outbox messages and their attempts.
  expect(await exists("outbox_messages", o.oldDone.id)).toBe(false);
  expect(await exists("outbox_attempts", o.oldDone.att)).toBe(false);
  for (const k of ["oldPending", "recent"] as const) {
    expect([k, await exists("outbox_messages", o[k].id), await exists("outbox_attempts", o[k].att)]).toEqual([k, true, true]);
  }
  // Events.
  expect(await exists("trend_events", e.oldDispatched)).toBe(false);
  expect(await exists("trend_events", e.oldUndispatched)).toBe(true);
  expect(await exists("trend_events", e.recent)).toBe(true);
  expect(await exists("account_events", ae.old)).toBe(false);
  expect(await exists("account_events", ae.recent)).toBe(true);
  expect(await exists("console_sessions", cs.old)).toBe(false);
  expect(await exists("console_sessions", cs.recent)).toBe(true);
  // Report exports (their chunks by cascade).
  expect([await exists("report_exports", x.expired), await chunks(x.expired)]).toEqual([false, 0]);
  for (const k of ["justExpired", "running", "live"] as const) expect([k, await exists("report_exports", x[k]), await chunks(x[k])]).toEqual([k, true, 2]);

  // A second pass finds nothing more.
  const again = await pass();
  for (const r of RETENTION_RULES) expect([r.table, again[r.table] ?? 0]).toEqual([r.table, 0]);
});

test("signals and webhook attempts are kept in day partitions made ahead; retention drops whole days, not rows, and keeps a pending delivery's attempts", async () => {
  const day = (daysAgo: number) => new Date(Date.now() - daysAgo * DAY).toISOString().slice(0, 10);
  const part = (table: string, daysAgo: number) => `${table}_p${day(daysAgo).replaceAll("-", "")}`;
  // Made ahead: today's and the next PARTITION_DAYS_AHEAD days' partitions exist, whatever the migration made.
  await ensurePartitions(gw.deps.db.$pool);
  for (const t of ["signals", "webhook_executions", "outbox_attempts"]) {
    const names = (await dayPartitions(gw.deps.db.$pool, t)).map((p) => p.name);
    for (const d of [0, -1, -PARTITION_DAYS_AHEAD]) expect([t, d, names.includes(part(t, d))]).toEqual([t, d, true]);
  }
  const a = await account();
  // A day 45 days back that the default partition took first (no partition made that far back): making it moves its rows in.
  const OLD = 45;
  await oldSignals(a.accountId, 300, OLD, "early");
  expect(await ensureDays(gw.deps.db.$pool, { table: "signals", column: "observed_at" }, day(OLD), day(OLD))).toBe(1);
  await oldSignals(a.accountId, 700, OLD, "late");
  const inPart = (await q(`SELECT count(*)::int AS n FROM ${part("signals", OLD)} WHERE account_id = $1`, [a.accountId])).rows[0].n;
  expect(inPart).toBe(1000);
  await insertSignals(gw.deps.db, a.accountId, [signal({ id: "today" })]);

  // Attempts: a finished delivery's of 40 days ago, and a pending one's of 38 days ago (retried for weeks, say).
  await ensureDays(gw.deps.db.$pool, { table: "webhook_executions", column: "created_at" }, day(40), day(38));
  const sub = await subscription(a.accountId);
  const done = await delivery(a.accountId, sub, "succeeded", 40);
  const pending = await delivery(a.accountId, sub, "pending", 38.5, 5);

  await pass();
  const names = async (t: string) => (await dayPartitions(gw.deps.db.$pool, t)).map((p) => p.name);
  expect(await names("signals")).not.toContain(part("signals", OLD)); // dropped whole
  expect((await q("SELECT external_id FROM signals WHERE account_id = $1", [a.accountId])).rows.map((r) => r.external_id)).toEqual(["today"]);
  // Both attempt days went; the pending delivery's attempt was kept (in the default partition now) until it finishes.
  for (const d of [40, 39, 38]) expect(await names("webhook_executions")).not.toContain(part("webhook_executions", d));
  expect(await exists("webhook_executions_default", pending.exe)).toBe(true);
  expect(await exists("webhook_executions", done.exe)).toBe(false);
  expect(await exists("webhook_deliveries", done.id)).toBe(false); // deliveries themselves go row by row

  await q("UPDATE webhook_deliveries SET status = 'failed' WHERE id = $1", [pending.id]);
  await pass();
  expect(await exists("webhook_executions", pending.exe)).toBe(false);
});

test("retention never reaches into the detection window, and 0 keeps rows forever", async () => {
  const c = gw.deps.config;
  const p = retentionPolicy({ ...c, RETENTION_SIGNALS_DAYS: 1, RETENTION_BUCKETS_DAYS: 1, RETENTION_DELIVERIES_DAYS: 0 });
  expect(p.signalsMs).toBe(c.DETECTION_BASELINE_HOURS * 3_600_000 + DAY);
  expect(p.bucketsMs).toBe(c.DETECTION_BASELINE_HOURS * 3_600_000 + DAY);
  expect(p.deliveriesMs).toBe(0);

  const a = await account();
  const sub = await subscription(a.accountId);
  const kept = await delivery(a.accountId, sub, "succeeded", 1000);
  await pass({ policy: p });
  expect(await exists("webhook_deliveries", kept.id)).toBe(true);
  expect(await exists("webhook_executions", kept.exe)).toBe(true);
});

test("ingestion keeps completing, with bounded latency, while retention deletes a large backlog", async () => {
  const a = await account();
  const BACKLOG = 200_000;
  for (let i = 0; i < BACKLOG; i += 50_000) await oldSignals(a.accountId, 50_000, 60, `bulk${i}`);
  await q("ANALYZE signals");

  /** Ingests batches of 200 new signals until `until` resolves; returns each batch's latency (ms). */
  let n = 0;
  async function ingest(until: Promise<unknown>) {
    let done = false;
    void until.finally(() => { done = true; });
    const lat: number[] = [];
    while (!done) {
      const batch = Array.from({ length: 200 }, () => signal({ id: `live-${n++}`, topic: `topic ${n % 50}`, observed_at: new Date().toISOString() }));
      const t = performance.now();
      await insertSignals(gw.deps.db, a.accountId, batch);
      lat.push(performance.now() - t);
    }
    return lat;
  }
  const stats = (l: number[]) => ({ batches: l.length, p50: l.toSorted((x, y) => x - y)[Math.floor(l.length / 2)], max: Math.max(...l) });

  const alone = stats(await ingest(new Promise((r) => setTimeout(r, 2000))));
  const started = Date.now();
  const sweep = pass({ batchSize: 5000 });
  const during = stats(await ingest(sweep));
  const deleted = await sweep;
  const sweepMs = Date.now() - started;
  console.log(`retention: deleted ${deleted.signals} signals in ${sweepMs} ms; ingest of 200-signal batches alone ${JSON.stringify(alone)}, during the sweep ${JSON.stringify(during)} (ms)`);

  expect(deleted.signals).toBeGreaterThanOrEqual(BACKLOG);
  expect(during.batches).toBeGreaterThan(5); // ingestion kept going while the sweep ran
  expect(during.max).toBeLessThan(1000);
  const live = (await q("SELECT count(*)::int AS n FROM signals WHERE account_id = $1", [a.accountId])).rows[0].n;
  expect(live).toBe((alone.batches + during.batches) * 200);
});

test("a batch gives up rather than queue behind a DDL lock (where it would block writers queued after it); other tables go on", async () => {
  const a = await account();
  const blocked = await accountEvent(a.accountId, 400);
  const other = await trendEvent(a.accountId, 400, true);
  const ddl = await gw.deps.db.$pool.connect();
  try {
    await ddl.query("BEGIN");
    await ddl.query("LOCK TABLE account_events IN ACCESS EXCLUSIVE MODE"); // as an ALTER TABLE would
    const t = Date.now();
    const deleted = await pass();
    expect(Date.now() - t).toBeLessThan(5000); // lock_timeout (1 s), not the DDL's duration
    expect(deleted.account_events ?? 0).toBe(0);
    expect(deleted.trend_events).toBeGreaterThanOrEqual(1);
    await ddl.query("ROLLBACK");
  } finally {
    ddl.release();
  }
  expect(await exists("trend_events", other)).toBe(false);
  expect(await exists("account_events", blocked)).toBe(true);
  await pass(); // the next pass does it
  expect(await exists("account_events", blocked)).toBe(false);
});

test("/status shows operators the size of the growing tables, next to the fields it always had", async () => {
  const res = await gw.http.get("/status").set("Authorization", `Bearer ${gw.deps.config.ADMIN_TOKEN}`);
  expect(res.status).toBe(200);
  expect(Object.keys(res.body).sort()).toEqual(["checks", "queues", "status", "tables", "uptime_seconds", "version"]);
  for (const t of ["signals", "topic_buckets", "webhook_deliveries", "webhook_executions", "outbox_messages", "trend_events", "account_events"]) {
    expect([t, res.body.tables[t]]).toEqual([t, { bytes: expect.any(Number), rows_estimate: expect.any(Number) }]);
  }
  expect(res.body.tables.signals.bytes).toBeGreaterThan(8192);
  expect(res.body.tables.signals.rows_estimate).toBeGreaterThan(0); // analysed in the test above
});

test("a worker runs the pass from its job scheduler, once per interval for the fleet", async () => {
  const a = await account();
  await oldSignals(a.accountId, 10, 400);
  const w = startWorkers(gw.deps.config, createLogger({ level: "silent" }), [QUEUES.retention]);
  try {
    // A new scheduler ticks at once.
    await waitFor(async () => (await q("SELECT count(*)::int AS n FROM signals WHERE account_id = $1", [a.accountId])).rows[0].n === 0, { timeoutMs: 15_000 });
    const s = await gw.deps.queues.get(QUEUES.retention).getJobScheduler("retention-pass");
    expect(s?.every).toBe(gw.deps.config.RETENTION_INTERVAL_SECONDS * 1000);
  } finally {
    await w.close();
  }
});
