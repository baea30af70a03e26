import type { TrendEvent } from "@trendgate/contracts";

// Trigger and recovery windows (of a webhook subscription or a chat setup): the one rule the live paths (apps/worker
// packages/webhooks firings.ts, the operator queue's intake) and the backtest (packages/webhooks backtest.ts) apply.

/** The firings a trigger window holds: everything but an end (it closes what was delivered) or a cooling down (it says a trend calmed). */
export const heldByWindow = (sub: { triggerWindowMinutes: number }, e: TrendEvent) => sub.triggerWindowMinutes > 0 && e.type !== "trend.ended" && e.type !== "trend.cooling";

/** A re-detection of a trend that ended less than the recovery window before `at`. */
export const inRecoveryWindow = (sub: { recoveryWindowMinutes: number }, e: TrendEvent, at: Date) =>
  sub.recoveryWindowMinutes > 0 && e.type === "trend.detected" && !!e.previous_ended_at &&
  at.getTime() - Date.parse(e.previous_ended_at) < sub.recoveryWindowMinutes * 60_000;
