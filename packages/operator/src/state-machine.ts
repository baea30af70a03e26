import { OPERATOR_TRANSITIONS, SNOOZE_MINUTES, type OperatorActionName, type OperatorItemState, type Severity } from "@trendgate/contracts";

// The ONE state machine of operator items (pure). REST actions, chat buttons, the tick (snooze ended) and the intake
// (a resolved trend fires again) all change an item through `transition`, so they cannot disagree on what is allowed.
//
//   open          --acknowledge--> acknowledged   --snooze--> snoozed   --resolve--> resolved
//   acknowledged  --resolve--> resolved   --snooze--> snoozed   --reopen--> open ("unacknowledge": nobody is on it)
//   snoozed       --acknowledge|resolve--> …   --reopen--> open (snooze ended early)   --snooze--> snoozed (new end)
//                 --unsnoozed (system, when snoozed_until passes)--> open
//   resolved      --reopen--> open (by a person, or by the system when its trend fires again)
//   mute: as resolve, where resolve is allowed (applyActionIn also mutes the item's topic)
// Anything else (acknowledging an acknowledged item, reopening an open one...) is refused: `invalid_transition`.

/** What changes an item's state: an operator action, or the snooze ending (system only). */
export type Change = OperatorActionName | "unsnoozed";

const NEXT = OPERATOR_TRANSITIONS; // the table itself lives in the contracts' vocabulary, for clients to read

/** The operator actions allowed from a state (what a card offers as buttons). */
export const allowedActions = (state: OperatorItemState): OperatorActionName[] =>
  (Object.keys(NEXT[state]) as Change[]).filter((c): c is OperatorActionName => c !== "unsnoozed");

/** The columns a transition sets (all of them, so the result does not depend on what the row held before). */
export interface StatePatch {
  state: OperatorItemState;
  snoozedUntil: Date | null;
  acknowledgedAt: Date | null;
  acknowledgedBy: string | null;
  resolvedAt: Date | null;
  resolvedBy: string | null;
  renotifyAt: Date | null;
}

export interface TransitionContext {
  now: Date;
  actor: string;
  /** OPERATOR_RENOTIFY_SECONDS in ms: an open critical item re-notifies this long after it (re)opened. */
  renotifyMs: number;
  snoozeMinutes?: number;
}

export type TransitionResult =
  | { ok: true; from: OperatorItemState; to: OperatorItemState; patch: StatePatch }
  | { ok: false; from: OperatorItemState; allowed: OperatorActionName[] };

/** An open critical item is re-notified after the delay; nothing else is. */
export const renotifyAtFor = (state: OperatorItemState, severity: Severity, now: Date, renotifyMs: number): Date | null =>
  state === "open" && severity === "critical" ? new Date(now.getTime() + renotifyMs) : null;

export function transition(
  item: { state: OperatorItemState; severity: Severity; acknowledgedAt: Date | null; acknowledgedBy: string | null },
  change: Change,
  ctx: TransitionContext,
): TransitionResult {
  const from = item.state;
  const to = NEXT[from][change];
  if (!to) return { ok: false, from, allowed: allowedActions(from) };
  const none = { snoozedUntil: null, resolvedAt: null, resolvedBy: null, renotifyAt: null };
  switch (to) {
    case "acknowledged":
      return { ok: true, from, to, patch: { ...none, state: to, acknowledgedAt: ctx.now, acknowledgedBy: ctx.actor } };
    case "resolved": // who acknowledged it stays visible
      return { ok: true, from, to, patch: { ...none, state: to, acknowledgedAt: item.acknowledgedAt, acknowledgedBy: item.acknowledgedBy, resolvedAt: ctx.now, resolvedBy: ctx.actor } };
    case "snoozed": {
      const minutes = ctx.snoozeMinutes ?? SNOOZE_MINUTES.default;
      return {
        ok: true, from, to,
        patch: { ...none, state: to, snoozedUntil: new Date(ctx.now.getTime() + minutes * 60_000), acknowledgedAt: item.acknowledgedAt, acknowledgedBy: item.acknowledgedBy },
      };
    }
    case "open": // nobody is on it any more: the acknowledgement goes (it stays in the history)
      return { ok: true, from, to, patch: { ...none, state: to, acknowledgedAt: null, acknowledgedBy: null, renotifyAt: renotifyAtFor(to, item.severity, ctx.now, ctx.renotifyMs) } };
  }
}
