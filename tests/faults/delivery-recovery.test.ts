import { createLogger } from "@trendgate/logger";
import { QUEUES } from "@trendgate/contracts";
import { enqueueDeliveries, serializePayload, testPayload } from "@trendgate/webhooks";
import { newId } from "@trendgate/db";
import { startWorkers } from "../../apps/worker/src/run-workers.ts";
import { waitFor } from "../helpers/config.ts";
import { BASE, countBy, faultReceiver, privateRedis, runCleanups, stack, subscriptions } from "../helpers/faults-kit.ts";

// Issue 8, item 6: after Redis loses every job (FLUSHALL), the outbox sweeper re-queues every orphaned delivery
// from Postgres: first attempts, retries that were due, and more rows than one sweep pass takes. Deliveries that are
// not due, or whose subscription is paused, stay as they are. (How fast: `npm run bench -- webhooks`.)

afterEach(runCleanups);

test("after a FLUSHALL the sweeper re-queues every orphaned delivery, and each is sent once", async () => {
  const redis = await privateRedis();
  const rx = await faultReceiver();
  const s = await stack({ REDIS_URL: redis.url, SWEEP_GRACE_SECONDS: "1", SWEEP_INTERVAL_MS: "300" }, 1);
  await s.workers.pop()!.close(); // no worker yet: the jobs wait in Redis

  const { account, ids: subs } = await subscriptions(s, [rx.url("/r0"), rx.url("/r1"), rx.url("/r2"), rx.url("/paused")]);
  const [paused] = subs.splice(3, 1);
  expect((await s.gw.http.post(`${BASE}/${paused}/pause`).set(account.auth)).status).toBe(200);
  const db = s.gw.deps.db;
  const body = serializePayload(testPayload({ id: subs[0], createdAt: new Date("2026-11-23T00:00:00Z"), thresholdValue: 100 }, "http://localhost:3000"));
  const payload = JSON.parse(body);
  const now = Date.now();

  // 1,500 due first attempts, 300 due retries (attempt 1 failed), 100 retries not due for an hour, 100 held (paused).
  const first = Array.from({ length: 1500 }, () => newId("msg"));
  const retries = Array.from({ length: 300 }, () => newId("msg"));
  const notDue = Array.from({ length: 100 }, () => newId("msg"));
  const held = Array.from({ length: 100 }, () => newId("msg"));
  const row = (id: string, i: number, over: Record<string, unknown> = {}) =>
    ({ id, accountId: account.accountId, subscriptionId: subs[i % 3], trigger: "test", payload, nextAttemptAt: new Date(now - 5000), ...over });
  await db.webhookDelivery.createMany({ data: [
    ...first.map((id, i) => row(id, i)),
    ...retries.map((id, i) => row(id, i, { attempts: 1, trigger: "trend_event", lastError: "HTTP 500" })),
    ...notDue.map((id, i) => row(id, i, { attempts: 1, nextAttemptAt: new Date(now + 3_600_000) })),
    ...held.map((id) => row(id, 0, { subscriptionId: paused })),
  ] });
  const job = (id: string, sub: string, attempt: number) => ({ job: { delivery_id: id, webhook_id: sub, attempt, trigger: "test" as const, body }, delayMs: 0 });
  await enqueueDeliveries(s.gw.deps.queues, [...first.map((id, i) => job(id, subs[i % 3], 1)), ...retries.map((id, i) => job(id, subs[i % 3], 2))]);
  const queue = s.gw.deps.queues.get(QUEUES.webhookDeliveries);
  expect(await queue.getWaitingCount()).toBe(1800);

  expect(await redis.flushall()).toBe("OK");
  expect(await queue.getWaitingCount()).toBe(0);

  // A worker comes back; its sweeper finds the orphans in Postgres.
  s.workers.push(startWorkers(s.gw.deps.config, createLogger({ level: "silent" })));
  const due = [...first, ...retries];
  await waitFor(async () => (await db.webhookDelivery.count({ where: { id: { in: due }, status: "succeeded" } })) === due.length, { timeoutMs: 90_000, everyMs: 250 });

  const perId = countBy(rx.requests.map((r) => r.webhookId));
  expect(due.filter((id) => perId.get(id) !== 1)).toEqual([]); // each sent, once
  expect(rx.requests).toHaveLength(due.length);
  // The retries went out as attempt 2, recorded as recovered.
  const recovery = await db.webhookExecution.findMany({ where: { deliveryId: { in: retries } }, select: { attempt: true, trigger: true } });
  expect(recovery).toHaveLength(300);
  expect(recovery.every((e) => e.attempt === 2 && e.trigger === "recovery")).toBe(true);
  // Not due yet, or paused: left alone.
  expect(await db.webhookDelivery.count({ where: { id: { in: [...notDue, ...held] }, status: "pending", attempts: { in: [0, 1] } } })).toBe(200);
  for (const id of notDue) expect(await queue.getJob(`${id}-2`)).toBeUndefined();
  for (const id of held) expect(await queue.getJob(`${id}-1`)).toBeUndefined();
}, 150_000);
