// Webhook delivery benchmark, in one run on this machine:
// 1. Throughput: N deliveries drained by the real delivery worker (signatures on, SSRF guard on, execution rows and
//    delivery states written) versus a bare BullMQ worker that only POSTs and inserts a row in batches.
// 2. Latency: trend events published at a fixed rate through the whole path (trend_events row -> queue -> fan-out
//    with atomic cooldown -> delivery row -> queue -> signed POST), time from publish to receipt at the receiver, next
//    to a bare BullMQ worker's enqueue-to-receipt at the same rate in the same run, CPU ms per event by process, and
//    the result measured before the CPU-per-delivery work (LATENCY_BEFORE).
// 3. Faults: deliveries spread over many subscriptions, drained by several worker processes, with 0 % and then 30 %
//    of attempts answered 500 (retried after 0.1 s): deliveries/s, attempts/s, attempts recorded vs sent, deadlocks.
// 4. Recovery: a few thousand pending deliveries whose jobs are gone (as after a Redis FLUSHALL), re-queued by the
//    outbox sweeper: rows/s.
// BENCH_WEBHOOK_PARTS=throughput,latency,faults,sweeper (the default) picks the parts.
import crypto from "node:crypto";
import fs from "node:fs";
import { fork, type ChildProcess } from "node:child_process";
import path from "node:path";
import { Queue } from "bullmq";
import pg from "pg";
import { QUEUES } from "@trendgate/contracts";
import { enqueueDeliveries, serializePayload, testPayload } from "@trendgate/webhooks";
import { SecretBox } from "@trendgate/crypto";
import { createAccount, createDb, newId, recordAttempts, type AttemptRecord } from "@trendgate/db";
import { generateSecret } from "@trendgate/delivery";
import { loadConfig } from "@trendgate/config";
import { createLogger } from "@trendgate/logger";
import { createRedis, Queues } from "@trendgate/queues";
import { publishTrendEvents } from "../packages/trends/src/events/publish.ts";
import { createWorkerDeps } from "../apps/worker/src/run-workers.ts";
import { OutboxSweeper } from "../apps/worker/src/sweepers/outbox-sweeper.ts";
import { APP_NODE_FLAGS, fmt, root, stopProcess, until } from "./lib.ts";

const N = Number(process.env.BENCH_DELIVERIES ?? 20_000);
const RATE = Number(process.env.BENCH_RATE ?? 1000);
const LATENCY_SECONDS = Number(process.env.BENCH_LATENCY_SECONDS ?? 10);
const RECEIVER_PORT = 3911;
const CONCURRENCY = process.env.BENCH_CONCURRENCY ?? "50"; // per worker process, the same on both sides
const SPLIT = process.env.BENCH_SPLIT === "1";
/** The latency section's result before the CPU-per-delivery work (that path no longer exists to re-run). */
const LATENCY_BEFORE = {
  date: "2026-11-24",
  text: "p50 2.3-5.6 s, p99 3.3-7.2 s over 4 runs (a backlog growing all run: about 1.9 CPU ms per event on the 2 cores, " +
    "Postgres 0.7 ms of it; every hot statement parsed and planned per call, a subscription update per attempt batch with nothing to change, " +
    "an empty transaction per fan-out job, 16 kernel random calls per id)",
};

function start(entry: string, env: Record<string, string>): Promise<ChildProcess> {
  const prof = process.env.BENCH_PROFILE && entry.endsWith("main.ts") ? ["--cpu-prof", "--cpu-prof-dir=/tmp/prof"] : [];
  // The worker runs as production runs it (npm start, Docker): its bundle under APP_NODE_FLAGS, not tsx. The bare
  // worker it is compared with gets the same Node options (garbage collection settings weigh on both alike).
  const opts = { cwd: root, env: { ...process.env, ...env }, stdio: ["ignore", "ignore", "inherit", "ipc"] as ("ignore" | "inherit" | "ipc")[] };
  const child = entry === "apps/worker/src/main.ts"
    ? fork(path.join(root, "dist/worker/main.mjs"), [], { ...opts, execArgv: [...APP_NODE_FLAGS, ...prof] })
    : fork(path.join(root, entry), [], { ...opts, execArgv: ["--import", "tsx", ...(entry.includes("bare-delivery-worker") ? APP_NODE_FLAGS : []), ...prof] });
  return new Promise((resolve, reject) => {
    child.once("message", () => resolve(child));
    child.once("exit", (c) => reject(new Error(`${entry} exited with ${c}`)));
    if (entry.endsWith("main.ts")) setTimeout(() => resolve(child), 4000); // the real worker sends no message
  });
}
const stats = async () => (await fetch(`http://127.0.0.1:${RECEIVER_PORT}/stats`)).json() as Promise<{ count: number; faultRequests: number; faultOk: number; min: number; p50: number; p99: number; max: number; latencies: number }>;

/** CPU seconds used since `before`, per process group (BENCH_DEBUG): where a delivery's cost goes. */
function cpuSnapshot(): Map<number, { comm: string; ticks: number }> {
  const out = new Map<number, { comm: string; ticks: number }>();
  for (const pid of fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(Number(pid), { comm, ticks: Number(f[11]) + Number(f[12]) });
    } catch { /* gone */ }
  }
  return out;
}
function cpuSince(before: Map<number, { comm: string; ticks: number }>, names: Record<number, string>) {
  const by: Record<string, number> = {};
  for (const [pid, now] of cpuSnapshot()) {
    const d = (now.ticks - (before.get(pid)?.ticks ?? 0)) / 100;
    if (d <= 0) continue;
    const k = names[pid] ?? (now.comm.startsWith("postgres") ? "postgres" : now.comm.startsWith("redis") ? "redis" : pid === process.pid ? "bench" : "other");
    by[k] = Math.round(((by[k] ?? 0) + d) * 100) / 100;
  }
  return by;
}

const PARTS = new Set((process.env.BENCH_WEBHOOK_PARTS ?? "throughput,latency,faults,sweeper").split(",").map((x) => x.trim()));
if (process.env.BENCH_SKIP_THROUGHPUT) PARTS.delete("throughput");
if (process.env.BENCH_SKIP_LATENCY) PARTS.delete("latency");

export async function benchWebhooks() {
  const prefix = `benchwh${Date.now()}`;
  const env = { QUEUE_PREFIX: prefix, NODE_ENV: "production", LOG_LEVEL: "warn", OUTBOUND_ALLOWLIST: "127.0.0.1", WEBHOOK_DESTINATION_CONCURRENCY: "1000", WEBHOOK_ENDPOINT_CONCURRENCY: "1000", WEBHOOK_CONCURRENCY: CONCURRENCY };
  const db = createDb(process.env.DATABASE_URL!);
  const redis = createRedis(process.env.REDIS_URL!, "client");
  const queues = new Queues(redis, prefix);
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
  await pool.query("CREATE SCHEMA IF NOT EXISTS bench"); // outside the app schema: never seen as migration drift
  await pool.query("CREATE TABLE IF NOT EXISTS bench.bare_deliveries (id text PRIMARY KEY, status int, created_at timestamptz DEFAULT now())");
  await pool.query("TRUNCATE bench.bare_deliveries");
  const receiver = await start("bench/servers/receiver.ts", { PORT: String(RECEIVER_PORT) });

  const account = await createAccount(db, "bench webhooks", "bench");
  const box = new SecretBox(process.env.ENCRYPTION_KEY!);
  const mkSub = (p: string, cooldown = 0) => db.webhookSubscription.create({
    data: { id: newId("wh"), accountId: account.id, url: `http://127.0.0.1:${RECEIVER_PORT}${p}`, triggerType: "trend_velocity", deliveryMode: "instant_stream", thresholdValue: 10, cooldownSeconds: cooldown, secretCiphertext: box.seal(generateSecret()) },
  });
  const sub = await mkSub("/throughput");
  const body = serializePayload(testPayload(sub, "http://localhost:3000"));
  const out: Record<string, unknown> = {};

  // Dead rows left by the earlier sections (and earlier runs, where autovacuum is off, as on this box) would make
  // every later query walk them: measure the code, not the bloat.
  const vacuum = () => pool.query("VACUUM (ANALYZE) webhook_deliveries, webhook_executions, webhook_subscriptions, trend_events");
  if (PARTS.has("throughput") || PARTS.has("latency")) {
  let bareRate = 0, fullRate = 0, ok = 0;
  let full: ChildProcess;
  if (!PARTS.has("throughput")) {
    full = await start("apps/worker/src/main.ts", { ...env, WORKER_QUEUES: SPLIT ? QUEUES.webhookDeliveries : `${QUEUES.webhookDeliveries},${QUEUES.trendEvents}` });
  } else {
  // 1a. bare worker
  const bare = await start("bench/servers/bare-delivery-worker.ts", { ...env, RECEIVER_URL: `http://127.0.0.1:${RECEIVER_PORT}/bare` });
  const bareQ = new Queue("bench-bare", { connection: redis, prefix });
  await fetch(`http://127.0.0.1:${RECEIVER_PORT}/reset`, { method: "POST" });
  let cpu0 = cpuSnapshot();
  let t0 = performance.now();
  for (let i = 0; i < N; i += 1000) await bareQ.addBulk(Array.from({ length: Math.min(1000, N - i) }, (_, j) => ({ name: "d", data: { body }, opts: { jobId: `b${i + j}`, removeOnComplete: true } })));
  await until(async () => (await stats()).count >= N); // cheap to poll; then the rows, which land right after
  await until(async () => Number((await pool.query("SELECT count(*) FROM bench.bare_deliveries")).rows[0].count) >= N, 60_000, 20);
  bareRate = N / ((performance.now() - t0) / 1000);
  if (process.env.BENCH_DEBUG) console.log("bare CPU s", cpuSince(cpu0, { [bare.pid!]: "worker", [receiver.pid!]: "receiver" }));
  await stopProcess(bare);

  // 1b. the real delivery worker, on pre-written outbox rows
  const ids = Array.from({ length: N }, () => newId("msg"));
  for (let i = 0; i < N; i += 2000) {
    await db.webhookDelivery.createMany({ data: ids.slice(i, i + 2000).map((id) => ({ id, accountId: account.id, subscriptionId: sub.id, trigger: "test", payload: JSON.parse(body), nextAttemptAt: new Date() })) });
  }
  full = await start("apps/worker/src/main.ts", { ...env, WORKER_QUEUES: SPLIT ? QUEUES.webhookDeliveries : `${QUEUES.webhookDeliveries},${QUEUES.trendEvents}` });
  await fetch(`http://127.0.0.1:${RECEIVER_PORT}/reset`, { method: "POST" });
  cpu0 = cpuSnapshot();
  t0 = performance.now();
  for (let i = 0; i < N; i += 1000) // the fan-out's own enqueue path
    await enqueueDeliveries(queues, ids.slice(i, i + 1000).map((id) => ({ job: { delivery_id: id, webhook_id: sub.id, attempt: 1, trigger: "test", body }, delayMs: 0 })));
  await until(async () => (await stats()).count >= N);
  await until(async () => (await db.webhookExecution.count({ where: { subscriptionId: sub.id } })) >= N, 60_000, 20);
  fullRate = N / ((performance.now() - t0) / 1000);
  if (process.env.BENCH_DEBUG) console.log("full CPU s", cpuSince(cpu0, { [full.pid!]: "worker", [receiver.pid!]: "receiver" }));
  ok = await db.webhookDelivery.count({ where: { subscriptionId: sub.id, status: "succeeded" } });
  console.log(`\n## Webhook deliveries (${fmt(N)} deliveries, local receiver, worker concurrency ${CONCURRENCY} on both sides)`);
  console.log(`| side | deliveries/s |\n|---|---|`);
  console.log(`| bare BullMQ worker: POST + batched row insert | ${fmt(bareRate)} |`);
  console.log(`| Trendgate delivery worker: signed (2 schemes), SSRF guard, execution row + delivery state, batched | ${fmt(fullRate)} |`);
  console.log(`ratio: ${fmt((100 * fullRate) / bareRate, 1)} % (target >= 80 %); ${fmt(ok)} of ${fmt(N)} deliveries recorded succeeded`);
  Object.assign(out, { bareRate, fullRate });
  }

  if (PARTS.has("latency")) {
  // 2a. The floor: a bare BullMQ worker (POST + batched row insert, as in 1a) fed at the same rate, enqueue -> receipt.
  const bareLat = process.env.BENCH_SKIP_BARE_LATENCY ? null : await bareLatency();
  // 2b. event-to-receipt latency at RATE events/s through the whole path (same worker process)
  await vacuum();
  await db.webhookSubscription.update({ where: { id: sub.id }, data: { thresholdValue: 1e6 } }); // only the latency subscription fires
  // BENCH_SPLIT=1: fan-out in a worker process of its own (--queues), as a deployment would run it.
  const fanout = SPLIT ? await start("apps/worker/src/main.ts", { ...env, WORKER_QUEUES: QUEUES.trendEvents }) : null;
  const latencySub = await mkSub("/latency");
  await fetch(`http://127.0.0.1:${RECEIVER_PORT}/reset`, { method: "POST" });
  // Open loop, like the detection job: every 10 ms, publish the events due by then as one batch (not waiting for
  // earlier batches), each stamped with its publish time. The first 2 s warm the path up and are not measured.
  await publishAtRate(RATE, 2);
  await until(async () => (await stats()).latencies >= RATE * 2, 120_000);
  await fetch(`http://127.0.0.1:${RECEIVER_PORT}/reset`, { method: "POST" });
  const cpu0 = cpuSnapshot();
  const depths: string[] = []; // BENCH_DEBUG: waiting jobs per queue each second, to tell which stage falls behind
  const sampler = process.env.BENCH_DEBUG ? setInterval(() => void Promise.all([QUEUES.trendEvents, QUEUES.webhookDeliveries].map((q) => queues.get(q).getWaitingCount()))
    .then(([t, d]) => depths.push(`${t}/${d}`)).catch(() => {}), 1000) : null;
  const { total, achievedRate } = await publishAtRate(RATE, LATENCY_SECONDS);
  await until(async () => (await stats()).latencies >= total, 120_000);
  const lat = await stats();
  if (sampler) clearInterval(sampler);
  if (process.env.BENCH_DEBUG) console.log(`waiting jobs each second (trend-events/webhook-deliveries): ${depths.join(" ")}`);
  const cpu = cpuSince(cpu0, { [full.pid!]: "worker", [receiver.pid!]: "receiver", ...(fanout ? { [fanout.pid!]: "fanout" } : {}) });
  const perEvent = (k: string) => fmt((1000 * (cpu[k] ?? 0)) / total, 2);
  if (fanout) await stopProcess(fanout);
  console.log(`\n## Trend event -> webhook receipt latency at ${fmt(achievedRate)} events/s for ${LATENCY_SECONDS}s (${fmt(lat.latencies)} deliveries)`);
  console.log(`p50 ${lat.p50} ms, p99 ${lat.p99} ms, max ${lat.max} ms (target p99 < 100 ms at 1,000/s)`);
  console.log(`CPU ms per event: worker ${perEvent("worker")}${fanout ? `, fan-out worker ${perEvent("fanout")}` : ""}, Postgres ${perEvent("postgres")}, Redis ${perEvent("redis")}, ` +
    `publisher (this process) ${perEvent("bench")}, receiver ${perEvent("receiver")}; other processes on the machine meanwhile: ${fmt(cpu.other ?? 0, 1)} CPU s`);
  if (bareLat) console.log(`same run, bare BullMQ worker (enqueue -> POST, no fan-out, signing or records): p50 ${bareLat.p50} ms, p99 ${bareLat.p99} ms, max ${bareLat.max} ms`);
  console.log(`before this path's CPU work (measured ${LATENCY_BEFORE.date}, same bench, 1,000/s): ${LATENCY_BEFORE.text}`);
  if (process.env.BENCH_DEBUG) {
    console.log(lat);
    const tl = await (await fetch(`http://127.0.0.1:${RECEIVER_PORT}/timeline?ms=250`)).json() as { ms: number; worst: Array<number | null> };
    console.log(`worst latency per ${tl.ms} ms of publish time: ${tl.worst.join(" ")}`);
    console.log(await stageTimes(latencySub.id, total));
  }
  Object.assign(out, { p50: lat.p50, p99: lat.p99, bareP50: bareLat?.p50, bareP99: bareLat?.p99 });
  }
  await stopProcess(full);
  }

  if (PARTS.has("faults")) { await vacuum(); Object.assign(out, await benchFaults()); }
  if (PARTS.has("sweeper")) { await vacuum(); Object.assign(out, await benchSweeper()); }
  await stopProcess(receiver);

  /** A bare BullMQ worker fed `RATE` jobs/s (each body stamped with its enqueue time), after a 2 s warm-up. */
  async function bareLatency() {
    const bare = await start("bench/servers/bare-delivery-worker.ts", { ...env, RECEIVER_URL: `http://127.0.0.1:${RECEIVER_PORT}/latency` });
    const bareQ = new Queue("bench-bare", { connection: redis, prefix });
    let n = 0;
    const addBatch = (k: number) => {
      const timestamp = new Date().toISOString(); // what the receiver measures from, as for trend events
      return bareQ.addBulk(Array.from({ length: k }, () => ({ name: "d", data: { body: JSON.stringify({ timestamp }) }, opts: { jobId: `l${n++}`, removeOnComplete: true } })));
    };
    await fetch(`http://127.0.0.1:${RECEIVER_PORT}/reset`, { method: "POST" });
    await atRate(RATE, 2, addBatch);
    await until(async () => (await stats()).latencies >= RATE * 2, 60_000);
    await fetch(`http://127.0.0.1:${RECEIVER_PORT}/reset`, { method: "POST" });
    const { total } = await atRate(RATE, LATENCY_SECONDS, addBatch);
    await until(async () => (await stats()).latencies >= total, 60_000);
    const s = await stats();
    await stopProcess(bare);
    await bareQ.close();
    return s;
  }

  /**
   * BENCH_DEBUG: where an event's time goes, from the timestamps the path stores (each row's created_at is its
   * transaction's start): publish -> trend_events row, -> fan-out's delivery row, -> mark dispatched, -> attempt record.
   */
  async function stageTimes(subscriptionId: string, last: number) {
    const { rows } = await pool.query(`
      WITH j AS (
        SELECT (te.payload->>'timestamp')::timestamptz AT TIME ZONE 'UTC' AS ts, te.created_at AS te_at, te.dispatched_at, wd.created_at AS wd_at, x.created_at AS ex_at, x.duration_ms
        FROM webhook_deliveries wd JOIN trend_events te ON te.id = wd.event_id JOIN webhook_executions x ON x.delivery_id = wd.id
        WHERE wd.subscription_id = $1 ORDER BY wd.created_at DESC LIMIT $2)
      SELECT s, percentile_disc(0.5) WITHIN GROUP (ORDER BY v) AS p50, percentile_disc(0.99) WITHIN GROUP (ORDER BY v) AS p99, max(v) AS max FROM (
        SELECT 1 AS o, 'publish -> event row' AS s, extract(epoch FROM te_at - ts) * 1000 AS v FROM j UNION ALL
        SELECT 2, 'event row -> delivery row (fan-out)', extract(epoch FROM wd_at - te_at) * 1000 FROM j UNION ALL
        SELECT 3, 'delivery row -> event marked dispatched', extract(epoch FROM dispatched_at - wd_at) * 1000 FROM j UNION ALL
        SELECT 4, 'delivery row -> attempt record', extract(epoch FROM ex_at - wd_at) * 1000 FROM j UNION ALL
        SELECT 5, 'request duration', duration_ms FROM j) q GROUP BY o, s ORDER BY o`, [subscriptionId, last]);
    return `stage ms (p50 / p99 / max):\n${rows.map((r) => `  ${r.s}: ${Math.round(r.p50)} / ${Math.round(r.p99)} / ${Math.round(r.max)}`).join("\n")}`;
  }

  /** Open loop: every 10 ms, `send` the items due by then (not waiting for earlier batches). */
  async function atRate(rate: number, seconds: number, send: (k: number) => Promise<unknown>) {
    const total = rate * seconds;
    let sent = 0;
    const inflight: Promise<unknown>[] = [];
    const t0 = performance.now();
    while (sent < total) {
      const due = Math.min(total, Math.floor(((performance.now() - t0) / 1000) * rate) + 1);
      if (due > sent) inflight.push(send(due - sent));
      sent = due;
      await new Promise((r) => setTimeout(r, 10));
    }
    await Promise.all(inflight);
    return { total, achievedRate: total / ((performance.now() - t0) / 1000) };
  }

  /** Trend events at `rate`/s, each batch published as the detection job does, each event stamped with its publish time. */
  function publishAtRate(rate: number, seconds: number) {
    return atRate(rate, seconds, (k) => publishTrendEvents({ db, queues }, Array.from({ length: k }, () => ({
      id: `evt_${crypto.randomUUID()}`, account_id: account.id, type: "trend.velocity_changed" as const, trend_id: "bench", trend_name: "Bench trend",
      category: "bench/latency", severity: "high" as const, previous_severity: "medium" as const, velocity: 50, previous_velocity: 5, anomaly_score: 9,
      timestamp: new Date().toISOString(), summary: "bench", source_link: "https://trendgate.dev/b", recommended_next_steps: ["none"],
    }))));
  }

  /**
   * 3. Deliveries over many subscriptions, several worker processes, with 0 % and 30 % of attempts failing (500,
   * retried after 0.1 s): what a fleet sees when many receivers fail at once. Counts attempts sent (at the receiver)
   * against attempts recorded (execution rows) and Postgres' own deadlock counter for this database.
   */
  async function benchFaults() {
    const n = Number(process.env.BENCH_FAULT_DELIVERIES ?? 10_000);
    const subCount = Number(process.env.BENCH_FAULT_SUBSCRIPTIONS ?? 50);
    const workerCount = Number(process.env.BENCH_FAULT_WORKERS ?? 2);
    const timeoutMs = Number(process.env.BENCH_FAULT_TIMEOUT_SECONDS ?? 90) * 1000;
    const wenv = {
      ...env, WORKER_QUEUES: QUEUES.webhookDeliveries, WEBHOOK_RETRY_JITTER: "0",
      WEBHOOK_RETRY_SCHEDULE_SECONDS: Array.from({ length: 8 }, () => "0.1").join(","),
    };
    const workers = await Promise.all(Array.from({ length: workerCount }, () => start("apps/worker/src/main.ts", wenv)));
    const deadlocks = async () => Number((await pool.query("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()")).rows[0].deadlocks);
    const rows: Record<string, number | string>[] = [];
    for (const pct of [0, 30]) {
      const subs = await Promise.all(Array.from({ length: subCount }, (_, i) => mkSub(`/fault/${pct}/${i}`)));
      const subIds = subs.map((s) => s.id);
      const ids = Array.from({ length: n }, () => newId("msg"));
      for (let i = 0; i < n; i += 2000) {
        await db.webhookDelivery.createMany({ data: ids.slice(i, i + 2000).map((id, j) => ({ id, accountId: account.id, subscriptionId: subIds[(i + j) % subCount], trigger: "test", payload: JSON.parse(body), nextAttemptAt: new Date() })) });
      }
      await fetch(`http://127.0.0.1:${RECEIVER_PORT}/reset`, { method: "POST" });
      const dl0 = await deadlocks();
      const finished = async () => Number((await pool.query(
        "SELECT count(*) FROM webhook_deliveries WHERE subscription_id = ANY($1) AND status <> 'pending'", [subIds])).rows[0].count);
      const t0 = performance.now();
      for (let i = 0; i < n; i += 1000)
        await enqueueDeliveries(queues, ids.slice(i, i + 1000).map((id, j) => ({ job: { delivery_id: id, webhook_id: subIds[(i + j) % subCount], attempt: 1, trigger: "test", body }, delayMs: 0 })));
      let done = 0;
      const end = Date.now() + timeoutMs;
      while ((done = await finished()) < n && Date.now() < end) await new Promise((r) => setTimeout(r, 200));
      const seconds = (performance.now() - t0) / 1000;
      const sentAtEnd = (await stats()).faultRequests;
      await new Promise((r) => setTimeout(r, 1500)); // records of the last attempts; Postgres publishes its counters
      const rec = (await pool.query(
        "SELECT count(*) AS executions, count(DISTINCT (delivery_id, attempt)) AS distinct_attempts FROM webhook_executions WHERE subscription_id = ANY($1)", [subIds])).rows[0];
      const st = await stats();
      rows.push({
        failing: `${pct} %`, deliveries: `${fmt(done)} of ${fmt(n)}${done < n ? ` (stopped after ${timeoutMs / 1000} s)` : ""}`,
        deliveriesPerSecond: fmt(done / seconds), attemptsPerSecond: fmt(sentAtEnd / seconds),
        sent: fmt(st.faultRequests), recorded: fmt(Number(rec.executions)), duplicates: fmt(st.faultRequests - Number(rec.distinct_attempts)),
        deadlocks: fmt((await deadlocks()) - dl0),
      });
      await queues.get(QUEUES.webhookDeliveries).drain(true).catch(() => {}); // an unfinished (timed out) run leaves jobs
    }
    await Promise.all(workers.map((c) => stopProcess(c)));
    const contention = await benchRecordContention();
    console.log(`\n## Deliveries under failures (${fmt(n)} deliveries over ${subCount} subscriptions, ${workerCount} worker processes x concurrency ${CONCURRENCY}; failed attempts retried after 0.1 s)`);
    console.log("| failing attempts | deliveries finished | deliveries/s | attempts/s | attempts sent | attempts recorded | sent more than once | deadlocks |\n|---|---|---|---|---|---|---|---|");
    for (const r of rows) console.log(`| ${r.failing} | ${r.deliveries} | ${r.deliveriesPerSecond} | ${r.attemptsPerSecond} | ${r.sent} | ${r.recorded} | ${r.duplicates} | ${r.deadlocks} |`);
    console.log("(with 30 % failing, a delivery needs 1/0.7 = 1.43 attempts on average: equal attempts/s means failures cost nothing but the retries themselves)");
    console.log(`\nAttempt batches written at once (${contention.concurrent} at a time x ${contention.rounds} rounds, ${contention.perBatch} attempts each over ${contention.subscriptions} shared subscriptions, 30 % failed): ` +
      `${fmt(contention.batchesPerSecond, 1)} batches/s, ${contention.failed} of ${contention.batches} failed (${contention.deadlocks} deadlocks)`);
    return { faults: rows, contention };
  }

  /**
   * The attempt-record statement under contention, without HTTP: batches written at once by as many writers, each
   * over a random half of the same subscriptions, so that they change the same subscriptions' state at the same time
   * (what a fleet's batch writers do when many endpoints fail at once). Failed batches are what turned into
   * duplicate sends and missing attempts.
   */
  async function benchRecordContention() {
    const concurrent = 8, rounds = 30, perBatch = 50, subscriptions = 100;
    const subs = Array.from({ length: subscriptions }, () => newId("wh"));
    await db.webhookSubscription.createMany({ data: subs.map((id) => ({ id, accountId: account.id, url: "http://127.0.0.1:1/contention", triggerType: "trend_velocity", deliveryMode: "instant_stream", thresholdValue: 1e6, cooldownSeconds: 0, secretCiphertext: "x" })) });
    const shuffled = () => { const a = [...subs]; for (let i = a.length - 1; i > 0; i--) { const j = Math.floor(Math.random() * (i + 1)); [a[i], a[j]] = [a[j], a[i]]; } return a; };
    const attempt = (sub: string): AttemptRecord => {
      const ok = Math.random() < 0.7;
      return {
        execution: { id: newId("exe"), accountId: account.id, subscriptionId: sub, deliveryId: newId("msg"), attempt: 1, trigger: "test", outcome: ok ? "succeeded" : "retrying",
          requestUrl: "http://127.0.0.1:1/contention", requestHeaders: {}, requestBodyBytes: 1, responseStatus: ok ? 204 : 500, responseBody: "", responseBodyTruncated: false,
          durationMs: 1, errorClass: ok ? null : "http_5xx", errorMessage: ok ? null : "HTTP 500", nextRetryAt: null },
        delivery: { status: ok ? "succeeded" : "pending", attempts: 1, nextAttemptAt: new Date(), lastError: null },
      };
    };
    let failed = 0, deadlocks = 0;
    const t0 = performance.now();
    for (let r = 0; r < rounds; r++) {
      await Promise.all(Array.from({ length: concurrent }, () => recordAttempts(db, shuffled().slice(0, perBatch).map(attempt), 432_000)
        .catch((e) => { failed++; if (/deadlock/.test(String(e))) deadlocks++; })));
    }
    const seconds = (performance.now() - t0) / 1000;
    return { concurrent, rounds, perBatch, subscriptions, batches: concurrent * rounds, failed, deadlocks, batchesPerSecond: (concurrent * rounds) / seconds };
  }

  /**
   * 4. Recovery after a Redis loss: BENCH_SWEEP_ROWS pending deliveries overdue with no job in Redis, re-queued by
   * the outbox sweeper (called back to back, in this process, as a worker's timer would call it).
   */
  async function benchSweeper() {
    const m = Number(process.env.BENCH_SWEEP_ROWS ?? 5000);
    const timeoutMs = Number(process.env.BENCH_SWEEP_TIMEOUT_SECONDS ?? 120) * 1000;
    const config = loadConfig({ ...process.env, QUEUE_PREFIX: `${prefix}sw`, SWEEP_GRACE_SECONDS: "0" });
    const deps = createWorkerDeps(config, createLogger({ level: "silent" }));
    const target = await mkSub("/sweep");
    const ids = Array.from({ length: m }, () => newId("msg"));
    const due = new Date(Date.now() - 60_000);
    for (let i = 0; i < m; i += 2000) {
      await db.webhookDelivery.createMany({ data: ids.slice(i, i + 2000).map((id, j) => ({
        id, accountId: account.id, subscriptionId: target.id, trigger: "test", payload: JSON.parse(body), nextAttemptAt: due, attempts: (i + j) % 4 === 0 ? 1 : 0,
      })) });
    }
    const sweeper = new OutboxSweeper(deps, { deliveries: true, events: false });
    const q = deps.queues.get(QUEUES.webhookDeliveries);
    // Passes back to back until every row has its job, a pass re-queues nothing (no progress), or the time is up.
    // Nothing consumes the queue here, so the rate is the sweeper's own, not the delivery workers'.
    const t0 = performance.now();
    let passes = 0, requeued = 0, sweepingMs = 0, stalled = false;
    while (requeued < m && performance.now() - t0 < timeoutMs) {
      const p0 = performance.now();
      const n = (await sweeper.sweep()).deliveries;
      passes++;
      if (n === 0) { stalled = true; break; }
      sweepingMs += performance.now() - p0;
      requeued += n;
    }
    const queued = await q.getWaitingCount();
    const t1 = performance.now();
    await sweeper.sweep(); // every row found has its job now: a pass that finds nothing to do
    const idleMs = performance.now() - t1;
    console.log(`\n## Recovery: ${fmt(m)} overdue deliveries with no job (as after a Redis FLUSHALL), re-queued by the outbox sweeper`);
    console.log(`${fmt(queued)} of ${fmt(m)} re-queued in ${fmt(sweepingMs / 1000, 2)} s of sweeping (${passes} passes): ${fmt(requeued / (sweepingMs / 1000))} rows/s` +
      (stalled && queued < m ? `; then a pass re-queued nothing (stuck on rows already queued, until workers send them)` : "") +
      `; the next pass, with nothing to do: ${fmt(idleMs)} ms`);
    const seconds = sweepingMs / 1000;
    await q.obliterate({ force: true });
    await deps.queues.close();
    deps.queues.connection.disconnect();
    await deps.db.$disconnect();
    return { sweepRowsPerSecond: requeued / seconds };
  }

  await queues.get(QUEUES.webhookDeliveries).obliterate({ force: true });
  await queues.get(QUEUES.trendEvents).obliterate({ force: true });
  await new Queue("bench-bare", { connection: redis, prefix }).obliterate({ force: true });
  await db.webhookExecution.deleteMany({ where: { accountId: account.id } }); // no FK: a log
  await db.trendEventRecord.deleteMany({ where: { accountId: account.id } });
  await db.account.delete({ where: { id: account.id } });
  await pool.query("DROP TABLE bench.bare_deliveries");
  await pool.end();
  redis.disconnect();
  await db.$disconnect();
  return out;
}
