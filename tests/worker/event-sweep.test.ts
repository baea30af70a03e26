import { QUEUES, type TrendEvent } from "@trendgate/contracts";
import { createAccount, newId } from "@trendgate/db";
import { createLogger } from "@trendgate/logger";
import { createWorkerDeps } from "../../apps/worker/src/run-workers.ts";
import { OutboxSweeper } from "../../apps/worker/src/sweepers/outbox-sweeper.ts";
import { testConfig } from "../helpers/config.ts";
import { trendEvent } from "../helpers/stack.ts";

// Trend events whose fan-out job was lost are re-queued by the sweeper from trend_events. It pages through all of
// them: more lost events than one batch holds (or a batch that stays unmatched, its fan-out failing) must not hide
// the events behind them.

test("one sweep re-queues every undispatched trend event, page by page, not only the oldest batch", async () => {
  const deps = createWorkerDeps(testConfig({ SWEEP_GRACE_SECONDS: "1" }), createLogger({ level: "silent" }));
  const account = await createAccount(deps.db, "event sweep", "free");
  const queue = deps.queues.get(QUEUES.trendEvents);
  try {
    // Events other test files in this jest worker's database left undispatched (passes run without a fan-out worker)
    // would be swept too: count only this test's.
    await deps.db.trendEventRecord.updateMany({ where: { dispatchedAt: null }, data: { dispatchedAt: new Date() } });
    const n = 1_234; // over two pages of 500
    const events: TrendEvent[] = Array.from({ length: n }, () => trendEvent(account.id, { id: newId("evt") }));
    const createdAt = new Date(Date.now() - 60_000);
    await deps.db.trendEventRecord.createMany({ data: events.map((e) => ({ id: e.id, accountId: account.id, type: e.type, trendId: e.trend_id, payload: e as object, createdAt })) });

    const sweeper = new OutboxSweeper(deps, { deliveries: false, events: true });
    expect((await sweeper.sweep()).events).toBe(n);
    const queued = new Set((await queue.getJobs(["waiting"])).flatMap((j) => (j.data as { events: TrendEvent[] }).events.map((e) => e.id)));
    expect(events.filter((e) => !queued.has(e.id))).toEqual([]);
  } finally {
    await queue.obliterate({ force: true });
    await deps.db.trendEventRecord.deleteMany({ where: { accountId: account.id } });
    await deps.db.account.delete({ where: { id: account.id } });
    await deps.queues.close();
    deps.queues.connection.disconnect();
    await deps.db.$disconnect();
  }
});
