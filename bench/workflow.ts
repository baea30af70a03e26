// Workflow-push benchmark (issue 10), in one run on this machine: N pushes committed to the shared outbox and
// drained by the real workflow-pushes worker (outbox processor, sealed key opened, connection read, body built,
// SSRF-guarded POST with X-Trendgate-Event-Id, every attempt recorded) versus a bare BullMQ worker that only POSTs
// the same bodies to the same receiver with the same concurrency. Target: 80 % of bare.
// BENCH_WORKFLOW_PUSHES (default 5000), BENCH_CONCURRENCY (default 50).
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Queue, Worker } from "bullmq";
import { QUEUES } from "@trendgate/contracts";
import { loadConfig } from "@trendgate/config";
import { SecretBox } from "@trendgate/crypto";
import { addOutboxMessages, createAccount, saveAuthorizedConnection } from "@trendgate/db";
import { OutboundClient, OutboundGuard } from "@trendgate/delivery";
import { createLogger } from "@trendgate/logger";
import { createRedis, dispatchOutbox } from "@trendgate/queues";
import { createWorkerDeps, startWorkers } from "../apps/worker/src/run-workers.ts";
import { fmt } from "./lib.ts";

const N = Number(process.env.BENCH_WORKFLOW_PUSHES ?? 5000);
const CONCURRENCY = process.env.BENCH_CONCURRENCY ?? "50";

export async function benchWorkflow() {
  let received = 0;
  const receiver = http.createServer((req, res) => { req.resume(); req.on("end", () => { received++; res.writeHead(200, { "content-type": "application/json" }); res.end('{"message":"Workflow was started"}'); }); });
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
  const t0 = performance.now();
  const workers = startWorkers(config, createLogger({ level: "silent" }), [QUEUES.workflowPushes]);
  const until = async (fn: () => Promise<boolean> | boolean) => { while (!(await fn())) await new Promise((r) => setTimeout(r, 20)); };
  await until(async () => received >= N && (await db.outboxMessage.count({ where: { accountId: account.id, status: "succeeded" } })) >= N);
  const realSeconds = (performance.now() - t0) / 1000;
  await workers.close();

  // 2. Bare: a BullMQ worker that only POSTs the same body through the same guarded client.
  received = 0;
  const redis = createRedis(config.REDIS_URL, "worker");
  const bareQueue = new Queue("bench-workflow-bare", { connection: createRedis(config.REDIS_URL, "client"), prefix });
  await bareQueue.addBulk(Array.from({ length: N }, (_, i) => ({ name: "p", data: { i } })));
  const client = new OutboundClient({ guard: new OutboundGuard(["127.0.0.1"]), connectTimeoutMs: 5000, timeoutMs: 15000, maxResponseBytes: 65536, userAgent: "bench" });
  const t1 = performance.now();
  const bare = new Worker("bench-workflow-bare", async (job) => {
    const body = JSON.stringify({ event: "trend_lifecycle", data, metadata: { event_id: String(job.data.i), account_id: account.id, sent_at: new Date().toISOString() } });
    const r = await client.request("POST", `${origin}/webhook/bench`, { body, headers: { "content-type": "application/json", "X-Trendgate-Event-Id": String(job.data.i) } });
    if (r.status !== 200) throw new Error(`bare: ${r.status}`);
  }, { connection: redis, prefix, concurrency: Number(CONCURRENCY) });
  await until(() => received >= N);
  const bareSeconds = (performance.now() - t1) / 1000;
  await bare.close();
  await bareQueue.obliterate({ force: true }).catch(() => undefined);
  await bareQueue.close();
  redis.disconnect();

  const real = N / realSeconds;
  const bareRate = N / bareSeconds;
  console.log(`\n## Workflow pushes (${fmt(N)} pushes, concurrency ${CONCURRENCY})`);
  console.log(`outbox + workflow-pushes worker: ${fmt(real)} pushes/s (each attempt recorded)`);
  console.log(`bare BullMQ worker, POST only:    ${fmt(bareRate)} pushes/s`);
  console.log(`ratio: ${fmt((real / bareRate) * 100)} % of bare (target 80 %)`);
  await db.outboxMessage.deleteMany({ where: { accountId: account.id } });
  await db.connection.deleteMany({ where: { accountId: account.id } });
  await deps.queues.close();
  deps.queues.connection.disconnect();
  await db.$disconnect();
  await new Promise<void>((r) => { receiver.closeAllConnections(); receiver.close(() => r()); });
}
