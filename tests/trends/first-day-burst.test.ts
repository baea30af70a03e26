import { Webhook as StandardWebhook } from "standardwebhooks";
import { QUEUES } from "@trendgate/contracts";
import { insertSignals } from "@trendgate/db";
import { detectAccount, DEFAULT_DETECTION_CONFIG, type EngineOptions } from "@trendgate/trends";
import { waitFor } from "../helpers/config.ts";
import { signal } from "../helpers/gateway.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startStack, webhookBody, type Stack } from "../helpers/stack.ts";

// A topic on its first day (less than a day of history: no daily shape, no z-score floor, no tail learnt yet) that
// bursts must still reach a subscriber: one signed trend.detected on their endpoint, from a real detection pass
// through the real fan-out and delivery workers. A topic of the same age that stays at its rate sends nothing.

const MIN = 60_000;
const HOUR = 60 * MIN;
const options: EngineOptions = { ...DEFAULT_DETECTION_CONFIG, publicBaseUrl: "https://trendgate.example" };

/** `counts[i]` mentions in hour `from + i` (one signal a minute into the hour). */
async function seed(stack: Stack, accountId: string, topic: string, from: number, counts: number[]) {
  const signals = counts.map((count, i) => signal({ id: `${topic}-${i}`, topic, category: "tech/ai", count, observed_at: new Date(from + i * HOUR + MIN).toISOString() }));
  expect(await insertSignals(stack.gw.deps.db, accountId, signals)).toBe(counts.length);
}

let stack: Stack;
let rx: Receiver;
// Workers drain only the fan-out and delivery queues: the detection pass is the test's own (no scheduler tick racing it).
beforeAll(async () => {
  stack = await startStack({ WORKER_QUEUES: `${QUEUES.trendEvents},${QUEUES.webhookDeliveries}` });
  rx = await startReceiver();
});
afterAll(async () => { await stack.close(); await rx.close(); });

test("a first-day topic's burst is delivered once, signed, as trend.detected; a calm topic of the same age sends nothing", async () => {
  const a = await stack.gw.account();
  const res = await stack.gw.http.post("/api/integrations/webhooks").set(a.auth)
    .send(webhookBody(rx.url("/first-day"), { trigger_type: "trend_detected", threshold_value: 0 }));
  expect(res.status).toBe(201);
  const secret = res.body.secret as string;

  // Both topics first mentioned 15 h ago at a steady 30/h; the last complete hour is 10x that for one of them.
  const burst = Math.floor(Date.now() / HOUR) * HOUR - HOUR;
  await seed(stack, a.accountId, "Fresh burst", burst - 15 * HOUR, [...Array<number>(15).fill(30), 300]);
  await seed(stack, a.accountId, "Fresh calm", burst - 15 * HOUR, Array<number>(16).fill(30));

  expect((await detectAccount(stack.gw.deps, a.accountId, new Date(), options)).events).toBe(1);
  // The next pass (the scheduler's, a minute later) sees the same burst: nothing new to tell.
  expect((await detectAccount(stack.gw.deps, a.accountId, new Date(), options)).events).toBe(0);

  const [got] = await waitFor(async () => rx.on("/first-day").length === 1 && rx.on("/first-day"), { timeoutMs: 15_000 });
  expect(got.headers["x-webhook-event-type"]).toBe("trend.detected");
  expect(JSON.parse(got.body)).toMatchObject({ trend_name: "Fresh burst", category: "tech/ai", timestamp: new Date(burst).toISOString() });
  // Verified by the Standard Webhooks reference library (written by others) with the secret the subscriber was given.
  const verified = new StandardWebhook(secret.slice("whsec_".length)).verify(got.body, {
    "webhook-id": String(got.headers["webhook-id"]), "webhook-timestamp": String(got.headers["webhook-timestamp"]), "webhook-signature": String(got.headers["webhook-signature"]),
  });
  expect(verified).toEqual(JSON.parse(got.body));

  // Nothing else arrives: no second delivery of the burst, nothing for the calm topic.
  await new Promise((r) => setTimeout(r, 1500));
  expect(rx.received).toHaveLength(1);
});
