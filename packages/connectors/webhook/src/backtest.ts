import type { TrendEvent } from "@trendgate/contracts";
import { triggerFires, type TriggerSubscription } from "./triggers.ts";
import { heldByWindow, inRecoveryWindow } from "@trendgate/trends";

// A subscription's rules replayed over stored trend events: what it would have received. The same decisions as the
// live path, in memory: the trigger (triggers.ts), the recovery window, the trigger window (whether the trend was still
// anomalous at its end is the caller's answer: the detector's), and the cooldown as fireInstant / fireDigest apply it.

export interface BacktestRules extends TriggerSubscription {
  deliveryMode: string;
  cooldownSeconds: number;
  triggerWindowMinutes: number;
  recoveryWindowMinutes: number;
}

export interface PastEvent {
  event: TrendEvent;
  /** When it was published (the live path fires it then). */
  at: Date;
}

export interface BacktestDelivery {
  event: TrendEvent;
  /** When it would have been sent: at once, after a trigger window, or at the end of a digest's cooldown. */
  at: Date;
}

export interface BacktestResult {
  deliveries: BacktestDelivery[];
  suppressed: { cooldown: number; trigger_window: number; recovery_window: number };
}

/** The events (in publication order) that fire the rules and are held by their trigger window: ask the detector about these. */
export function windowChecks(rules: BacktestRules, events: PastEvent[]): PastEvent[] {
  return events.filter((p) => triggerFires(rules, p.event) && !inRecoveryWindow(rules, p.event, p.at) && heldByWindow(rules, p.event));
}

/**
 * Replays `events` (oldest first) through the rules. `lasted(p)`: for a firing held by the trigger window, whether a
 * detection pass found its trend anomalous at the window's end (from windowChecks, answered by the detector).
 */
export function replaySubscription(rules: BacktestRules, events: PastEvent[], lasted: (p: PastEvent) => boolean): BacktestResult {
  const result: BacktestResult = { deliveries: [], suppressed: { cooldown: 0, trigger_window: 0, recovery_window: 0 } };
  const firings: PastEvent[] = [];
  for (const p of events) {
    if (!triggerFires(rules, p.event)) continue;
    if (inRecoveryWindow(rules, p.event, p.at)) { result.suppressed.recovery_window++; continue; }
    if (!heldByWindow(rules, p.event)) { firings.push(p); continue; }
    if (!lasted(p)) { result.suppressed.trigger_window++; continue; }
    // Decided one detection interval after the window; the delay does not change what the cooldown sees in order.
    firings.push({ event: p.event, at: new Date(p.at.getTime() + rules.triggerWindowMinutes * 60_000) });
  }
  firings.sort((a, b) => a.at.getTime() - b.at.getTime());
  const cooldownMs = rules.cooldownSeconds * 1000;
  if (!cooldownMs) {
    result.deliveries = firings.map((f) => ({ event: f.event, at: f.at }));
    return result;
  }
  let lastFired: number | null = null;
  // cooldown_digest: the held delivery of the current window, due at its end.
  let held: BacktestDelivery | null = null;
  for (const f of firings) {
    const t = f.at.getTime();
    if (held && held.at.getTime() <= t) { result.deliveries.push(held); held = null; }
    const windowEnd: number = lastFired === null ? t : lastFired + cooldownMs;
    if (windowEnd <= t) {
      lastFired = t;
      result.deliveries.push({ event: f.event, at: f.at });
    } else if (rules.deliveryMode !== "cooldown_digest") {
      result.suppressed.cooldown++;
    } else if (held) {
      result.suppressed.cooldown++; // one digest per window keeps the stronger firing
      if (f.event.velocity > held.event.velocity) held = { event: f.event, at: held.at };
    } else {
      held = { event: f.event, at: new Date(windowEnd) };
      lastFired = windowEnd; // the digest reserves the next window
    }
  }
  if (held) result.deliveries.push(held);
  return result;
}
