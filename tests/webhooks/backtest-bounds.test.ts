// Backtests are bounded (issue 44): the history is replayed a page at a time up to BACKTEST_MAX_EVENTS events or
// BACKTEST_MAX_SECONDS, then the answer says `truncated`; an account runs at most BACKTEST_CONCURRENCY_PER_ACCOUNT
// at once (across the fleet, in Redis), and a slot is given back after an answer and after a failure. Backtests are
// held mid-read by a lock on trend_events, so "running" is a fact of the database, not of timing.
import pg from "pg";
import { waitFor } from "../helpers/config.ts";
import { startGateway, type TestGateway } from "../helpers/gateway.ts";
import { trendEvent } from "../helpers/stack.ts";

const CAP = 4100; // several pages
let gw: TestGateway;
let slow: TestGateway; // a one-second time budget
let locker: pg.Client;
let watcher: pg.Client; // outside the locker's transaction, which would see one snapshot of pg_stat_activity throughout
beforeAll(async () => {
  gw = await startGateway({ BACKTEST_MAX_EVENTS: String(CAP), BACKTEST_CONCURRENCY_PER_ACCOUNT: "2" });
  slow = await startGateway({ BACKTEST_MAX_SECONDS: "1" });
  locker = new pg.Client({ connectionString: process.env.DATABASE_URL });
  watcher = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await Promise.all([locker.connect(), watcher.connect()]);
});
afterEach(() => locker.query("ROLLBACK")); // a test that failed holding the lock must not hold up the next
afterAll(async () => { await locker.end(); await watcher.end(); await gw.close(); await slow.close(); });

const MIN = 60_000;
const BASE = "/api/integrations/webhooks/preview";
const start = Math.floor(Date.now() / MIN) * MIN - 4 * 86_400_000;
/** Every new trend, at most one delivery an hour: with an event a minute, the deliveries count whole hours. */
const RULES = { trigger_type: "trend_detected", threshold_value: 0, delivery_mode: "instant_stream", cooldown_seconds: 3600 };

/** `n` detections of distinct trends, one a minute from `start`. */
async function seed(accountId: string, n: number) {
  const data = Array.from({ length: n }, (_, i) => {
    const e = trendEvent(accountId, { id: `evt_${accountId}_${i}`, type: "trend.detected", trend_id: `trend_${accountId}_${i}`, trend_name: `T${i}`, previous_severity: null, previous_velocity: null });
    return { id: e.id, accountId, type: e.type, trendId: e.trend_id, payload: e, createdAt: new Date(start + i * MIN) };
  });
  await gw.deps.db.trendEventRecord.createMany({ data });
}

const preview = (g: TestGateway, a: { auth: Record<string, string> }) => g.http.post(BASE).set(a.auth).send(RULES).then((r) => r);

/** Backtest reads waiting on the lock: each of them holds its slot. */
async function waiting() {
  const { rows } = await watcher.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%FROM trend_events e%'`);
  return rows.map((r) => r.pid);
}
const lock = async () => { await locker.query("BEGIN"); await locker.query("LOCK TABLE trend_events IN ACCESS EXCLUSIVE MODE"); };
const unlock = () => locker.query("ROLLBACK");

test("past BACKTEST_MAX_EVENTS the answer covers the history up to there, marked truncated; at the cap exactly it is whole", async () => {
  const over = await gw.account();
  const at = await gw.account();
  await seed(over.accountId, CAP + 400);
  await seed(at.accountId, CAP);

  const cut = await preview(gw, over);
  expect(cut.status).toBe(200);
  expect(cut.body).toMatchObject({ truncated: true, truncated_reason: "event_limit", events_replayed: CAP, to: new Date(start + (CAP - 1) * MIN).toISOString() });
  // Replayed across pages as one history: the hour-long cooldown carries from one page into the next.
  expect(cut.body.deliveries).toBe(Math.ceil(CAP / 60));
  expect(cut.body.suppressed.cooldown).toBe(CAP - Math.ceil(CAP / 60));
  expect(cut.body.per_day.reduce((s: number, d: { deliveries: number }) => s + d.deliveries, 0)).toBe(cut.body.deliveries);
  expect(cut.body.per_day.at(-1).date).toBe(cut.body.to.slice(0, 10)); // no day after where it stopped

  const whole = await preview(gw, at);
  expect(whole.body).toMatchObject({ truncated: false, truncated_reason: null, events_replayed: CAP, deliveries: Math.ceil(CAP / 60) });
  expect(Date.parse(whole.body.to)).toBeGreaterThan(Date.now() - MIN);

  const chat = await gw.http.post("/api/integrations/chat/settings/preview").set(over.auth).send({ min_severity: "low" });
  expect(chat.body).toMatchObject({ truncated: true, truncated_reason: "event_limit", events_replayed: CAP, items_opened: CAP });
});

test("past BACKTEST_MAX_SECONDS the answer stops after the page in hand, marked truncated", async () => {
  const a = await slow.account();
  await seed(a.accountId, 4500);
  await lock();
  const res = preview(slow, a);
  await waitFor(async () => (await waiting()).length === 1);
  await new Promise((r) => setTimeout(r, 1100)); // the budget runs out while the first page waits
  await unlock();
  const { body } = await res;
  expect(body).toMatchObject({ truncated: true, truncated_reason: "time_limit" });
  expect(body.events_replayed).toBeGreaterThan(0);
  expect(body.events_replayed).toBeLessThan(4500);
  expect(body.to).toBe(new Date(start + (body.events_replayed - 1) * MIN).toISOString());
});

test("a third backtest of one account answers 429 while another account's runs; slots come back after an answer and after a failure", async () => {
  const a = await gw.account();
  const b = await gw.account();
  await seed(a.accountId, 10);
  await seed(b.accountId, 10);

  await lock();
  const running = [preview(gw, a), preview(gw, a), preview(gw, b)];
  await waitFor(async () => (await waiting()).length === 3);
  const third = await preview(gw, a);
  expect(third.status).toBe(429);
  expect(third.body).toMatchObject({ code: "too_many_backtests", status: 429 });
  expect(Number(third.headers["retry-after"])).toBeGreaterThan(0);
  await unlock();
  for (const r of await Promise.all(running)) expect(r.body).toMatchObject({ events_replayed: 10, truncated: false });

  // Both slots were given back: two run at once again. Then both fail (their queries cancelled).
  await lock();
  const failing = [preview(gw, a), preview(gw, a)];
  const pids = await waitFor(async () => { const p = await waiting(); return p.length === 2 && p; });
  for (const pid of pids) await watcher.query("SELECT pg_cancel_backend($1)", [pid]);
  for (const r of await Promise.all(failing)) expect(r.status).toBeGreaterThanOrEqual(500);

  // Given back after the failure too: two run at once, and the limit still holds.
  const again = [preview(gw, a), preview(gw, a)];
  await waitFor(async () => (await waiting()).length === 2);
  expect((await preview(gw, a)).status).toBe(429);
  await unlock();
  for (const r of await Promise.all(again)) expect(r.status).toBe(200);
});
