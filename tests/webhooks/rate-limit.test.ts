import { QUEUES, UpdateWebhookBody } from "@trendgate/contracts";
import { waitFor } from "../helpers/config.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startStack, trendEvent, webhookBody, type Stack } from "../helpers/stack.ts";

// A subscription's rate_limit: at most N requests reach its url in any second, across the fleet (two worker sets here,
// one Redis); a delivery over it waits its turn, never failed, dropped or counted as an attempt; others are not held up.

const BASE = "/api/integrations/webhooks";

let stack: Stack;
let rx: Receiver;
beforeAll(async () => {
  stack = await startStack({}, 2);
  rx = await startReceiver();
});
afterAll(async () => { await stack.close(); await rx.close(); });

let n = 0;
async function subscribe(auth: Record<string, string>, over: Record<string, unknown> = {}) {
  const path = `/rl-${++n}`;
  const res = await stack.gw.http.post(BASE).set(auth).send(webhookBody(rx.url(path), over));
  expect(res.status).toBe(201);
  return { id: res.body.id as string, path, body: res.body };
}

describe("rate_limit on the API", () => {
  test.each([0, -1, 1.5, "2", 10_001])("rate_limit %j answers 422 naming rate_limit, on create and on update", async (value) => {
    const a = await stack.gw.account();
    const res = await stack.gw.http.post(BASE).set(a.auth).send(webhookBody(rx.url("/never"), { rate_limit: value }));
    expect(res.status).toBe(422);
    expect(res.body.code).toBe("validation_failed");
    expect(res.body.errors.map((e: any) => e.path)).toEqual(["rate_limit"]);
    expect((await stack.gw.http.get(BASE).set(a.auth)).body.data).toEqual([]);

    const s = await subscribe(a.auth);
    const patched = await stack.gw.http.patch(`${BASE}/${s.id}`).set(a.auth).send({ rate_limit: value });
    expect(patched.status).toBe(422);
    expect(patched.body.errors.map((e: any) => e.path)).toEqual(["rate_limit"]);
  });

  test("shown on read (null: unlimited), a read writes back as it is, and null lifts it", async () => {
    const a = await stack.gw.account();
    expect((await subscribe(a.auth)).body.rate_limit).toBeNull();
    const s = await subscribe(a.auth, { rate_limit: 2 });
    expect(s.body.rate_limit).toBe(2);
    const read = (await stack.gw.http.get(`${BASE}/${s.id}`).set(a.auth)).body;
    expect(read.rate_limit).toBe(2);
    const writable = Object.fromEntries(Object.entries(read).filter(([k]) => k in UpdateWebhookBody.shape));
    const patched = await stack.gw.http.patch(`${BASE}/${s.id}`).set(a.auth).send(writable);
    expect(patched.status).toBe(200);
    expect({ ...patched.body, updated_at: null }).toEqual({ ...read, updated_at: null });
    expect((await stack.gw.http.patch(`${BASE}/${s.id}`).set(a.auth).send({ rate_limit: 50 })).body.rate_limit).toBe(50);
    expect((await stack.gw.http.patch(`${BASE}/${s.id}`).set(a.auth).send({ rate_limit: null })).body.rate_limit).toBeNull();
    expect((await stack.gw.http.get(`${BASE}/${s.id}`).set(a.auth)).body.rate_limit).toBeNull();
  });
});

describe("rate_limit on deliveries", () => {
  test("a burst of 10 to a subscription limited to 2 a second: all arrive, at most 2 in any second, each on its first attempt; its unlimited neighbour is not held up", async () => {
    const a = await stack.gw.account();
    const limited = await subscribe(a.auth, { rate_limit: 2 });
    const free = await subscribe(a.auth);
    const events = Array.from({ length: 10 }, (_, i) => trendEvent(a.accountId, { trend_id: `trend_rl_${n}_${i}`, velocity: 150, previous_velocity: 80 }));
    await Promise.all(events.map((e) => stack.publish(e)));

    const got = await waitFor(async () => rx.on(limited.path).length >= 10 && rx.on(limited.path), { timeoutMs: 30_000 });
    await new Promise((r) => setTimeout(r, 700)); // a slot and more: nothing further arrives
    expect(rx.on(limited.path)).toHaveLength(10);
    expect(new Set(got.map((r) => r.headers["webhook-id"])).size).toBe(10); // ten deliveries, none sent twice
    const at = got.map((r) => r.at).sort((x, y) => x - y);
    // No second at the receiver holds more than two: any three consecutive arrivals span at least a second.
    for (let i = 0; i + 2 < at.length; i++) expect(at[i + 2] - at[i]).toBeGreaterThanOrEqual(1000);

    // The neighbour without a limit had all ten before the limited one's third was allowed out.
    const freeGot = rx.on(free.path);
    expect(freeGot).toHaveLength(10);
    expect(Math.max(...freeGot.map((r) => r.at))).toBeLessThan(at[2]);

    // Delayed, not failed: every delivery succeeded on attempt 1, one execution each, no failed or retry job.
    const deliveries = await waitFor(async () => {
      const rows = await stack.gw.deps.db.webhookDelivery.findMany({ where: { subscriptionId: limited.id } });
      return rows.length === 10 && rows.every((d) => d.status === "succeeded") && rows;
    });
    expect(deliveries.map((d) => d.attempts)).toEqual(Array(10).fill(1));
    const ex = (await stack.gw.http.get(`${BASE}/${limited.id}/executions?limit=50`).set(a.auth)).body.data;
    expect(ex.map((e: any) => [e.attempt, e.outcome])).toEqual(Array(10).fill([1, "succeeded"]));
    const queue = stack.gw.deps.queues.get(QUEUES.webhookDeliveries);
    for (const d of deliveries) {
      expect(await (await queue.getJob(`${d.id}-1`))?.getState()).toBe("completed");
      expect(await queue.getJob(`${d.id}-2`)).toBeUndefined();
    }
  });
});
