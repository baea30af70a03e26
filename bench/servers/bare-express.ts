// The "bare" side of the gateway benchmark: Express 5 + express.json + the same zod validation + queue.add,
// with no auth, rate limit, idempotency, logging or metrics.
import express from "express";
import { IngestSignalsBody, QUEUES, Signal } from "@trendgate/contracts";
import { createRedis, Queues } from "@trendgate/queues";

const queues = new Queues(createRedis(process.env.REDIS_URL!, "client"), process.env.QUEUE_PREFIX!);
const app = express();
app.use(express.json());
let n = 0;
app.post("/api/signals", async (req, res) => {
  const body = IngestSignalsBody.parse(req.body);
  const signals = body.signals.map((s) => Signal.parse(s));
  const batchId = `bare_${process.pid}_${n++}`;
  await queues.add(QUEUES.signals, { account_id: "bench", batch_id: batchId, signals }, { jobId: batchId });
  res.status(202).json({ batch_id: batchId, accepted: signals.length, rejected: 0, rejections: [] });
});
app.listen(Number(process.env.PORT), "127.0.0.1", () => process.send?.("ready"));
