// Fleet benchmark: how work spreads over worker processes on this machine. Each side is measured with
// 1, 2 and 4 real worker processes (apps/worker/src/main.ts, forked as bench/webhooks.ts does), against the
// 1-process number of the same run:
// (a) webhook deliveries/s: BENCH_FLEET_DELIVERIES (12,000) queued deliveries to one subscription on a local
//     receiver (bench/servers/receiver.ts), drained by processes running only `webhook-deliveries`;
// (b) detection: one pass over BENCH_FLEET_TOPICS (10000,100000) active topics x the default history of hourly buckets, as shard
//     jobs of BENCH_FLEET_SHARD_TOPICS (2,000, DETECTION_SHARD_TOPICS) topics on `trend-detection`: cold (no series
//     cache: the pass builds it) then warm (the next pass).
// Timing starts once every process has its queue's worker connected (start-up is not counted).
// BENCH_FLEET_PARTS=webhooks,detection and BENCH_FLEET_PROCESSES=1,2,4 pick what runs; BENCH_FLEET_PASS_TIMEOUT_SECONDS
// (300) bounds a run. The processes' log lines go to $TMPDIR/bench-fleet-workers.log. A 100,000-topic size takes ~10
// min here (seeding 16.9 M rows ~4 min, each cold pass ~2 min).
import type { ChildProcess } from "node:child_process";
import { fork } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { QUEUES, type QueueName } from "@trendgate/contracts";
import { enqueueDeliveries, serializePayload, testPayload } from "@trendgate/webhooks";
import { SecretBox } from "@trendgate/crypto";
import { createAccount, createDb, newId } from "@trendgate/db";
import { generateSecret } from "@trendgate/delivery";
import { createRedis, isCluster, masters, Queues } from "@trendgate/queues";
import { DEFAULT_DETECTION_CONFIG } from "@trendgate/trends";
import { DETECTION_SCHEDULER_ID } from "../apps/worker/src/schedulers/index.ts";
import { fmt, peakRssMb, root, stopProcess, until } from "./lib.ts";

const list = (v: string | undefined, d: string) => (v ?? d).split(",").map((x) => x.trim()).filter(Boolean);
const PARTS = new Set(list(process.env.BENCH_FLEET_PARTS, "webhooks,detection"));
const PROCESSES = list(process.env.BENCH_FLEET_PROCESSES, "1,2,4").map(Number);
const DELIVERIES = Number(process.env.BENCH_FLEET_DELIVERIES ?? 12_000);
const TOPICS = list(process.env.BENCH_FLEET_TOPICS, "10000,100000").map(Number);
const SHARD_TOPICS = Number(process.env.BENCH_FLEET_SHARD_TOPICS ?? 2000);
const PASS_TIMEOUT_MS = Number(process.env.BENCH_FLEET_PASS_TIMEOUT_SECONDS ?? 300) * 1000;
const RECEIVER_PORT = 3913;
const HOUR = 3600_000;
const DAY_MS = 86_400_000;

/** A TypeScript entry point in its own process (tsx); resolves at its first IPC message (the receiver's "ready"). */
function forkTs(entry: string, env: Record<string, string>): ChildProcess {
  return fork(path.join(root, entry), [], { execArgv: ["--import", "tsx"], cwd: root, env: { ...process.env, ...env }, stdio: ["ignore", workerLogFd, "inherit", "ipc"] });
}
/** The processes' own log lines (warnings and errors), apart from the tables: named in any failure. */
const workerLog = path.join(os.tmpdir(), "bench-fleet-workers.log");
let workerLogFd: number | "ignore" = "ignore";

export async function benchFleet() {
  const cpus = os.cpus().length;
  workerLogFd = fs.openSync(workerLog, "w");
  const prefix = `benchfl${Date.now()}`;
  const db = createDb(process.env.DATABASE_URL!);
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
  const redis = createRedis(process.env.REDIS_URL!, "client");
  const queues = new Queues(redis, prefix);
  const base = { QUEUE_PREFIX: prefix, NODE_ENV: "production", LOG_LEVEL: "warn" };
  const live = new Set<ChildProcess>(); // stopped in `finally`, whatever failed
  const accounts: string[] = [];
  const out: Record<string, unknown> = { cpus };
  const warmGuess = (cold: number) => cold / 2;
  let seededLast = 0; // ms: the last closed bucket the current seed ends with (see sameHour)

  /** `n` worker processes; resolves once each has its BullMQ worker connected to `queue` (CLIENT LIST names). */
  async function startFleet(n: number, queue: QueueName, env: Record<string, string>) {
    const q = queues.get(queue);
    const before = await q.getWorkersCount();
    const children = Array.from({ length: n }, () => forkTs("apps/worker/src/main.ts", { ...base, ...env, WORKER_QUEUES: queue }));
    for (const c of children) live.add(c);
    await until(async () => {
      const dead = children.find((c) => c.exitCode !== null || c.signalCode !== null);
      if (dead) throw new Error(`a worker process exited at start-up (code ${dead.exitCode}, signal ${dead.signalCode})`);
      return (await q.getWorkersCount()) - before >= n;
    }, 120_000, 100, `${n} worker processes did not connect within 120 s`);
    return children;
  }
  async function stopFleet(children: ChildProcess[]) {
    const rss = Math.max(...children.map((c) => peakRssMb(c.pid)));
    await Promise.all(children.map(stopProcess));
    for (const c of children) live.delete(c);
    return rss;
  }
  /** Throws when a worker died mid-run (a crash or out of memory), instead of waiting for the time-out. */
  const alive = (children: ChildProcess[]) => {
    const dead = children.find((c) => c.exitCode !== null || c.signalCode !== null);
    if (dead) throw new Error(`worker process ${dead.pid} exited mid-run (code ${dead.exitCode}, signal ${dead.signalCode})`);
  };
  const speedup = (x: number, x1: number) => `${fmt(x / x1, 2)}x`;

  console.log(`\n## Fleet: 1, 2 and 4 worker processes on this machine (os.cpus().length = ${cpus})`);
  console.log(`This machine has ${cpus} cores, shared by the worker processes, Postgres, Redis, the receiver and this process: ` +
    `the curve is expected to flatten at ${cpus} processes (more processes only share the same cores). ` +
    `Load average at the start: ${os.loadavg().map((l) => fmt(l, 1)).join(", ")} (other work on the box skews every number). ` +
    `Redis: ${isCluster(process.env.REDIS_URL!) ? `a Redis Cluster (${process.env.REDIS_URL})` : "one server"}.`);
  try {
    if (PARTS.has("webhooks")) out.webhooks = await webhooks();
    if (PARTS.has("detection")) out.detection = await detection();
  } finally {
    for (const c of live) await stopProcess(c).catch(() => {});
    await cleanup().catch((e) => console.error("fleet cleanup failed:", e));
    if (typeof workerLogFd === "number") fs.closeSync(workerLogFd);
  }
  return out;

  // (a) Deliveries: a fresh subscription and N pending delivery rows per run (written once the workers are up, so
  // no sweep sees them overdue), then their jobs through the fan-out's own enqueue path; timed until the receiver has
  // every request and every attempt is recorded.
  async function webhooks() {
    const receiver = forkTs("bench/servers/receiver.ts", { PORT: String(RECEIVER_PORT) });
    live.add(receiver);
    await new Promise<void>((resolve, reject) => {
      receiver.once("message", () => resolve());
      receiver.once("exit", (c) => reject(new Error(`receiver exited with ${c}`)));
    });
    const stats = async () => (await (await fetch(`http://127.0.0.1:${RECEIVER_PORT}/stats`)).json()) as { count: number };
    const account = await createAccount(db, "bench fleet webhooks", "bench");
    accounts.push(account.id);
    const box = new SecretBox(process.env.ENCRYPTION_KEY!);
    const env = { OUTBOUND_ALLOWLIST: "127.0.0.1", WEBHOOK_DESTINATION_CONCURRENCY: "1000", WEBHOOK_ENDPOINT_CONCURRENCY: "1000" };
    const concurrency = process.env.WEBHOOK_CONCURRENCY ?? "50"; // the default, per process
    const rows: { procs: number; rate: number; seconds: number; ok: number; received: number; rss: number }[] = [];
    for (const procs of PROCESSES) {
      const sub = await db.webhookSubscription.create({
        data: { id: newId("wh"), accountId: account.id, url: `http://127.0.0.1:${RECEIVER_PORT}/fleet/${procs}`, triggerType: "trend_velocity", deliveryMode: "instant_stream", thresholdValue: 1e6, cooldownSeconds: 0, secretCiphertext: box.seal(generateSecret()) },
      });
      const body = serializePayload(testPayload(sub, "http://localhost:3000"));
      const workers = await startFleet(procs, QUEUES.webhookDeliveries, env);
      const ids = Array.from({ length: DELIVERIES }, () => newId("msg"));
      for (let i = 0; i < DELIVERIES; i += 2000) {
        await db.webhookDelivery.createMany({ data: ids.slice(i, i + 2000).map((id) => ({ id, accountId: account.id, subscriptionId: sub.id, trigger: "test", payload: JSON.parse(body), nextAttemptAt: new Date() })) });
      }
      await fetch(`http://127.0.0.1:${RECEIVER_PORT}/reset`, { method: "POST" });
      const t0 = performance.now();
      for (let i = 0; i < DELIVERIES; i += 1000)
        await enqueueDeliveries(queues, ids.slice(i, i + 1000).map((id) => ({ job: { delivery_id: id, webhook_id: sub.id, attempt: 1, trigger: "test", body }, delayMs: 0 })));
      // Drained: every delivery's attempt recorded (its row no longer pending).
      const finished = async () => Number((await pool.query("SELECT count(*) FROM webhook_deliveries WHERE subscription_id = $1 AND status <> 'pending'", [sub.id])).rows[0].count);
      try {
        await until(async () => { alive(workers); return (await finished()) >= DELIVERIES; }, PASS_TIMEOUT_MS, 50, `deliveries: ${procs} processes did not finish ${DELIVERIES} within the time-out`);
      } catch (e) {
        const executions = await db.webhookExecution.count({ where: { subscriptionId: sub.id } });
        throw new Error(`${(e as Error).message}: ${await finished()} finished, ${executions} attempts recorded, ${(await stats()).count} requests received (worker logs: ${workerLog})`);
      }
      const seconds = (performance.now() - t0) / 1000;
      const received = (await stats()).count;
      const rss = await stopFleet(workers);
      const ok = await db.webhookDelivery.count({ where: { subscriptionId: sub.id, status: "succeeded" } });
      rows.push({ procs, rate: DELIVERIES / seconds, seconds, ok, received, rss });
    }
    await stopProcess(receiver);
    live.delete(receiver);
    const one = rows[0];
    console.log(`\n### Webhook deliveries (${fmt(DELIVERIES)} per run to one subscription on a local receiver; WEBHOOK_CONCURRENCY ${concurrency} per process)`);
    console.log(`| worker processes | deliveries/s | speed-up vs ${one.procs} | seconds | recorded succeeded | requests received | peak RSS per process (MB) |\n|---|---|---|---|---|---|---|`);
    for (const r of rows) console.log(`| ${r.procs} | ${fmt(r.rate)} | ${speedup(r.rate, one.rate)} | ${fmt(r.seconds, 1)} | ${fmt(r.ok)} of ${fmt(DELIVERIES)} | ${fmt(r.received)} | ${fmt(r.rss)} |`);
    return rows;
  }

  // (b) Detection: topics of a bench account, seeded as bench/trends.ts does (the default history of hourly buckets ending with the
  // last closed hour, 1 % bursting in it: every topic is above the volume floor, so every topic is assessed).
  async function detection() {
    const dq = queues.get(QUEUES.trendDetection);
    // The fleet's own tick must not run a pass of its own in the middle: the scheduler exists before the workers
    // start (so they keep it rather than create it, which ticks at once) and its first tick is a day away.
    await dq.upsertJobScheduler(DETECTION_SCHEDULER_ID, { every: DAY_MS, startDate: Date.now() + DAY_MS }, { name: QUEUES.trendDetection, data: {}, opts: { removeOnComplete: 100, removeOnFail: 100 } });
    const env = { DETECTION_INTERVAL_SECONDS: String(DAY_MS / 1000), DETECTION_SHARD_TOPICS: String(SHARD_TOPICS) };
    const results = [];
    for (const topics of TOPICS) {
      const account = await createAccount(db, `bench fleet detection ${topics}`, "bench");
      accounts.push(account.id);
      const seedSeconds = await seed(account.id, topics);
      let lastCold = topics * 0.0012; // s: a first guess of the slowest pass, until one is measured
      const shards = Math.max(1, Math.ceil(topics / SHARD_TOPICS));
      const rows = [];
      for (const procs of PROCESSES) {
        // Every process count starts from the same state: no series cache, no trends, no events.
        await pool.query("DELETE FROM topic_series WHERE topic_id IN (SELECT id FROM topics WHERE account_id = $1)", [account.id]);
        await pool.query("DELETE FROM trends WHERE account_id = $1", [account.id]);
        await pool.query("DELETE FROM trend_events WHERE account_id = $1", [account.id]);
        const workers = await startFleet(procs, QUEUES.trendDetection, env);
        await sameHour(account.id, topics, lastCold);
        const cold = await pass(account.id, shards, `${topics}-${procs}-cold`, workers);
        lastCold = Math.max(lastCold, cold.seconds);
        await sameHour(account.id, topics, warmGuess(lastCold));
        const warm = await pass(account.id, shards, `${topics}-${procs}-warm`, workers);
        const rss = await stopFleet(workers);
        rows.push({ procs, cold, warm, rss });
      }
      const one = rows[0];
      const weeks = DEFAULT_DETECTION_CONFIG.baselineHours;
      console.log(`\n### Detection pass: ${fmt(topics)} active topics x ${weeks + 1} hourly buckets (${fmt(topics * (weeks + 1))} bucket rows, seeded in ${fmt(seedSeconds, 1)} s), ` +
        `${shards} shard jobs of ${fmt(SHARD_TOPICS)} topics`);
      console.log(`| worker processes | cold s | cold speed-up | warm s | warm speed-up | cold read / assess / write s (sum of jobs) | warm read / assess / write s | trends, events | peak RSS per process (MB) |\n|---|---|---|---|---|---|---|---|---|`);
      const parts = (p: Pass) => `${fmt(p.ms.read / 1000, 1)} / ${fmt(p.ms.assess / 1000, 1)} / ${fmt(p.ms.write / 1000, 1)}`;
      for (const r of rows) {
        console.log(`| ${r.procs} | ${fmt(r.cold.seconds, 2)} | ${speedup(one.cold.seconds, r.cold.seconds)} | ${fmt(r.warm.seconds, 2)} | ${speedup(one.warm.seconds, r.warm.seconds)} | ${parts(r.cold)} | ${parts(r.warm)} | ${fmt(r.cold.trends)}, ${fmt(r.cold.events)} | ${fmt(r.rss)} |`);
      }
      results.push({ topics, seedSeconds, rows });
      await dropTopics(account.id); // before the next size: a 100,000-topic seed is 16.9 M rows
    }
    return results;
  }

  /**
   * A pass must not straddle an hour: past it, the seeded last closed bucket is history and the topics' last_seen_at
   * is before the bucket in progress, so no topic is a candidate. So: wait for the hour when a pass of `seconds`
   * (1.5x, at least 10 s) would cross it, then, once it has turned, add the new last closed hour's buckets (same
   * pattern) and mark the topics seen, as ingestion would have (not timed).
   */
  async function sameHour(accountId: string, topics: number, seconds: number) {
    const left = HOUR - (Date.now() % HOUR);
    if (left < Math.max(10_000, seconds * 1500)) {
      console.log(`(waiting ${fmt(left / 1000)} s for the hour to turn before a pass of up to ~${fmt(seconds)} s)`);
      await new Promise((r) => setTimeout(r, left + 1000));
    }
    const last = Math.floor(Date.now() / HOUR) * HOUR - HOUR;
    if (last <= seededLast) return;
    await pool.query(`INSERT INTO topic_buckets (topic_id, bucket_start, count)
      SELECT 'top_f' || $1 || '_' || g, $3::timestamptz - h * interval '1 hour',
             CASE WHEN h = 0 AND g % 100 = 0 THEN 400 ELSE 90 + (g * 7 + h * 13) % 21 END
        FROM generate_series(0, $4::int) h, generate_series(1, $2::int) g
      ON CONFLICT DO NOTHING`, [accountId, topics, new Date(last), Math.round((last - seededLast) / HOUR) - 1]);
    await pool.query("UPDATE topics SET last_seen_at = now() WHERE account_id = $1", [accountId]);
    seededLast = last;
  }

  /**
   * Topics and their buckets in a few statements (generate_series), hour-major as ingestion writes them (a topic's
   * history lies on one heap page per hour), then VACUUM (ANALYZE) as autovacuum would: the passes then find hint bits set and
   * statistics current, as on a live database, whichever process count comes first.
   */
  async function seed(accountId: string, topics: number) {
    seededLast = Math.floor(Date.now() / HOUR) * HOUR - HOUR;
    const last = new Date(seededLast); // the last closed bucket (sameHour catches up if the hour turns meanwhile)
    const t0 = performance.now();
    await pool.query(`INSERT INTO topics (id, account_id, key, name, category, created_at, last_seen_at)
      SELECT 'top_f' || $1 || '_' || g, $1, 'topic ' || g || '|bench/fleet', 'topic ' || g, 'bench/fleet', now(), now() FROM generate_series(1, $2) g`, [accountId, topics]);
    const client = await pool.connect();
    try {
      // Consistent by construction (the topics exist): skip the per-row foreign-key check where allowed (superuser).
      await client.query("SET session_replication_role = replica").catch(() => {});
      const step = 25_000;
      for (let from = 1; from <= topics; from += step) {
        await client.query(`INSERT INTO topic_buckets (topic_id, bucket_start, count)
          SELECT 'top_f' || $1 || '_' || g, $4::timestamptz - h * interval '1 hour',
                 CASE WHEN h = 0 AND g % 100 = 0 THEN 400 ELSE 90 + (g * 7 + h * 13) % 21 END
            FROM generate_series($2::int, $3::int) g, generate_series(0, $5::int) h`,
        [accountId, from, Math.min(topics, from + step - 1), last, DEFAULT_DETECTION_CONFIG.baselineHours]);
      }
      await client.query("RESET session_replication_role");
    } finally {
      client.release();
    }
    await pool.query("VACUUM (ANALYZE) topics, topic_buckets");
    return (performance.now() - t0) / 1000;
  }

  interface Pass { seconds: number; trends: number; events: number; ms: { read: number; assess: number; write: number } }
  /** One pass as the tick queues it: one job per shard, timed from the enqueue until every job has completed. */
  async function pass(accountId: string, shards: number, label: string, workers: ChildProcess[]): Promise<Pass> {
    const dq = queues.get(QUEUES.trendDetection);
    const jobIds = Array.from({ length: shards }, (_, i) => `fleet-${label}-${i}of${shards}`);
    // One cheap call per poll (this process shares the cores): the queue's finished counts against those before.
    const counts = async () => { const c = await dq.getJobCounts("completed", "failed"); return { completed: c.completed ?? 0, failed: c.failed ?? 0 }; };
    const before = await counts();
    const t0 = performance.now();
    await dq.addBulk(jobIds.map((jobId, index) => ({ name: QUEUES.trendDetection, data: { account_id: accountId, shard: index, shards }, opts: { jobId } })));
    let failed = 0;
    try {
      await until(async () => {
        alive(workers);
        const c = await counts();
        failed = c.failed - before.failed;
        return failed > 0 || c.completed - before.completed >= shards;
      }, PASS_TIMEOUT_MS, 50, `detection ${label}: not done within ${PASS_TIMEOUT_MS / 1000} s`);
    } catch (e) {
      const states: Record<string, number> = {};
      for (const id of jobIds) { const s = String(await (await dq.getJob(id))?.getState()); states[s] = (states[s] ?? 0) + 1; }
      throw new Error(`${(e as Error).message} (shard job states: ${JSON.stringify(states)})`);
    }
    if (failed > 0) {
      const jobs = await Promise.all(jobIds.map((id) => dq.getJob(id)));
      const reasons = [...new Set(jobs.filter((j) => j?.failedReason).map((j) => j!.failedReason))];
      throw new Error(`detection ${label}: ${failed} shard job(s) failed: ${reasons.join("; ")}`);
    }
    const seconds = (performance.now() - t0) / 1000;
    const p: Pass = { seconds, trends: 0, events: 0, ms: { read: 0, assess: 0, write: 0 } };
    for (const id of jobIds) {
      const r = (await dq.getJob(id))?.returnvalue as { trends: number; events: number; ms: Pass["ms"] } | undefined;
      if (!r) continue;
      p.trends += r.trends; p.events += r.events;
      p.ms.read += r.ms.read; p.ms.assess += r.ms.assess; p.ms.write += r.ms.write;
    }
    return p;
  }

  /** The bench account's topics and everything hanging off them (buckets first, in one statement: 16.9 M rows at 100k). */
  async function dropTopics(accountId: string) {
    await pool.query("DELETE FROM topic_buckets WHERE topic_id IN (SELECT id FROM topics WHERE account_id = $1)", [accountId]);
    await pool.query("DELETE FROM topics WHERE account_id = $1", [accountId]); // cascades: topic_series, trends
    await pool.query("DELETE FROM trend_events WHERE account_id = $1", [accountId]); // no FK: a log
  }

  async function cleanup() {
    const dq = queues.get(QUEUES.trendDetection);
    await dq.removeJobScheduler(DETECTION_SCHEDULER_ID).catch(() => {});
    for (const q of [QUEUES.webhookDeliveries, QUEUES.trendDetection, QUEUES.trendEvents]) await queues.get(q).obliterate({ force: true });
    for (const id of accounts) {
      await dropTopics(id);
      await db.webhookExecution.deleteMany({ where: { accountId: id } }); // no FK: a log
      await db.account.delete({ where: { id } }); // cascades: subscriptions, deliveries
    }
    // Autovacuum is off on this box: leave no dead rows for the next section to walk.
    await pool.query("VACUUM (ANALYZE) topic_buckets, topic_series, topics, trends, trend_events, webhook_deliveries, webhook_executions, webhook_subscriptions");
    await queues.close();
    // Whatever else the run left under its own prefix: the accounts' trend streams, queue meta written on close.
    for (const node of masters(redis)) {
      for await (const keys of node.scanStream({ match: `${prefix}:*`, count: 1000 }) as AsyncIterable<string[]>) for (const k of keys) await node.del(k);
    }
    redis.disconnect();
    await pool.end();
    await db.$disconnect();
  }
}
