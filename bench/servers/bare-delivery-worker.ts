// The "bare" side of the delivery benchmark: a BullMQ worker that only POSTs the job's body to the receiver
// (node:http, keep-alive) and inserts one row per delivery, batched (<= 50 rows or 5 ms; a job completes after its
// commit).
import http from "node:http";
import { Worker } from "bullmq";
import pg from "pg";
import { BatchWriter } from "@trendgate/delivery";
import { createRedis } from "@trendgate/queues";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
const post = (url: string, body: string) => new Promise<number>((resolve, reject) => {
  const req = http.request(url, { method: "POST", agent, headers: { "content-type": "application/json" } }, (res) => {
    res.resume();
    res.on("end", () => resolve(res.statusCode ?? 0));
  });
  req.on("error", reject);
  req.end(body);
});
const rows = new BatchWriter<[string, number]>(async (items) => {
  await pool.query("INSERT INTO bench.bare_deliveries (id, status) SELECT * FROM unnest($1::text[], $2::int[])", [items.map((i) => i[0]), items.map((i) => i[1])]);
}, { maxItems: 50, maxWaitMs: 5 });

new Worker("bench-bare", async (job) => {
  await rows.add([job.id!, await post(process.env.RECEIVER_URL!, job.data.body)]);
}, { connection: createRedis(process.env.REDIS_URL!, "worker"), prefix: process.env.QUEUE_PREFIX, concurrency: Number(process.env.WEBHOOK_CONCURRENCY ?? 50) });
process.send?.("ready");
