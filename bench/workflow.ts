// Workflow-push benchmark, in one run on this machine: N pushes committed to the shared outbox and
// drained by the real workflow-pushes worker (outbox processor, sealed key opened, connection read, body built,
// SSRF-guarded POST with X-Trendgate-Event-Id, every attempt recorded) versus bare BullMQ workers with the same
// concurrency that POST the same bodies through the same client to the same receiver: one that also writes one row
// per push (batched, <= 50 rows or 5 ms, the job completing after its commit: the least a push that is recorded
// costs, as the webhook bench's bare worker), and one that only POSTs (shown for reference). Target: 80 % of the
// first.
// BENCH_WORKFLOW_PUSHES (default 5000), BENCH_CONCURRENCY (default 50).
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Queue, Worker } from "bullmq";
import { QUEUES } from "@trendgate/contracts";
import { loadConfig } from "@trendgate/config";
import { SecretBox } from "@trendgate/crypto";
import { addOutboxMessages, createAccount, saveAuthorizedConnection } from "@trendgate/db";
import { BatchWriter, OutboundClient, OutboundGuard } from "@trendgate/delivery";
import { createLogger } from "@trendgate/logger";
import { createRedis, DEFAULT_JOB_OPTIONS, dispatchOutbox } from "@trendgate/queues";
import { createWorkerDeps, startWorkers } from "../apps/worker/src/run-workers.ts";
import { fmt } from "./lib.ts";

const N = Number(process.env.BENCH_WORKFLOW_PUSHES ?? 5000);
const CONCURRENCY = process.env.BENCH_CONCURRENCY ?? "50";

export async function benchWorkflow() {
  let received = 0;
  let firstAt = 0; // rates count from each side's first request: a worker's start (pools, connections) is not throughput
  const receiver = http.createServer((req, res) => { firstAt ||= performance.now(); req.resume(); req.on("end", () => { received++; res.writeHead(200, { "content-type": "application/json" }); res.end('{"message":"Workflow was started"}'); }); });
  receiver.keepAliveTimeout = 5000;
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  const origin = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const prefix = `benchwf${Date.now()}`;
  const config = loadConfig({ ...process.env, OUTBOUND_ALLOWLIST: "127.0.0.1", QUEUE_PREFIX: prefix, OUTBOX_CONCURRENCY: CONCURRENCY, WORKER_CONCURRENCY: CONCURRENCY, LOG_LEVEL: "silent" });
  const deps = createWorkerDeps(config, createLogger({ level: "silent" }));
  const { db } = deps;
  const secrets = new SecretBox(config.ENCRYPTION_KEY);
  const account = await createAccount(db, "bench workflow");
  const conn = await db.$transaction(async (tx) => {
    const c = await saveAuthorizedConnection(tx, {
      accountId: account.id, provider: "n8n", kind: "workflow", credentialsSealed: secrets.seal(JSON.stringify({ api_key: "bench" })),
      tokenExpiresAt: null, scopes: [], externalAccount: { api_base_url: origin },
    });
    return tx.connection.update({ where: { id: c.id }, data: {
      settings: { include_metadata: true },
      selection: { workflow_id: "wf1", workflow_name: "bench", default_event: "trend_lifecycle", api_base_url: origin, push_url: `${origin}/webhook/bench`, push_method: "POST", push_url_overridden: false, auto_push: false, workflow_active: true },
    } });
  });
  const data = { trend: "AI agents", category: "tech/ai", velocity: 120, summary: "Mentions of AI agents are 3x their usual rate." };

  // 1. The real path.
  const rows = [];
  for (let i = 0; i < N; i += 1000) {
    rows.push(...await db.$transaction((tx) => addOutboxMessages(tx, Array.from({ length: Math.min(1000, N - i) }, (_, k) => {
      const event_id = `wfe_bench_${prefix}_${i + k}`;
      return { queue: QUEUES.workflowPushes, accountId: account.id, connectionId: conn.id, dedupKey: event_id, payload: { event_id, event: "trend_lifecycle", data, source: "api" } };
    }))));
  }
  await dispatchOutbox(deps.queues, rows);
  firstAt = 0;
  const t0 = performance.now();
  const workers = startWorkers(config, createLogger({ level: "silent" }), [QUEUES.workflowPushes]);
  const until = async (fn: () => Promise<boolean> | boolean) => { while (!(await fn())) await new Promise((r) => setTimeout(r, 20)); };
  await until(async () => received >= N && ((await db.outboxMessage.count({ where: { accountId: account.id, status: "succeeded" } })) >= N));
  const realSeconds = (performance.now() - firstAt) / 1000;
  const startSeconds = (firstAt - t0) / 1000;
  await workers.close();

  // 2. Bare: BullMQ workers that POST the same body through the same guarded client (and write a row per push).
  const pool = deps.db.$pool;
  await pool.query("CREATE SCHEMA IF NOT EXISTS bench"); // outside the app schema: never seen as migration drift
  await pool.query("CREATE TABLE IF NOT EXISTS bench.bare_pushes (id text PRIMARY KEY, status int, created_at timestamptz DEFAULT now())");
  await pool.query("TRUNCATE bench.bare_pushes");
  const rowsWriter = new BatchWriter<[string, number]>(async (items) => {
    await pool.query("INSERT INTO bench.bare_pushes (id, status) SELECT * FROM unnest($1::text[], $2::int[])", [items.map((i) => i[0]), items.map((i) => i[1])]);
  }, { maxItems: 50, maxWaitMs: 5 });
  const client = new OutboundClient({ guard: new OutboundGuard(["127.0.0.1"]), connectTimeoutMs: 5000, timeoutMs: 15000, maxResponseBytes: 65536, userAgent: "bench" });
  const redis = createRedis(config.REDIS_URL, "worker");
  const bareRun = async (name: string, record: boolean) => {
    received = 0;
    firstAt = 0;
    // The same job options as every queue of the service (retries, bounded retention of finished jobs).
    const bareQueue = new Queue(name, { connection: createRedis(config.REDIS_URL, "client"), prefix, defaultJobOptions: DEFAULT_JOB_OPTIONS });
    await bareQueue.addBulk(Array.from({ length: N }, (_, i) => ({ name: "p", data: { i } })));
    const t1 = performance.now();
    const bare = new Worker(name, async (job) => {
      const body = JSON.stringify({ event: "trend_lifecycle", data, metadata: { event_id: String(job.data.i), account_id: account.id, sent_at: new Date().toISOString() } });
      const r = await client.request("POST", `${origin}/webhook/bench`, { body, headers: { "content-type": "application/json", "X-Trendgate-Event-Id": String(job.data.i) } });
      if (r.status !== 200) throw new Error(`bare: ${r.status}`);
      if (record) await rowsWriter.add([`${name}:${job.data.i}`, r.status]);
    }, { connection: redis, prefix, concurrency: Number(CONCURRENCY) });
    await until(async () => received >= N && (!record || Number((await pool.query("SELECT count(*) FROM bench.bare_pushes")).rows[0].count) >= N));
    const seconds = (performance.now() - (firstAt || t1)) / 1000;
    await bare.close();
    await bareQueue.obliterate({ force: true }).catch(() => undefined);
    await bareQueue.close();
    return N / seconds;
  };
  const bareRecorded = await bareRun("bench-workflow-bare-rec", true);
  const bareRate = await bareRun("bench-workflow-bare", false);
  redis.disconnect();
  await pool.query("DROP TABLE bench.bare_pushes");

  const real = N / realSeconds;
  console.log(`\n## Workflow pushes (${fmt(N)} pushes, concurrency ${CONCURRENCY})`);
  console.log(`outbox + workflow-pushes worker: ${fmt(real)} pushes/s (each attempt recorded; worker start to first request ${startSeconds.toFixed(2)} s, not counted)`);
  console.log(`bare BullMQ worker, POST + row:   ${fmt(bareRecorded)} pushes/s`);
  console.log(`bare BullMQ worker, POST only:    ${fmt(bareRate)} pushes/s (reference)`);
  console.log(`ratio: ${fmt((real / bareRecorded) * 100)} % of bare POST + row (target 80 %); ${fmt((real / bareRate) * 100)} % of POST only`);
  await db.outboxAttempt.deleteMany({ where: { accountId: account.id } });
  await db.outboxMessage.deleteMany({ where: { accountId: account.id } });
  await db.connection.deleteMany({ where: { accountId: account.id } });
  await deps.queues.close();
  deps.queues.connection.disconnect();
  await db.$disconnect();
  await new Promise<void>((r) => { receiver.closeAllConnections(); receiver.close(() => r()); });
}
