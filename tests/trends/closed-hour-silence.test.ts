import { QUEUES } from "@trendgate/contracts";
import { insertSignals } from "@trendgate/db";
import { detectAccount, DEFAULT_DETECTION_CONFIG, type EngineOptions } from "@trendgate/trends";
import { waitFor } from "../helpers/config.ts";
import { signal } from "../helpers/gateway.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startStack, webhookBody, type Stack } from "../helpers/stack.ts";

// A burst hour followed by silence is judged when the hour closes: the first pass of the next hour detects it and a
// subscriber gets trend.detected, without waiting for the topic's next mention (the shard read selects topics seen
// since the last closed bucket began, not only those seen in the bucket in progress).

const MIN = 60_000;
const HOUR = 60 * MIN;
const options: EngineOptions = { ...DEFAULT_DETECTION_CONFIG, publicBaseUrl: "https://trendgate.example" };

let stack: Stack;
let rx: Receiver;
beforeAll(async () => {
  stack = await startStack({ WORKER_QUEUES: `${QUEUES.trendEvents},${QUEUES.webhookDeliveries}` });
  rx = await startReceiver();
});
afterAll(async () => { await stack.close(); await rx.close(); });

test("a burst in the last closed hour, with no mention since, is detected by the first pass after the hour closes", async () => {
  const a = await stack.gw.account();
  const res = await stack.gw.http.post("/api/integrations/webhooks").set(a.auth)
    .send(webhookBody(rx.url("/silent"), { trigger_type: "trend_detected", threshold_value: 0 }));
  expect(res.status).toBe(201);

  // Two days at 30/h, then 400 in the last closed hour; the hour in progress has nothing yet.
  const burst = Math.floor(Date.now() / HOUR) * HOUR - HOUR;
  const counts = [...Array<number>(48).fill(30), 400];
  const from = burst - 48 * HOUR;
  const signals = counts.map((count, i) => signal({ id: `silent-${i}`, topic: "Silent after burst", category: "tech/ai", count, observed_at: new Date(from + i * HOUR + MIN).toISOString() }));
  expect(await insertSignals(stack.gw.deps.db, a.accountId, signals)).toBe(counts.length);
  // Its mentions were ingested as they came: the last one during the burst hour, none since.
  await stack.gw.deps.db.topic.updateMany({ where: { accountId: a.accountId }, data: { lastSeenAt: new Date(burst + 50 * MIN) } });

  expect((await detectAccount(stack.gw.deps, a.accountId, new Date(), options)).events).toBe(1);
  const [got] = await waitFor(async () => rx.on("/silent").length === 1 && rx.on("/silent"), { timeoutMs: 15_000 });
  expect(JSON.parse(got.body)).toMatchObject({ trend_name: "Silent after burst", timestamp: new Date(burst).toISOString() });

  // A topic last seen before the closed hour began is not read at all (nothing of it can be a trend now).
  await stack.gw.deps.db.topic.updateMany({ where: { accountId: a.accountId }, data: { lastSeenAt: new Date(burst - MIN) } });
  const b = await stack.gw.account();
  expect(await insertSignals(stack.gw.deps.db, b.accountId, signals.map((s) => ({ ...s, id: `other-${s.id}` })))).toBe(counts.length);
  await stack.gw.deps.db.topic.updateMany({ where: { accountId: b.accountId }, data: { lastSeenAt: new Date(burst - MIN) } });
  expect((await detectAccount(stack.gw.deps, b.accountId, new Date(), options)).events).toBe(0);
});
