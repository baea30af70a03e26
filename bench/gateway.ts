// Gateway benchmark: an authenticated POST that validates a body and enqueues one job (POST /api/signals with a
// fresh Idempotency-Key per request), through the full path (auth, rate limit, validation, idempotency, enqueue,
// logging, metrics), against a bare Express + validation + queue.add server, alternately in the same run.
import { createAccount, createApiKey, createDb } from "@trendgate/db";
import { Queue } from "bullmq";
import { createRedis, queuePrefix } from "@trendgate/queues";
import { fmt, load, median, startServer, stopServer, type LoadResult } from "./lib.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONNECTIONS = 50;

export async function benchGateway() {
  const prefix = `bench${Date.now()}`;
  const db = createDb(process.env.DATABASE_URL!);
  const account = await createAccount(db, "bench", "bench");
  const { key } = await createApiKey(db, account.id, "bench");
  await db.$disconnect();

  const body = JSON.stringify({ signals: [{ id: "{n}", source: "x", topic: "AI agents", category: "tech/ai", count: 12, sentiment: 0.2, observed_at: "2026-11-22T06:00:00.000Z", link: "https://example.com/post/1" }] });
  const env = { QUEUE_PREFIX: prefix, NODE_ENV: "production", LOG_LEVEL: "warn", HOST: "127.0.0.1", RATE_LIMIT_PLANS: "free:600,bench:100000000" };
  const results: Record<"bare" | "full", LoadResult[]> = { bare: [], full: [] };

  for (let round = 0; round < ROUNDS; round++) {
    for (const side of ["bare", "full"] as const) {
      const port = side === "bare" ? 3901 : 3902;
      const server = await startServer(side === "bare" ? "bench/servers/bare-express.ts" : "apps/gateway/src/main.ts", env, port);
      const url = `http://127.0.0.1:${port}/api/signals`;
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (side === "full") Object.assign(headers, { authorization: `Bearer ${key}`, "idempotency-key": "bench-{n}" });
      await load({ url, headers, body, seconds: 2, connections: CONNECTIONS }); // warm-up (JIT, pools)
      const r = await load({ url, headers, body, seconds: SECONDS, connections: CONNECTIONS });
      if (r.non2xx || r.errors) throw new Error(`${side}: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
      results[side].push(r);
      await stopServer(server);
    }
  }

  // Clean up the bench queue (jobs were only enqueued, never processed).
  const redis = createRedis(process.env.REDIS_URL!, "client");
  await new Queue("signals-ingest", { connection: redis, prefix: queuePrefix(prefix, "signals-ingest") }).obliterate({ force: true });
  redis.disconnect();

  const sum = (rs: LoadResult[]) => ({ rps: median(rs.map((r) => r.rps)), p50: median(rs.map((r) => r.p50)), p99: median(rs.map((r) => r.p99)) });
  const bare = sum(results.bare), full = sum(results.full);
  console.log(`\n## Gateway: authenticated POST /api/signals -> validate -> enqueue (${CONNECTIONS} connections, ${ROUNDS}x${SECONDS}s each, medians)`);
  console.log(`| side | req/s | p50 ms | p99 ms |\n|---|---|---|---|`);
  console.log(`| bare Express + validate + queue.add | ${fmt(bare.rps)} | ${bare.p50} | ${bare.p99} |`);
  console.log(`| full path (auth, rate limit, validation, idempotency, enqueue, logs, metrics) | ${fmt(full.rps)} | ${full.p50} | ${full.p99} |`);
  console.log(`ratio full/bare: ${fmt((100 * full.rps) / bare.rps, 1)} % (target >= 60 %)`);
  return { bare, full, ratio: full.rps / bare.rps };
}
