import { topicSignalsBetween, type Db } from "@trendgate/db";
import { driversOf, type Drivers } from "./drivers.ts";

/** The week before a trend's window is its baseline. */
const BASELINE_MS = 7 * 86_400_000;
/** Signals read per window: enough for the terms, bounded for a huge topic (the newest are kept). */
const MAX_SIGNALS = { recent: 2000, baseline: 5000 };

/** A topic's drivers over [since, now) against the week before `since`. */
export async function loadDrivers(db: Db, t: { accountId: string; name: string; category: string }, since: Date, now = new Date()): Promise<Drivers> {
  const [recent, baseline] = await Promise.all([
    topicSignalsBetween(db, t, since, new Date(now.getTime() + 1), MAX_SIGNALS.recent),
    topicSignalsBetween(db, t, new Date(since.getTime() - BASELINE_MS), since, MAX_SIGNALS.baseline),
  ]);
  return driversOf(t.name, recent, baseline);
}

/**
 * Where a trend's drivers window starts, from the instant it was detected: the bucket before (a detection from a
 * closed bucket comes during the next one; from the bucket in progress, the one before adds an hour of usual posts).
 */
export const driversSince = (t: { detectedAt: Date }, bucketMs: number) => new Date((Math.floor(t.detectedAt.getTime() / bucketMs) - 1) * bucketMs);
