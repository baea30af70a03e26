// Conversion-events benchmark, in one run on this machine:
// (a) accepted: N pushes through the real gateway (POST /api/integrations/community-ads/push over HTTP with an API
//     key, concurrent clients): each validated, hashed, committed as an outbox message and dispatched;
// (b) delivered: those committed messages drained by the real conversion-events worker (startWorkers: leases a batch
//     companions, one v3 POST per batch of up to the connector's maxBatchSize, every message's attempt recorded) to
//     a minimal local receiver at the v3 path that answers 200 like Reddit, timed until every message is recorded
//     succeeded and the receiver has counted every event;
// (c) bare: a BullMQ worker with the same concurrency, one job per event, batching in process (up to the same max
//     batch size and wait) and POSTing the same v3 body through the same connector client to the same receiver,
//     nothing recorded. A job completes after its batch's answer (at least once, as the real path); a batch is sent
//     when full, when its oldest event has waited CONVERSION_BATCH_WAIT_MS since its job was created, or when every
//     job slot is waiting on it (nothing more can join). Target: delivered >= 80 % of bare. Shown for reference: the
//     same bare worker whose jobs complete on hand-off to the batch (not at least once; batches up to the maximum).
// BENCH_CONVERSIONS (default 20,000), BENCH_CONCURRENCY (default 50, also the number of push clients); diagnostics:
// BENCH_TRACE=1 (progress of the delivered phase), BENCH_PROFILE=file.cpuprofile (CPU profile of that phase).
import { writeFile } from "node:fs/promises";
import http from "node:http";
import inspector from "node:inspector/promises";
import type { AddressInfo } from "node:net";
import autocannon from "autocannon";
import { Queue, Worker } from "bullmq";
import { QUEUES, type ConversionPush } from "@trendgate/contracts";
import { loadConfig } from "@trendgate/config";
import { registry } from "@trendgate/connectors";
import { createAccount, createApiKey } from "@trendgate/db";
import { createLogger } from "@trendgate/logger";
import { createRedis, DEFAULT_JOB_OPTIONS, masters, queuePrefix } from "@trendgate/queues";
import { createWorkerDeps, startWorkers } from "../apps/worker/src/run-workers.ts";
import { fmt, freePort, startServer, stopServer } from "./lib.ts";

const N = Number(process.env.BENCH_CONVERSIONS ?? 20_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 50);
const PIXEL = "a2_benchpixel";
const BASE = "/api/integrations/community-ads";
const V3 = `/api/v3/pixels/${PIXEL}/conversion_events`;

const until = async (fn: () => Promise<boolean> | boolean) => { while (!(await fn())) await new Promise((r) => setTimeout(r, 20)); };

/** BENCH_TRACE=1: the delivered phase's progress every 250 ms (where the time goes: sends, records, deferred jobs). */
function traceProgress(redisUrl: string, prefix: string, counts: () => Promise<Record<string, number>>) {
  const redis = createRedis(redisUrl, "client");
  const q = new Queue(QUEUES.conversionEvents, { connection: redis, prefix: queuePrefix(prefix, QUEUES.conversionEvents) });
  const t0 = performance.now();
  let on = true;
  const done = (async () => {
    while (on) {
      const [c, j] = await Promise.all([counts(), q.getJobCounts("active", "delayed", "waiting", "completed")]);
      console.log(`t=${((performance.now() - t0) / 1000).toFixed(2)}s`, JSON.stringify({ ...c, ...j }));
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  return { stop: async () => { on = false; await done; await q.close(); redis.disconnect(); } };
}

/** BENCH_PROFILE=file.cpuprofile: a CPU profile of this process (worker and receiver) over the delivered phase only. */
async function startProfile() {
  const session = new inspector.Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.start");
  return async (file: string) => {
    const { profile } = await session.post("Profiler.stop");
    await writeFile(file, JSON.stringify(profile));
    session.disconnect();
  };
}

/** The push body; `{n}` becomes a unique number (conversion id, identifiers) per request. */
const pushBody = JSON.stringify({
  event_name: "purchase",
  data: { conversion_id: "bench-{n}", email: "user-{n}@example.com", external_id: "user-{n}", ip_address: "203.0.113.7", user_agent: "Mozilla/5.0 (bench)", value: 19.99, currency: "USD", item_count: 1 },
});

export async function benchConversions() {
  // The receiver: Reddit's v3 path, 200 `{data:{success:true}}`; counts events (sum of batch sizes) and requests.
  const got = { events: 0, requests: 0, duplicates: 0, firstAt: 0 };
  const seen = new Set<string>(); // conversion ids received: an id twice is a second send of one event
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== V3) { res.writeHead(404).end(); return; }
      const { events } = (JSON.parse(Buffer.concat(chunks).toString()) as { data: { events: { metadata: { conversion_id: string } }[] } }).data;
      got.events += events.length;
      for (const e of events) { if (seen.has(e.metadata.conversion_id)) got.duplicates++; else seen.add(e.metadata.conversion_id); }
      got.requests++;
      got.firstAt ||= performance.now();
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"data":{"success":true}}');
    });
  });
  receiver.keepAliveTimeout = 5000;
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  const origin = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

  const prefix = `benchconv${Date.now()}`;
  const config = loadConfig({
    ...process.env, QUEUE_PREFIX: prefix, REDDIT_ADS_API_URL: origin, OUTBOUND_ALLOWLIST: "127.0.0.1",
    OUTBOX_CONCURRENCY: String(CONCURRENCY), WORKER_CONCURRENCY: String(CONCURRENCY), LOG_LEVEL: "silent",
  });
  const deps = createWorkerDeps(config, createLogger({ level: "silent" }));
  const { db } = deps;
  const connector = registry.single("conversions");
  const maxBatch = connector.limits.maxBatchSize;
  const waitMs = config.CONVERSION_BATCH_WAIT_MS;
  const account = await createAccount(db, "bench conversions", "bench");
  const { key } = await createApiKey(db, account.id, "bench");
  const accessToken = `bench-conversion-token-${prefix}`;

  try {
    // (a) Accepted: the real gateway, connected with a conversion access token and a pixel through its own routes.
    const port = await freePort();
    const gateway = await startServer("apps/gateway/src/main.ts", {
      QUEUE_PREFIX: prefix, NODE_ENV: "production", LOG_LEVEL: "warn", HOST: "127.0.0.1", RATE_LIMIT_PLANS: "free:600,bench:100000000",
    }, port);
    const gw = `http://127.0.0.1:${port}${BASE}`;
    const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
    let accepted: number;
    try {
      for (const [path, body] of [["token", { access_token: accessToken }], ["selection", { account_id: "t2_benchacct", pixel_id: PIXEL, event_name: "purchase" }]] as const) {
        const r = await fetch(`${gw}/${path}`, { method: "PUT", headers, body: JSON.stringify(body) });
        if (r.status !== 200) throw new Error(`PUT ${path}: ${r.status} ${await r.text()}`);
      }
      let n = 0;
      const push = async (amount: number) => {
        const r = await autocannon({
          url: `${gw}/push`, connections: CONCURRENCY, amount,
          requests: [{
            method: "POST",
            setupRequest: (req: any) => { const id = `${prefix}-${n++}`; return { ...req, headers, body: pushBody.replaceAll("{n}", id) }; },
          }],
        });
        if (r.non2xx || r.errors) throw new Error(`push: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
      };
      const warm = Math.min(500, Math.floor(N / 10)); // JIT, pools; these events are delivered in (b) too
      if (warm) await push(warm);
      const t = performance.now();
      await push(N - warm);
      accepted = (N - warm) / ((performance.now() - t) / 1000);
    } finally {
      await stopServer(gateway);
    }
    const queued = await db.outboxMessage.count({ where: { accountId: account.id, queue: QUEUES.conversionEvents, status: "pending" } });
    if (queued !== N) throw new Error(`expected ${N} pending messages, found ${queued}`);

    // (b) Delivered: the real worker drains the committed, dispatched messages.
    got.events = 0; got.requests = 0; got.duplicates = 0; got.firstAt = 0;
    const t0 = performance.now();
    const workers = startWorkers(config, createLogger({ level: (process.env.BENCH_LOG_LEVEL ?? "silent") as "silent" }), [QUEUES.conversionEvents]);
    const trace = process.env.BENCH_TRACE ? traceProgress(config.REDIS_URL, prefix, async () => ({ ...got, succeeded: await db.outboxMessage.count({ where: { accountId: account.id, status: "succeeded" } }) })) : null;
    const prof = process.env.BENCH_PROFILE ? await startProfile() : null;
    await until(() => got.events >= N); // the receiver first: no count queries competing with the worker meanwhile
    await until(async () => (await db.outboxMessage.count({ where: { accountId: account.id, status: "succeeded" } })) >= N);
    // From the first request the receiver gets: the worker's start (pools, connections, first queries) is not throughput.
    const realSeconds = (performance.now() - got.firstAt) / 1000;
    const startSeconds = (got.firstAt - t0) / 1000;
    await prof?.(process.env.BENCH_PROFILE!);
    await trace?.stop();
    await workers.close();
    const real = { rate: N / realSeconds, events: got.events, requests: got.requests, duplicates: got.duplicates, startSeconds };
    const attempts = await db.outboxAttempt.count({ where: { accountId: account.id } });

    // (c) Bare: one job per event (the pushed event, hashed as at push time), batched in process, same client.
    const events: ConversionPush[] = Array.from({ length: N }, (_, i) => {
      const id = `${prefix}-bare-${i}`;
      return connector.hashIdentifiers({ event_name: "purchase", data: { conversion_id: `bench-${id}`, email: `user-${id}@example.com`, external_id: `user-${id}`, ip_address: "203.0.113.7", user_agent: "Mozilla/5.0 (bench)", value: 19.99, currency: "USD", item_count: 1, event_at: Date.now(), action_source: "WEBSITE" } as ConversionPush["data"] });
    });
    const client = connector.client({ baseUrl: origin, accessToken, env: config.PROVIDER_ENV }); // as the worker builds it (its allowlist too)
    const redis = createRedis(config.REDIS_URL, "worker");
    const bareRun = async (name: string, awaitPost: boolean) => {
      got.events = 0; got.requests = 0; got.duplicates = 0; got.firstAt = 0;
      const limit = awaitPost ? Math.min(maxBatch, CONCURRENCY) : maxBatch; // a batch never outgrows the jobs that can wait on it
      type Item = { event: ConversionPush; resolve(): void; reject(e: unknown): void };
      let open: Item[] = [];
      let timer: NodeJS.Timeout | null = null;
      const flush = () => {
        if (timer) { clearTimeout(timer); timer = null; }
        const batch = open;
        open = [];
        if (batch.length) client.sendBatch(PIXEL, batch.map((b) => b.event)).then(
          (rs) => batch.forEach((b, i) => (rs[i].ok ? b.resolve() : b.reject(rs[i].error))),
          (err) => batch.forEach((b) => b.reject(err)));
      };
      const add = (event: ConversionPush, createdAt: number) => new Promise<void>((resolve, reject) => {
        open.push({ event, resolve, reject });
        if (open.length >= limit) flush();
        else if (open.length === 1) timer = setTimeout(flush, Math.max(0, waitMs - (Date.now() - createdAt)));
      });
      const queueRedis = createRedis(config.REDIS_URL, "client");
      const bareQueue = new Queue(name, { connection: queueRedis, prefix, defaultJobOptions: DEFAULT_JOB_OPTIONS }); // the service's job options
      await bareQueue.addBulk(events.map((_, i) => ({ name: "e", data: { i } })));
      const t1 = performance.now();
      const bare = new Worker(name, async (job) => {
        const p = add(events[job.data.i as number], job.timestamp);
        if (awaitPost) await p; else p.catch(() => undefined);
      }, { connection: redis, prefix, concurrency: CONCURRENCY });
      await until(() => got.events >= N);
      const seconds = (performance.now() - (got.firstAt || t1)) / 1000;
      await bare.close();
      await bareQueue.obliterate({ force: true }).catch(() => undefined);
      await bareQueue.close();
      queueRedis.disconnect();
      return { rate: N / seconds, events: got.events, requests: got.requests };
    };
    const bare = await bareRun("bench-conversions-bare", true);
    const handoff = await bareRun("bench-conversions-bare-handoff", false);
    redis.disconnect();

    const mean = (r: { events: number; requests: number }) => fmt(r.events / Math.max(1, r.requests), 1);
    console.log(`\n## Conversion events, rates from each side's first request (${fmt(N)} events, one pixel, concurrency ${CONCURRENCY}, max batch ${fmt(maxBatch)}, batch wait ${waitMs} ms)`);
    console.log(`accepted, gateway push (${CONCURRENCY} clients):  ${fmt(accepted)} events/s (validated, hashed, committed, dispatched)`);
    console.log(`delivered, outbox + conversion-events worker: ${fmt(real.rate)} events/s; ${fmt(real.events)} events in ${fmt(real.requests)} requests, mean batch ${mean(real)}; ${fmt(attempts)} attempts recorded, ${fmt(real.duplicates)} events sent twice (worker start to first request: ${real.startSeconds.toFixed(2)} s, not counted)`);
    console.log(`bare BullMQ worker, batched POST:             ${fmt(bare.rate)} events/s; ${fmt(bare.events)} events in ${fmt(bare.requests)} requests, mean batch ${mean(bare)}`);
    console.log(`bare, job done on hand-off to the batch:      ${fmt(handoff.rate)} events/s; mean batch ${mean(handoff)} (reference: not at least once)`);
    console.log(`ratio: delivered ${fmt((real.rate / bare.rate) * 100)} % of bare (target 80 %); ${fmt((real.rate / handoff.rate) * 100)} % of hand-off bare`);
    return { accepted, delivered: real.rate, bare: bare.rate, ratio: real.rate / bare.rate };
  } finally {
    await db.outboxAttempt.deleteMany({ where: { accountId: account.id } });
    await db.outboxMessage.deleteMany({ where: { accountId: account.id } });
    await db.connection.deleteMany({ where: { accountId: account.id } });
    await db.apiKey.deleteMany({ where: { accountId: account.id } });
    await db.account.delete({ where: { id: account.id } }).catch(() => undefined); // kept if something else refers to it
    // Every Redis key of this run (queues, claims, rate-limit counters) is under its own prefix.
    const redis = deps.queues.connection;
    for (const node of masters(redis))
      for await (const keys of node.scanStream({ match: `${prefix}:*`, count: 1000 })) for (const k of keys as string[]) await redis.del(k);
    await deps.queues.close();
    deps.queues.connection.disconnect();
    await db.$disconnect();
    await new Promise<void>((r) => { receiver.closeAllConnections(); receiver.close(() => r()); });
  }
}
