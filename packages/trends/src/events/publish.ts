import crypto from "node:crypto";
import { boundTrendEvent, QUEUES, TrendEvent } from "@trendgate/contracts";
import { insertTrendEvents, type Db } from "@trendgate/db";
import type { Queues } from "@trendgate/queues";

/** Approximate cap (MAXLEN ~) of each account's live stream: how far back a WebSocket client can resume. */
export const TREND_STREAM_MAXLEN = 10_000;

/** The Redis stream an account's newly published trend events are appended to (read by the gateway's /api/stream). */
export const trendStreamKey = (prefix: string, accountId: string) => `${prefix}:trend-stream:${accountId}`;

/**
 * Publishes trend events exactly once per event id: the rows in trend_events are written first (ids seen before are
 * skipped), then the new ones are appended to their account's Redis stream (live WebSocket clients) and queued
 * together as one trend-events job (the engine publishes a detection run's events at once, and matching them as a
 * batch is far cheaper than one job each). If queueing fails, the outbox sweeper queues them later; the stream is
 * best effort (a client that missed an event can read it from the API). Returns the ids published now.
 * Every event is first held to TREND_EVENT_LIMITS and `maxBytes` serialized (text cut with "…", never refused), so
 * the row, the stream message, the job and every delivery body built from it are bounded.
 */
export async function publishTrendEvents(deps: { db: Db; queues: Queues }, events: TrendEvent[], opts: { maxBytes?: number } = {}): Promise<string[]> {
  const parsed = boundTrendEvents(events, opts.maxBytes);
  const fresh = await insertTrendEvents(deps.db, parsed);
  const batch = parsed.filter((e) => fresh.has(e.id));
  await dispatchTrendEvents(deps.queues, batch, opts);
  return batch.map((e) => e.id);
}

/** Events held to their limits and validated: what is stored, streamed and queued. */
export const boundTrendEvents = (events: TrendEvent[], maxBytes?: number) => events.map((e) => TrendEvent.parse(boundTrendEvent(e, maxBytes)));

/** Streams and queues events whose rows are stored (see publishTrendEvents); a failure is left to the sweeper. */
export async function dispatchTrendEvents(queues: Queues, batch: TrendEvent[], opts: { maxBytes?: number } = {}) {
  if (!batch.length) return;
  await Promise.all([
    streamTrendEvents(queues, batch).catch(() => { /* best effort: live clients only */ }),
    enqueueTrendEvents(queues, batch, opts).catch(() => { /* the sweeper queues them */ }),
  ]);
}

/**
 * XADDs each event to its account's stream, trimming approximately. Issued together, the commands go out in one
 * write (auto-pipelining keeps their order; on a Redis Cluster it groups them per master, where an explicit pipeline
 * would refuse keys of different slots).
 */
export async function streamTrendEvents(queues: Queues, events: TrendEvent[]) {
  await Promise.all(events.map((e) =>
    queues.connection.xadd(trendStreamKey(queues.prefix, e.account_id), "MAXLEN", "~", TREND_STREAM_MAXLEN, "*", "event", JSON.stringify(e))));
}

export async function publishTrendEvent(deps: { db: Db; queues: Queues }, event: TrendEvent): Promise<boolean> {
  return (await publishTrendEvents(deps, [event])).length === 1;
}

/**
 * The job id is derived from the event ids, so queueing the same batch twice (the sweeper) is a no-op. Events are
 * bounded again here: the sweeper re-queues stored rows, which an older version may have written unbounded.
 */
export async function enqueueTrendEvents(queues: Queues, events: TrendEvent[], opts: { maxBytes?: number } = {}) {
  const jobId = `evb_${crypto.createHash("sha256").update(events.map((e) => e.id).join(",")).digest("hex").slice(0, 32)}`;
  const bounded = events.map((e) => boundTrendEvent(e, opts.maxBytes));
  await queues.add(QUEUES.trendEvents, { events: bounded }, { jobId, removeOnComplete: true }); // trend_events.dispatched_at is the record
  return jobId;
}
