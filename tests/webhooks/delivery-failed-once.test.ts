import { recordAccountEvents } from "@trendgate/db";
import { startGateway, type TestGateway } from "../helpers/gateway.ts";

// webhook.delivery_failed is recorded at most once an hour per subscription, also when several workers fail the last
// attempt of deliveries of one subscription at the same moment (the check and the write are one locked step).

let gw: TestGateway;
beforeAll(async () => { gw = await startGateway(); });
afterAll(async () => { await gw.close(); });

test("writers recording the same once-an-hour notice at the same moment write it once", async () => {
  const a = await gw.account();
  const notice = (webhookId: string, i: number) => ({
    accountId: a.accountId, type: "webhook.delivery_failed" as const, data: { webhook_id: webhookId, delivery_id: `msg_${i}`, attempts: 4, error: "HTTP 500" },
    once: { match: { webhook_id: webhookId }, since: new Date(Date.now() - 3_600_000) },
  });
  // Ten subscriptions, eight writers each, all at once: each subscription's notice is written once.
  const subs = Array.from({ length: 10 }, (_, k) => `wh_${k}`);
  await Promise.all(subs.flatMap((w) => Array.from({ length: 8 }, (_, i) => recordAccountEvents(gw.deps.db, [notice(w, i)]))));
  const rows = await gw.deps.db.accountEvent.findMany({ where: { accountId: a.accountId, type: "webhook.delivery_failed" }, select: { data: true } });
  const perSub = new Map<string, number>();
  for (const r of rows) { const w = (r.data as { webhook_id: string }).webhook_id; perSub.set(w, (perSub.get(w) ?? 0) + 1); }
  expect(subs.filter((w) => perSub.get(w) !== 1)).toEqual([]);
});
