import { waitFor } from "../helpers/config.ts";
import { BASE, faultReceiver, onCleanup, runCleanups, stack, subscriptions } from "../helpers/faults-kit.ts";

// Issue 8, item 5: one endpoint that hangs must cost only its own subscription's slots. Six healthy subscriptions
// share its host (127.0.0.1:<port>, as many customers share one automation or chat host). With a per-host cap only,
// the hanging endpoint held every slot the host had and its neighbours waited for its timeouts.

afterEach(runCleanups);

test("a hanging endpoint does not hold up healthy endpoints on the same host", async () => {
  const rx = await faultReceiver((path) => (path === "/hang" ? "hang" : { status: 204 }));
  const s = await stack({
    OUTBOUND_TIMEOUT_MS: "90000", // the hanging requests outlive the test
    WEBHOOK_ENDPOINT_CONCURRENCY: "2", // per subscription
    WEBHOOK_DESTINATION_CONCURRENCY: "6", // per host: the safety net
  }, 1);
  onCleanup(async () => rx.releaseHung()); // before the workers stop (they wait for their running jobs)
  const healthyPaths = Array.from({ length: 6 }, (_, i) => `/ok${i}`);
  const { account, ids: [hanging, ...healthy] } = await subscriptions(s, [rx.url("/hang"), ...healthyPaths.map((p) => rx.url(p))]);
  const send = async (id: string) => {
    const res = await s.gw.http.post(`${BASE}/${id}/test`).set(account.auth);
    expect(res.status).toBe(202);
    return res.body.delivery_id as string;
  };

  // The hanging endpoint gets its deliveries first and is stuck on them...
  const stuck: string[] = [];
  for (let i = 0; i < 12; i++) stuck.push(await send(hanging));
  await waitFor(async () => rx.openNow("/hang") >= 2, { timeoutMs: 15_000 });

  // ... then its six neighbours get five each.
  const ok: string[] = [];
  for (const id of healthy) for (let i = 0; i < 5; i++) ok.push(await send(id));
  const db = s.gw.deps.db;
  await waitFor(async () => (await db.webhookDelivery.count({ where: { id: { in: ok }, status: "succeeded" } })) === ok.length, { timeoutMs: 30_000 });

  // All of them arrived while the hanging endpoint was still hanging: none of its deliveries has finished.
  expect(rx.openNow("/hang")).toBe(2);
  expect(await db.webhookExecution.count({ where: { subscriptionId: hanging } })).toBe(0);
  expect(await db.webhookDelivery.count({ where: { id: { in: stuck }, status: "pending" } })).toBe(12);
  for (const p of healthyPaths) expect(rx.on(p).filter((r) => r.status === 204)).toHaveLength(5);
  // The caps held: at most 2 requests at once to the hanging endpoint, at most 6 to the host.
  expect(rx.maxOpen("/hang")).toBe(2);
  expect(rx.maxOpenTotal()).toBeLessThanOrEqual(6);

  // Once it answers again, its deliveries go through too.
  rx.releaseHung();
  await waitFor(async () => (await db.webhookDelivery.count({ where: { id: { in: stuck }, status: "succeeded" } })) === 12, { timeoutMs: 30_000 });
}, 60_000);
