import crypto from "node:crypto";
import { waitFor } from "../helpers/config.ts";
import { trendEvent } from "../helpers/stack.ts";
import { BASE, faultReceiver, runCleanups, stack, subscriptions } from "../helpers/faults-kit.ts";

// Issue 8, item 3: a subscription disabled by a 410 while trend events keep coming. The workers cache subscriptions
// (WEBHOOK_SUBSCRIPTION_CACHE_MS, 2 s by default), so for a while they still believe it is active. Every firing must
// still leave a delivery row (here: failed, "subscription disabled"), so that after the owner fixes the endpoint,
// resume + recover sends every one of them.

afterEach(runCleanups);

test("firings around a 410 disable all leave a delivery row, and recover sends every one of them", async () => {
  let gone = true;
  const rx = await faultReceiver(() => (gone ? { status: 410 } : { status: 204 }));
  const s = await stack({ WEBHOOK_SUBSCRIPTION_CACHE_MS: "2000" }, 2); // the production cache, two worker sets
  const { account, ids: [webhookId] } = await subscriptions(s, [rx.url("/gone")]);
  const db = s.gw.deps.db;
  const since = new Date(Date.now() - 1000).toISOString();

  // 50 firing events, one every 60 ms (3 s: before, during and after the disable, well inside the cache's life).
  const events = Array.from({ length: 50 }, () => trendEvent(account.accountId, { id: `evt_${crypto.randomUUID()}`, velocity: 150, previous_velocity: 50 }));
  for (const e of events) {
    expect(await s.publish(e)).toBe(true);
    await new Promise((r) => setTimeout(r, 60));
  }
  await waitFor(async () => (await db.trendEventRecord.count({ where: { id: { in: events.map((e) => e.id) }, dispatchedAt: { not: null } } })) === 50, { timeoutMs: 20_000 });

  // The 410 disabled it, and the account was told.
  await waitFor(async () => (await db.webhookSubscription.findUnique({ where: { id: webhookId } }))?.status === "disabled");
  const told = await s.gw.http.get("/api/events").query({ type: "webhook.disabled" }).set(account.auth);
  expect(told.body.data).toEqual([expect.objectContaining({ type: "webhook.disabled", data: expect.objectContaining({ webhook_id: webhookId }) })]);

  // Every firing has its row, and none is left pending: the ones sent got the 410, the rest are recorded as missed.
  await waitFor(async () => (await db.webhookDelivery.count({ where: { subscriptionId: webhookId, status: "pending" } })) === 0, { timeoutMs: 15_000 });
  const rows = await db.webhookDelivery.findMany({ where: { subscriptionId: webhookId } });
  expect(rows.map((r) => r.eventId).sort()).toEqual(events.map((e) => e.id).sort());
  expect(rows.every((r) => r.status === "failed")).toBe(true);
  expect(rows.filter((r) => r.lastError === "subscription disabled").length).toBeGreaterThan(0);
  const sentBefore = rx.requests.length;
  expect(sentBefore).toBeGreaterThanOrEqual(1);
  expect(sentBefore).toBeLessThan(50); // the disable stopped most of them

  // The owner fixes the endpoint, resumes and recovers: every firing arrives, each once.
  gone = false;
  expect((await s.gw.http.post(`${BASE}/${webhookId}/resume`).set(account.auth)).status).toBe(200);
  const recovered = await s.gw.http.post(`${BASE}/${webhookId}/recover`).set(account.auth).send({ since });
  expect(recovered.status).toBe(202);
  expect(recovered.body.recovered).toBe(50);
  await waitFor(async () => (await db.webhookDelivery.count({ where: { subscriptionId: webhookId, status: "succeeded" } })) === 50, { timeoutMs: 20_000 });
  const delivered = rx.requests.slice(sentBefore).filter((r) => r.status === 204).map((r) => r.webhookId);
  expect(new Set(delivered)).toEqual(new Set(rows.map((r) => r.id)));
  expect(delivered).toHaveLength(50);
}, 60_000);

test("a firing for a subscription disabled a moment ago is recorded, not dropped, with the cache still saying active", async () => {
  const rx = await faultReceiver();
  const s = await stack({ WEBHOOK_SUBSCRIPTION_CACHE_MS: "60000" }, 1); // the cache will not notice within this test
  const { account, ids: [webhookId] } = await subscriptions(s, [rx.url("/stale")]);
  const db = s.gw.deps.db;

  const first = trendEvent(account.accountId, { velocity: 150, previous_velocity: 50 });
  await s.publish(first); // loads the cache: active
  await waitFor(async () => (await db.webhookDelivery.count({ where: { subscriptionId: webhookId, status: "succeeded" } })) === 1);

  // Disabled behind the workers' back (as another worker does on a 410), then more firings.
  await db.webhookSubscription.update({ where: { id: webhookId }, data: { status: "disabled", disabledReason: "the endpoint answered 410 Gone" } });
  const later = Array.from({ length: 5 }, () => trendEvent(account.accountId, { id: `evt_${crypto.randomUUID()}`, velocity: 150, previous_velocity: 50 }));
  for (const e of later) await s.publish(e);
  await waitFor(async () => (await db.webhookDelivery.count({ where: { subscriptionId: webhookId } })) === 6, { timeoutMs: 15_000 });
  const missed = await db.webhookDelivery.findMany({ where: { subscriptionId: webhookId, eventId: { in: later.map((e) => e.id) } } });
  expect(missed.map((r) => [r.status, r.lastError])).toEqual(later.map(() => ["failed", "subscription disabled"]));
  expect(rx.requests).toHaveLength(1); // nothing was sent to the disabled endpoint
}, 30_000);
