// Webhook delivery benchmark, in one run on this machine:
// 1. Throughput: N deliveries drained by the real delivery worker (signatures on, SSRF guard on, execution rows and
//    delivery states written) versus a bare BullMQ worker that only POSTs and inserts a row in batches.
// 2. Latency: trend events published at a fixed rate through the whole path (trend_events row -> queue -> fan-out
//    with atomic cooldown -> delivery row -> queue -> signed POST), time from publish to receipt at the receiver.
import crypto from "node:crypto";
import fs from "node:fs";
import { fork, type ChildProcess } from "node:child_process";
import path from "node:path";
import { Queue } from "bullmq";
import pg from "pg";
import { QUEUES } from "@trendgate/contracts";
import { enqueueDeliveries, serializePayload, testPayload } from "@trendgate/connector-webhook";
import { SecretBox } from "@trendgate/crypto";
import { createAccount, createDb, newId } from "@trendgate/db";
import { generateSecret } from "@trendgate/delivery";
import { createRedis, Queues } from "@trendgate/queues";
import { publishTrendEvents } from "../packages/trends/src/events/publish.ts";
import { fmt, root } from "./lib.ts";

const N = Number(process.env.BENCH_DELIVERIES ?? 20_000);
const RATE = Number(process.env.BENCH_RATE ?? 1000);
const LATENCY_SECONDS = Number(process.env.BENCH_LATENCY_SECONDS ?? 10);
const RECEIVER_PORT = 3911;
const CONCURRENCY = process.env.BENCH_CONCURRENCY ?? "50"; // per worker process, the same on both sides
const SPLIT = process.env.BENCH_SPLIT === "1";

function start(entry: string, env: Record<string, string>): Promise<ChildProcess> {
  const prof = process.env.BENCH_PROFILE && entry.endsWith("main.ts") ? ["--cpu-prof", "--cpu-prof-dir=/tmp/prof"] : [];
  const child = fork(path.join(root, entry), [], { execArgv: ["--import", "tsx", ...prof], cwd: root, env: { ...process.env, ...env }, stdio: ["ignore", "ignore", "inherit", "ipc"] });
  return new Promise((resolve, reject) => {
    child.once("message", () => resolve(child));
    child.once("exit", (c) => reject(new Error(`${entry} exited with ${c}`)));
    if (entry.endsWith("main.ts")) setTimeout(() => resolve(child), 4000); // the real worker sends no message
  });
}
const stop = async (c: ChildProcess) => { if (c.exitCode === null) { const e = new Promise((r) => c.once("exit", r)); c.kill("SIGTERM"); await e; } };
const stats = async () => (await fetch(`http://127.0.0.1:${RECEIVER_PORT}/stats`)).json() as Promise<{ count: number; min: number; p50: number; p99: number; max: number; latencies: number }>;
const until = async (fn: () => Promise<boolean>, timeoutMs = 300_000, everyMs = 20) => {
  const end = Date.now() + timeoutMs;
  while (!(await fn())) { if (Date.now() > end) throw new Error("bench timed out"); await new Promise((r) => setTimeout(r, everyMs)); }
};

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

export async function benchWebhooks() {
  const prefix = `benchwh${Date.now()}`;
  const env = { QUEUE_PREFIX: prefix, NODE_ENV: "production", LOG_LEVEL: "warn", OUTBOUND_ALLOWLIST: "127.0.0.1", WEBHOOK_DESTINATION_CONCURRENCY: "1000", WEBHOOK_CONCURRENCY: CONCURRENCY };
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
  const body = serializePayload(testPayload(sub));

  let bareRate = 0, fullRate = 0, ok = 0;
  let full: ChildProcess;
  if (process.env.BENCH_SKIP_THROUGHPUT) {
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
  await stop(bare);

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
  }

  if (process.env.BENCH_SKIP_LATENCY) { console.log({ bareRate, fullRate, ok }); await stop(full); await stop(receiver); process.exit(0); }
  // 2. event-to-receipt latency at RATE events/s through the whole path (same worker process)
  await db.webhookSubscription.update({ where: { id: sub.id }, data: { thresholdValue: 1e6 } }); // only the latency subscription fires
  // BENCH_SPLIT=1: fan-out in a worker process of its own (--queues), as a deployment would run it.
  const fanout = SPLIT ? await start("apps/worker/src/main.ts", { ...env, WORKER_QUEUES: QUEUES.trendEvents }) : null;
  await mkSub("/latency");
  await fetch(`http://127.0.0.1:${RECEIVER_PORT}/reset`, { method: "POST" });
  // Open loop, like the detection job: every 10 ms, publish the events due by then as one batch (not waiting for
  // earlier batches), each stamped with its publish time. The first 2 s warm the path up and are not measured.
  await publishAtRate(RATE, 2);
  await until(async () => (await stats()).latencies >= RATE * 2, 120_000);
  await fetch(`http://127.0.0.1:${RECEIVER_PORT}/reset`, { method: "POST" });
  const { total, achievedRate } = await publishAtRate(RATE, LATENCY_SECONDS);
  await until(async () => (await stats()).latencies >= total, 120_000);
  const lat = await stats();
  await stop(full);
  if (fanout) await stop(fanout);
  await stop(receiver);

  async function publishAtRate(rate: number, seconds: number) {
  const total = rate * seconds;
  const tickMs = 10;
  let sent = 0;
  const inflight: Promise<unknown>[] = [];
  const pubStart = performance.now();
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - pubStart) / 1000) * rate) + 1);
    const batch = [];
    for (; sent < due; sent++) batch.push({
      id: `evt_${crypto.randomUUID()}`, account_id: account.id, type: "trend.velocity_changed" as const, trend_id: "bench", trend_name: "Bench trend",
      category: "bench/latency", severity: "high" as const, previous_severity: "medium" as const, velocity: 50, previous_velocity: 5, anomaly_score: 9,
      timestamp: new Date().toISOString(), summary: "bench", source_link: "https://trendgate.dev/b", recommended_next_steps: ["none"],
    });
    if (batch.length) inflight.push(publishTrendEvents({ db, queues }, batch));
    await new Promise((r) => setTimeout(r, tickMs));
  }
  await Promise.all(inflight);
  return { total, achievedRate: total / ((performance.now() - pubStart) / 1000) };
  }

  console.log(`\n## Webhook deliveries (${fmt(N)} deliveries, local receiver, worker concurrency ${CONCURRENCY} on both sides)`);
  console.log(`| side | deliveries/s |\n|---|---|`);
  console.log(`| bare BullMQ worker: POST + batched row insert | ${fmt(bareRate)} |`);
  console.log(`| Trendgate delivery worker: signed (2 schemes), SSRF guard, execution row + delivery state, batched | ${fmt(fullRate)} |`);
  console.log(`ratio: ${fmt((100 * fullRate) / bareRate, 1)} % (target >= 80 %); ${fmt(ok)} of ${fmt(N)} deliveries recorded succeeded`);
  console.log(`\n## Trend event -> webhook receipt latency at ${fmt(achievedRate)} events/s for ${LATENCY_SECONDS}s (${fmt(lat.latencies)} deliveries)`);
  console.log(`p50 ${lat.p50} ms, p99 ${lat.p99} ms, max ${lat.max} ms (target p99 < 100 ms at 1,000/s)`);
  if (process.env.BENCH_DEBUG) console.log(lat);

  await new Queue(QUEUES.webhookDeliveries, { connection: redis, prefix }).obliterate({ force: true });
  await new Queue(QUEUES.trendEvents, { connection: redis, prefix }).obliterate({ force: true });
  await new Queue("bench-bare", { connection: redis, prefix }).obliterate({ force: true });
  await db.webhookExecution.deleteMany({ where: { accountId: account.id } }); // no FK: a log
  await db.trendEventRecord.deleteMany({ where: { accountId: account.id } });
  await db.account.delete({ where: { id: account.id } });
  await pool.query("DROP TABLE bench.bare_deliveries");
  await pool.end();
  redis.disconnect();
  await db.$disconnect();
  return { bareRate, fullRate, p50: lat.p50, p99: lat.p99 };
}
