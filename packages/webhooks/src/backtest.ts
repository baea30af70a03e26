import { severityRank, type TrendEvent } from "@trendgate/contracts";
import { triggerFires, type TriggerSubscription } from "./triggers.ts";
import { heldByWindow, inRecoveryWindow } from "@trendgate/trends";

// A subscription's rules replayed over stored trend events: what it would have received. The same decisions as the
// live path, in memory: the trigger (triggers.ts), the recovery window, the trigger window (whether the trend was still
// anomalous at its end is the caller's answer: the detector's), and the cooldown as fireInstant / fireDigest apply it,
// to one publication's firings in the order the worker fires a batch (strongestFirst).

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

/**
 * Whether each held firing's trend was still anomalous at its trigger window's end: the detector's answer, asked in
 * batches (the firing as published; the window's end is `at` + the trigger window).
 */
export type AskLasted = (firings: PastEvent[]) => Promise<boolean[]>;

/**
 * The order one publication's firings of a subscription meet its cooldown, as the worker fires a batch: the most
 * severe first, then the fastest. It decides which trend the first delivery of a window and a digest carry.
 */
export const strongestFirst = (a: Pick<TrendEvent, "severity" | "velocity">, b: Pick<TrendEvent, "severity" | "velocity">) =>
  severityRank(b.severity) - severityRank(a.severity) || b.velocity - a.velocity;

/** A firing a trigger window holds, decided at the window's end. */
interface Delayed extends BacktestDelivery {
  /** The firing as published: what the detector is asked about. */
  source: PastEvent;
}

/** One pass over a page: what it delivered, and which detector answers it used or lacked. */
interface Round {
  out: BacktestDelivery[];
  /** Held firings it needed an answer for and had none (assumed to have lasted, to find the next ones). */
  needed: PastEvent[];
  /**
   * Held firings without an answer that the cooldown suppressed right after a needed one, assumed to last: should
   * it not have, the first of them is needed next. Asked with the needed ones, they save a pass per such firing.
   */
  spare: PastEvent[];
  /** How many more firings after the last needed one go into `spare`. */
  follow: number;
  decided: PastEvent[];
}

/** Firings after each needed one asked along with it (two in a row that did not last cost no extra pass). */
const FOLLOW = 2;
/**
 * Needed answers asked per pass. Past the first answer that did not last, what a pass assumed is wrong and the firings
 * it found needed mostly are not: a long batch wastes reads, a short one costs passes (600 firings, a third not
 * lasting, 6-30 in a cooldown, one page: batches of 4 ask about 227 of them in 20 passes; of 16, 385 in 12; unbounded, 590).
 */
const BATCH = 4;

/**
 * Replays events (oldest first, a page at a time: push each page, then finish) through the rules, handing each
 * delivery to `deliver` in order of its time. Only the firings a trigger window still holds, a digest's held
 * delivery and the page's last publication are kept between pages, so a long history is never in memory at once.
 *
 * The detector is asked about a held firing only when its answer changes what is delivered: one the cooldown
 * suppresses anyway (instant delivery) is counted under `cooldown` without asking, which saves most of a backtest's
 * reads when a cooldown is set. Which firings the cooldown suppresses depends on earlier answers, so a page is
 * replayed assuming unknown answers are "lasted", the answers it needed are asked in one batch, and it is replayed
 * again until it needs none.
 */
export class SubscriptionReplay {
  suppressed = { cooldown: 0, trigger_window: 0, recovery_window: 0 };
  /** Held firings, due at their trigger window's end: in order, as every one is delayed by the same window. */
  private delayed: Delayed[] = [];
  private lastFired: number | null = null;
  /** cooldown_digest: the held delivery of the current window, due at its end. */
  private held: BacktestDelivery | null = null;
  /** The last publication pushed (events published at one instant): a page may end inside it, so it is replayed with the next. */
  private pending: PastEvent[] = [];
  private readonly answers = new Map<PastEvent, boolean>();

  constructor(private readonly rules: BacktestRules, private readonly deliver: (d: BacktestDelivery) => void, private readonly ask: AskLasted) {}

  /** The next events after every one pushed before. */
  push(events: PastEvent[]): Promise<void> {
    return this.decide((r) => this.walk(events, r));
  }

  finish(): Promise<void> {
    return this.decide((r) => {
      this.publication(this.pending, r);
      this.pending = [];
      this.fireDelayedUntil(Infinity, r);
      if (this.held) r.out.push(this.held);
      this.held = null;
    });
  }

  private async decide(pass: (r: Round) => void) {
    for (;;) {
      const saved = { delayed: [...this.delayed], lastFired: this.lastFired, held: this.held, pending: this.pending, suppressed: { ...this.suppressed } };
      const r: Round = { out: [], needed: [], spare: [], decided: [], follow: 0 };
      pass(r);
      if (!r.needed.length) {
        for (const d of r.out) this.deliver(d);
        for (const p of r.decided) this.answers.delete(p);
        return;
      }
      Object.assign(this, saved);
      const asked = [...r.needed, ...r.spare];
      const lasted = await this.ask(asked);
      asked.forEach((p, k) => this.answers.set(p, lasted[k]));
    }
  }

  /** Replays the publications complete before the last one of `events`, which waits for the next page or finish(). */
  private walk(events: PastEvent[], r: Round) {
    const all = [...this.pending, ...events];
    let start = 0;
    for (let k = 1; k <= all.length; k++) {
      if (k < all.length && all[k].at.getTime() === all[start].at.getTime()) continue;
      if (k === all.length) break;
      this.publication(all.slice(start, k), r);
      start = k;
    }
    this.pending = all.slice(start);
  }

  /**
   * One publication (a detection pass's events, routed live as one batch): its firings meet the cooldown strongest
   * first, and so do its held ones at their window's end (they are due together and swept as one batch).
   */
  private publication(events: PastEvent[], r: Round) {
    const { rules } = this;
    const fire: PastEvent[] = [];
    const hold: PastEvent[] = [];
    for (const p of events) {
      if (!triggerFires(rules, p.event)) continue;
      if (inRecoveryWindow(rules, p.event, p.at)) { this.suppressed.recovery_window++; continue; }
      (heldByWindow(rules, p.event) ? hold : fire).push(p);
    }
    if (!fire.length && !hold.length) return;
    this.fireDelayedUntil(events[0].at.getTime(), r);
    const order = (a: PastEvent, b: PastEvent) => strongestFirst(a.event, b.event);
    for (const p of fire.sort(order)) this.fire(p, r);
    // Decided one detection interval after the window; the delay does not change what the cooldown sees in order.
    for (const p of hold.sort(order)) this.delayed.push({ event: p.event, at: new Date(p.at.getTime() + rules.triggerWindowMinutes * 60_000), source: p });
  }

  /** Decides the held firings due by `t` (one due at the same instant as an instant firing came from an earlier event: it goes first). */
  private fireDelayedUntil(t: number, r: Round) {
    let k = 0;
    for (; k < this.delayed.length && this.delayed[k].at.getTime() <= t; k++) {
      const d = this.delayed[k];
      const answer = this.answers.get(d.source);
      if (this.rules.deliveryMode !== "cooldown_digest" && this.coolingDown(d.at.getTime())) {
        this.suppressed.cooldown++;
        if (answer === undefined && r.follow > 0) { r.spare.push(d.source); r.follow--; }
        else r.decided.push(d.source);
        continue;
      }
      if (answer === undefined && r.needed.length < BATCH) { r.needed.push(d.source); r.follow = FOLLOW; }
      else {
        r.decided.push(d.source);
        if (!answer) { this.suppressed.trigger_window++; continue; }
      }
      this.fire(d, r);
    }
    if (k) this.delayed.splice(0, k);
  }

  private coolingDown(t: number) {
    return this.rules.cooldownSeconds > 0 && this.lastFired !== null && this.lastFired + this.rules.cooldownSeconds * 1000 > t;
  }

  /** The cooldown as fireInstant / fireDigest apply it, firing by firing in order of time. */
  private fire(f: BacktestDelivery, r: Round) {
    const cooldownMs = this.rules.cooldownSeconds * 1000;
    if (!cooldownMs) { r.out.push({ event: f.event, at: f.at }); return; }
    const t = f.at.getTime();
    if (this.held && this.held.at.getTime() <= t) { r.out.push(this.held); this.held = null; }
    const windowEnd: number = this.lastFired === null ? t : this.lastFired + cooldownMs;
    if (windowEnd <= t) {
      this.lastFired = t;
      r.out.push({ event: f.event, at: f.at });
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
