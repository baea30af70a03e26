import type { Worker } from "bullmq";
import { QUEUES } from "@trendgate/contracts";
import { waitFor } from "../helpers/config.ts";
import { onCleanup, runCleanups, sleep } from "../helpers/faults-proc-kit.ts";
import { startReceiver } from "../helpers/receiver.ts";
import { startStack, trendEvent, webhookBody, type Stack } from "../helpers/stack.ts";

// A queue worker whose fetch loop stops (as BullMQ's did on a Redis Cluster after a master restart, its blocking
// connection never coming back) looks healthy and takes no job again. Here the stop is injected: the delivery
// worker's next fetch never returns.
afterEach(runCleanups);

async function setup(watchdogSeconds: string) {
  const rx = await startReceiver();
  onCleanup(() => rx.close());
  const s = await startStack({ WORKER_QUEUES: `${QUEUES.trendEvents},${QUEUES.webhookDeliveries}`, WORKER_WATCHDOG_SECONDS: watchdogSeconds }, 1);
  onCleanup(() => s.close());
  const account = await s.gw.account();
  expect((await s.gw.http.post("/api/integrations/webhooks").set(account.auth).send(webhookBody(rx.url("/parked")))).status).toBe(201);
  const parked = deliveryWorker(s);
  (parked as unknown as { moveToActive: () => Promise<never> }).moveToActive = () => new Promise<never>(() => {}); // parked for good
  await s.publish(trendEvent(account.accountId));
  return { rx, s, parked };
}

const deliveryWorker = (s: Stack): Worker => s.workers[0].workers.find((w) => w.name === QUEUES.webhookDeliveries)!;

test("a delivery worker whose fetch loop stopped is replaced, and the waiting delivery goes out", async () => {
  const { rx, s, parked } = await setup("1");
  await waitFor(async () => rx.on("/parked").length === 1, { timeoutMs: 15_000 }); // two checks, then the new worker
  expect(deliveryWorker(s)).not.toBe(parked);
  expect(await s.gw.deps.queues.get(QUEUES.webhookDeliveries).getWaitingCount()).toBe(0);
});

test("with the watchdog off the same delivery waits (what the watchdog is for)", async () => {
  const { rx, s, parked } = await setup("0");
  await sleep(4000);
  expect(rx.on("/parked")).toHaveLength(0);
  expect(deliveryWorker(s)).toBe(parked);
  expect(await s.gw.deps.queues.get(QUEUES.webhookDeliveries).getWaitingCount()).toBe(1);
});

test("a busy or paused worker is left alone", async () => {
  const rx = await startReceiver(() => ({ status: 204, delayMs: 2500 })); // slow: jobs stay running
  onCleanup(() => rx.close());
  const s = await startStack({ WORKER_QUEUES: `${QUEUES.trendEvents},${QUEUES.webhookDeliveries}`, WORKER_WATCHDOG_SECONDS: "1", WEBHOOK_CONCURRENCY: "1" }, 1);
  onCleanup(() => s.close());
  const account = await s.gw.account();
  expect((await s.gw.http.post("/api/integrations/webhooks").set(account.auth).send(webhookBody(rx.url("/slow")))).status).toBe(201);
  const worker = deliveryWorker(s);
  for (let i = 0; i < 3; i++) await s.publish(trendEvent(account.accountId)); // one runs, two wait behind it
  await waitFor(async () => rx.on("/slow").length === 3, { timeoutMs: 20_000 });
  expect(deliveryWorker(s)).toBe(worker); // jobs waited while one ran: busy, not parked

  const queue = s.gw.deps.queues.get(QUEUES.webhookDeliveries);
  await queue.pause();
  onCleanup(() => queue.resume());
  await s.publish(trendEvent(account.accountId));
  await sleep(3000);
  expect(deliveryWorker(s)).toBe(worker); // paused on purpose: not replaced
}, 40_000);
