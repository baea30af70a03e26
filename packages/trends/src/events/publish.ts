import crypto from "node:crypto";
import { QUEUES, TrendEvent } from "@trendgate/contracts";
import { insertTrendEvents, type Db } from "@trendgate/db";
import type { Queues } from "@trendgate/queues";

/**
 * Publishes trend events exactly once per event id: the rows in trend_events are written first (ids seen before are
 * skipped), then the new ones are queued together as one trend-events job (the engine publishes a detection run's
 * events at once, and matching them as a batch is far cheaper than one job each). If queueing fails, the outbox
 * sweeper queues them later. Returns the ids published now.
 */
export async function publishTrendEvents(deps: { db: Db; queues: Queues }, events: TrendEvent[]): Promise<string[]> {
  const parsed = events.map((e) => TrendEvent.parse(e));
  const fresh = await insertTrendEvents(deps.db, parsed);
  const batch = parsed.filter((e) => fresh.has(e.id));
  if (batch.length) await enqueueTrendEvents(deps.queues, batch).catch(() => { /* the sweeper queues them */ });
  return batch.map((e) => e.id);
}

export async function publishTrendEvent(deps: { db: Db; queues: Queues }, event: TrendEvent): Promise<boolean> {
  return (await publishTrendEvents(deps, [event])).length === 1;
}

/** The job id is derived from the event ids, so queueing the same batch twice (the sweeper) is a no-op. */
export async function enqueueTrendEvents(queues: Queues, events: TrendEvent[]) {
  const jobId = `evb_${crypto.createHash("sha256").update(events.map((e) => e.id).join(",")).digest("hex").slice(0, 32)}`;
  await queues.add(QUEUES.trendEvents, { events }, { jobId, removeOnComplete: true }); // trend_events.dispatched_at is the record
  return jobId;
}
