import type { TrendEvent } from "@trendgate/contracts";
import type { Db } from "./client.ts";

// Firings held for a subscription's trigger window (see the held_firings table).

export interface HoldInput {
  subscriptionId: string;
  event: Pick<TrendEvent, "id" | "account_id" | "trend_id">;
  windowMinutes: number;
}

/**
 * Holds firings until their window ends plus `graceSeconds` (a detection pass has run after the window by then).
 * A firing held before (a re-processed batch) keeps its first hold.
 */
export async function holdFirings(db: Db, holds: HoldInput[], graceSeconds: number): Promise<void> {
  if (!holds.length) return;
  await db.$pool.query({
    name: "tg_hold_firings",
    text: `INSERT INTO held_firings (subscription_id, event_id, account_id, trend_id, window_minutes, held_at, due_at)
           SELECT u.sub, u.event, u.account, u.trend, u.minutes, now() AT TIME ZONE 'UTC', (now() AT TIME ZONE 'UTC') + (u.minutes * 60 + $6) * interval '1 second'
             FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[]) AS u(sub, event, account, trend, minutes)
           ON CONFLICT (subscription_id, event_id) DO NOTHING`,
    values: [holds.map((h) => h.subscriptionId), holds.map((h) => h.event.id), holds.map((h) => h.event.account_id), holds.map((h) => h.event.trend_id), holds.map((h) => h.windowMinutes), graceSeconds],
  });
}

/** A due held firing with what decides it: the event, and whether its trend stayed anomalous through the window. */
export interface DueFiring {
  subscriptionId: string;
  eventId: string;
  windowMinutes: number;
  event: TrendEvent | null;
  /** A detection pass found the trend anomalous at least window_minutes after the firing was held (and it is open). */
  lasted: boolean;
}

/** Up to `limit` held firings due now, oldest first. */
export async function dueFirings(db: Db, limit: number): Promise<DueFiring[]> {
  const { rows } = await db.$pool.query<{ subscription_id: string; event_id: string; window_minutes: number; payload: TrendEvent | null; lasted: boolean }>({
    name: "tg_due_firings",
    text: `SELECT h.subscription_id, h.event_id, h.window_minutes, e.payload,
                  coalesce(t.status = 'active' AND t.last_anomalous_at >= h.held_at + h.window_minutes * interval '1 minute', false) AS lasted
             FROM held_firings h
             LEFT JOIN trend_events e ON e.id = h.event_id
             LEFT JOIN trends t ON t.id = h.trend_id
            WHERE h.due_at <= (now() AT TIME ZONE 'UTC') ORDER BY h.due_at LIMIT $1`,
    values: [limit],
  });
  return rows.map((r) => ({ subscriptionId: r.subscription_id, eventId: r.event_id, windowMinutes: r.window_minutes, event: r.payload, lasted: r.lasted }));
}

/** Forgets held firings once decided. */
export async function releaseFirings(db: Db, done: { subscriptionId: string; eventId: string }[]): Promise<void> {
  if (!done.length) return;
  await db.$pool.query({
    name: "tg_release_firings",
    text: `DELETE FROM held_firings h USING unnest($1::text[], $2::text[]) AS u(sub, event) WHERE h.subscription_id = u.sub AND h.event_id = u.event`,
    values: [done.map((d) => d.subscriptionId), done.map((d) => d.eventId)],
  });
}

/** The fields routing reads of each subscription (the trend-events processor caches the same per account). */
export const ROUTED_SUBSCRIPTION_FIELDS = {
  id: true, status: true, triggerType: true, thresholdValue: true, category: true, deliveryMode: true, cooldownSeconds: true, eventTypes: true, filter: true,
  sensitivity: true, triggerWindowMinutes: true, recoveryWindowMinutes: true,
} as const;

export const loadRoutedSubscriptions = (db: Db, ids: string[]) => db.webhookSubscription.findMany({ where: { id: { in: ids } }, select: ROUTED_SUBSCRIPTION_FIELDS });
export const accountRoutedSubscriptions = (db: Db, accountId: string) => db.webhookSubscription.findMany({ where: { accountId }, select: ROUTED_SUBSCRIPTION_FIELDS });
export type RoutedSubscription = Awaited<ReturnType<typeof accountRoutedSubscriptions>>[number];
