import { QUEUES, TrendEvent } from "@trendgate/contracts";
import { insertTrendEvent, type Db } from "@trendgate/db";
import type { Queues } from "@trendgate/queues";

/**
 * Publishes a trend event exactly once per event id: the row in trend_events is written first (a repeat with the
 * same id is a no-op), then the job is queued with the event id as its job id. If queueing fails, the outbox
 * sweeper queues it later. Every outlet (webhook triggers today) consumes the trend-events queue.
 */
export async function publishTrendEvent(deps: { db: Db; queues: Queues }, event: TrendEvent): Promise<boolean> {
  const e = TrendEvent.parse(event);
  const fresh = await insertTrendEvent(deps.db, e);
  if (!fresh) return false;
  await deps.queues.add(QUEUES.trendEvents, e, { jobId: e.id }).catch(() => { /* swept later */ });
  return true;
}
