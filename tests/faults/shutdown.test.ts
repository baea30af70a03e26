import http from "node:http";
import pg from "pg";
import { createAccount, createApiKey, createDb } from "@trendgate/db";
import { waitFor } from "../helpers/config.ts";
import { appProcess, onCleanup, RawClient, runCleanups, sleep } from "../helpers/faults-proc-kit.ts";
import { freePort } from "../helpers/free-port.ts";
import { startReceiver } from "../helpers/receiver.ts";
import { startStack, webhookBody } from "../helpers/stack.ts";

// SIGTERM, as a supervisor sends it on every deploy, against real processes.
// - A worker stops taking jobs at once, finishes the active ones and exits within seconds, even while an outbox
//   sweep is stuck (here: waiting on a table lock); nothing is lost and nothing is delivered twice.
// - The gateway closes idle keep-alive connections at once, answers requests still running or arriving on a busy
//   connection with `Connection: close`, lets them finish, then exits.

const BASE = "/api/integrations/webhooks";
afterEach(runCleanups);

test("SIGTERM on a worker mid-load, with a sweep stuck: exits within seconds, no delivery lost or sent twice", async () => {
  const r = await startReceiver(() => ({ status: 204, delayMs: 250 }));
  onCleanup(() => r.close());
  const s = await startStack({}, 0); // the gateway in-process; the workers are real processes
  onCleanup(() => s.close());
  const prefix = s.gw.deps.config.QUEUE_PREFIX;

  const account = await s.gw.account("pro");
  const created = await s.gw.http.post(BASE).set(account.auth).send(webhookBody(r.url("/load")));
  expect(created.status).toBe(201);
  const N = 40;
  const ids: string[] = [];
  for (let i = 0; i < N; i++) {
    const res = await s.gw.http.post(`${BASE}/${created.body.id}/test`).set(account.auth);
    expect(res.status).toBe(202);
    ids.push(res.body.delivery_id);
  }

  // A sweep that cannot finish: it waits on this lock for as long as the test holds it.
  const locker = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await locker.connect();
  onCleanup(() => locker.end());
  await locker.query("BEGIN");
  await locker.query("LOCK TABLE trend_events IN ACCESS EXCLUSIVE MODE");

  const env = {
    QUEUE_PREFIX: prefix, WORKER_QUEUES: "webhook-deliveries,trend-events", OUTBOUND_ALLOWLIST: "127.0.0.1",
    WEBHOOK_CONCURRENCY: "4", SWEEP_INTERVAL_MS: "200", SWEEP_GRACE_SECONDS: "30",
    WORKER_LOCK_DURATION_MS: "5000", WORKER_STALLED_INTERVAL_MS: "1000", SHUTDOWN_TIMEOUT_SECONDS: "25",
  };
  const first = appProcess("worker", env);
  await waitFor(async () => r.on("/load").length >= 8, { timeoutMs: 30_000 }); // includes start-up
  await waitFor(async () => {
    const { rows } = await locker.query<{ n: string }>(
      `SELECT count(*) AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
        WHERE c.relname = 'trend_events' AND NOT l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`);
    return Number(rows[0].n) > 0;
  }, { timeoutMs: 30_000 }); // the worker's sweep is now stuck on the lock (a loaded machine starts sweeping late)
  expect(r.on("/load").length).toBeLessThan(N); // still mid-load

  const signalled = Date.now();
  first.child.kill("SIGTERM");
  const exit = await first.exited;
  const tookMs = Date.now() - signalled;
  expect(exit).toEqual({ code: 0, signal: null });
  expect(tookMs).toBeLessThan(10_000); // was: the whole SHUTDOWN_TIMEOUT (25 s), then exit 1 with deliveries cut
  await locker.query("ROLLBACK");

  // Everything the receiver got before the exit was recorded as delivered: no attempt was cut in flight.
  const db = s.gw.deps.db;
  const sent = [...new Set(r.on("/load").map((q) => q.headers["webhook-id"] as string))];
  expect(await db.webhookDelivery.count({ where: { id: { in: sent }, status: "succeeded" } })).toBe(sent.length);
  expect(sent.length).toBeLessThan(N); // it stopped taking jobs: the rest waited in the queue

  // Another worker finishes the rest: every delivery arrives exactly once.
  const second = appProcess("worker", env);
  await waitFor(async () => (await db.webhookDelivery.count({ where: { id: { in: ids }, status: "succeeded" } })) === N, { timeoutMs: 40_000 });
  await sleep(500); // nothing late trickles in
  const got = r.on("/load").map((q) => q.headers["webhook-id"]);
  expect(got).toHaveLength(N);
  expect(new Set(got)).toEqual(new Set(ids));

  second.child.kill("SIGTERM");
  expect(await second.exited).toEqual({ code: 0, signal: null });
}, 120_000);

test("SIGTERM on the gateway: idle keep-alive closed at once, Connection: close on busy connections, in-flight requests finish, then exit", async () => {
  const db = createDb(process.env.DATABASE_URL!);
  const account = await createAccount(db, "drain");
  const { key } = await createApiKey(db, account.id, "k");
  await db.$disconnect();

  const port = await freePort();
  const gateway = appProcess("gateway", { PORT: String(port), HOST: "127.0.0.1", QUEUE_PREFIX: `drain${port}` });
  await waitFor(() => new Promise<boolean>((res) => http.get(`http://127.0.0.1:${port}/status`, (r) => { r.resume(); res(r.statusCode === 200); }).on("error", () => res(false))), { timeoutMs: 30_000 });

  // An idle keep-alive connection (a request done, the connection kept for the next one).
  const idle = await RawClient.connect(port);
  idle.write("GET /status HTTP/1.1\r\nHost: t\r\n\r\n");
  const first = await idle.response();
  expect(first.status).toBe(200);
  expect(first.headers.connection).toBe("keep-alive");
  // A request still arriving: half its headers are in when SIGTERM comes.
  const arriving = await RawClient.connect(port);
  arriving.write("GET /status HTTP/1.1\r\nHost: t\r\n");
  // A request in flight: headers and half its body are in.
  const body = JSON.stringify({ signals: [{ id: `drain-${port}`, source: "x", topic: "draining", category: "tech", count: 1, observed_at: new Date().toISOString() }] });
  const inflight = await RawClient.connect(port);
  inflight.write(`POST /api/signals HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 20)}`);
  await sleep(300);

  gateway.child.kill("SIGTERM");
  await idle.waitClosed(5000); // closed at once, not kept for 25 s

  arriving.write("\r\n");
  const late = await arriving.response();
  expect(late.status).toBe(200);
  expect(late.headers.connection).toBe("close"); // go elsewhere for the next request
  await arriving.waitClosed(5000);

  inflight.write(body.slice(20));
  const done = await inflight.response();
  expect(done.status).toBe(202);
  expect(JSON.parse(done.body).accepted).toBe(1);
  expect(done.headers.connection).toBe("close");
  await inflight.waitClosed(5000);

  expect(await gateway.exited).toEqual({ code: 0, signal: null });
  await expect(RawClient.connect(port)).rejects.toThrow(/ECONNREFUSED/);
}, 60_000);
