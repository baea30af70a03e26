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

/** The events (in publication order) that fire the rules and are held by their trigger window: ask the detector about these. */
export function windowChecks(rules: BacktestRules, events: PastEvent[]): PastEvent[] {
  return events.filter((p) => triggerFires(rules, p.event) && !inRecoveryWindow(rules, p.event, p.at) && heldByWindow(rules, p.event));
}

/**
 * Replays events (oldest first, a page at a time: push each page, then finish) through the rules, handing each
 * delivery to `deliver` in order of its time. Only the firings a trigger window still holds and a digest's held
 * delivery are kept between pages, so a long history is never in memory at once.
 */
export class SubscriptionReplay {
  readonly suppressed = { cooldown: 0, trigger_window: 0, recovery_window: 0 };
  /** Firings decided at their trigger window's end: in order, as every one is delayed by the same window. */
  private delayed: PastEvent[] = [];
  private lastFired: number | null = null;
  /** cooldown_digest: the held delivery of the current window, due at its end. */
  private held: BacktestDelivery | null = null;

  constructor(private readonly rules: BacktestRules, private readonly deliver: (d: BacktestDelivery) => void) {}

  /**
   * The next events after every one pushed before. `lasted(p)`: for a firing held by the trigger window, whether a
   * detection pass found its trend anomalous at the window's end (from windowChecks, answered by the detector).
   */
  push(events: PastEvent[], lasted: (p: PastEvent) => boolean) {
    const { rules } = this;
    for (const p of events) {
      if (!triggerFires(rules, p.event)) continue;
      if (inRecoveryWindow(rules, p.event, p.at)) { this.suppressed.recovery_window++; continue; }
      if (!heldByWindow(rules, p.event)) { this.fireDelayedUntil(p.at.getTime()); this.fire(p); continue; }
      if (!lasted(p)) { this.suppressed.trigger_window++; continue; }
      // Decided one detection interval after the window; the delay does not change what the cooldown sees in order.
      this.delayed.push({ event: p.event, at: new Date(p.at.getTime() + rules.triggerWindowMinutes * 60_000) });
    }
  }

  finish() {
    this.fireDelayedUntil(Infinity);
    if (this.held) this.deliver(this.held);
    this.held = null;
  }

  /** Fires the delayed firings due by `t` (one due at the same instant as an instant firing came from an earlier event: it goes first). */
  private fireDelayedUntil(t: number) {
    let k = 0;
    while (k < this.delayed.length && this.delayed[k].at.getTime() <= t) this.fire(this.delayed[k++]);
    if (k) this.delayed.splice(0, k);
  }

  /** The cooldown as fireInstant / fireDigest apply it, firing by firing in order of time. */
  private fire(f: PastEvent) {
    const cooldownMs = this.rules.cooldownSeconds * 1000;
    if (!cooldownMs) { this.deliver({ event: f.event, at: f.at }); return; }
    const t = f.at.getTime();
    if (this.held && this.held.at.getTime() <= t) { this.deliver(this.held); this.held = null; }
    const windowEnd: number = this.lastFired === null ? t : this.lastFired + cooldownMs;
    if (windowEnd <= t) {
      this.lastFired = t;
      this.deliver({ event: f.event, at: f.at });
    } else if (this.rules.deliveryMode !== "cooldown_digest") {
      this.suppressed.cooldown++;
    } else if (this.held) {
      this.suppressed.cooldown++; // one digest per window keeps the stronger firing
      if (f.event.velocity > this.held.event.velocity) this.held = { event: f.event, at: this.held.at };
    } else {
      this.held = { event: f.event, at: new Date(windowEnd) };
      this.lastFired = windowEnd; // the digest reserves the next window
    }
  }
}
