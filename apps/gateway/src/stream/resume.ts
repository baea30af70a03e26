import type { RedisConnection } from "@trendgate/queues";
import { ApiError } from "../http/api-error.ts";
import { compareStreamIds } from "./ids.ts";

const invalid = (message: string) =>
  new ApiError("validation_failed", "last_event_id cannot be resumed from", { errors: [{ location: "query", path: "last_event_id", message, code: "unknown_event_id" }] });

/**
 * A resume point must be an event this account's stream still holds: an id older than the oldest kept means events
 * were lost (trimmed) in between, and an id the stream never had (invented, another account's, from a wiped Redis)
 * would otherwise replay nothing and look like "no news". Both are refused with 422, saying what to do instead.
 */
export async function checkResumePoint(redis: RedisConnection, key: string, id: string): Promise<void> {
  const [[exact], [first], [last]] = await Promise.all([
    redis.xrange(key, id, id, "COUNT", 1), redis.xrange(key, "-", "+", "COUNT", 1), redis.xrevrange(key, "+", "-", "COUNT", 1),
  ]);
  if (exact) return;
  if (first && compareStreamIds(id, first[0]) < 0) {
    throw invalid(`older than the oldest event kept (${first[0]}): events after it may be gone; read GET /api/trends, then reconnect without last_event_id`);
  }
  throw invalid(last
    ? `not an event of this stream (its events run from ${first![0]} to ${last[0]}): resume from an id you received, or connect without last_event_id`
    : "not an event of this stream (it holds none yet): connect without last_event_id");
}
