import type { EscalationStep } from "@trendgate/contracts";
import {
  addOutboxMessages, appendOperatorItemEvents, lockOperatorItem, newId, recordAccountEventsIn, updateOperatorItem,
  type OperatorItemRow, type OutboxRow, type Tx,
} from "@trendgate/db";
import { escalationMessage } from "./messages.ts";
import { SYSTEM_ACTOR } from "./actors.ts";
import type { ItemTarget } from "./routing.ts";

// Escalation: while an item is open (nobody acknowledged, snoozed or resolved it), the chain it opened with runs one
// step at a time (the chain is kept on the item, so a later save of the rules changes no chain: routing.ts), each a
// job on the chat-messages outbox (escalate_item) naming the run and the step; a wait step delays the next job (a
// BullMQ delayed job, kept in Redis and in the outbox row, so a worker restart loses no step). Any state change away
// from open ends the run (`stopEscalation`); reopening starts a new one of the same chain. A job whose run or step is
// no longer the item's is stale and does nothing, so a repeated or late job never notifies twice.
//
//   wait N min -> the next step after N minutes      notify -> a reply under the card mentioning people
//   notify_on_call -> a reply mentioning whoever is on call then in its schedule (on-call.ts)
//   notify_webhook -> operator.escalated to that subscription      repeat K -> back to step 0, at most K times

/**
 * Starts a run from step 0 when the item's route has steps (ending any run in progress); the run replaces the
 * settings' reminder, so renotify_at is cleared. Returns the outbox rows to dispatch.
 */
export async function startEscalation(tx: Tx, item: OperatorItemRow, target: ItemTarget, now: Date): Promise<OutboxRow[]> {
  if (!target.escalation.length) return [];
  const run = newId("esc");
  const updated = await updateOperatorItem(tx, item.id, { escalationRun: run, escalationStep: 0, escalationRepeats: 0, renotifyAt: null });
  await history(tx, updated, "escalation_started", { run, route_id: target.escalationRouteId, steps: target.escalation.length });
  return addOutboxMessages(tx, [escalationMessage(updated, run, 0, target.connection.id, now)]);
}

/** Ends the item's run (acknowledged, snoozed, resolved). Nothing when none runs. */
export async function stopEscalation(tx: Tx, item: OperatorItemRow, reason: string): Promise<void> {
  if (!item.escalationRun) return;
  const updated = await updateOperatorItem(tx, item.id, { escalationRun: null });
  await history(tx, updated, "escalation_stopped", { run: item.escalationRun, step: item.escalationStep, reason });
}

export interface StepRef {
  run: string;
  step: number;
}

/** The step a job should take now, or why it takes none (read without a lock: the take re-checks under it). */
export function stepToTake(item: OperatorItemRow, ref: StepRef, target: ItemTarget): { step: EscalationStep } | { skip: string } {
  if (item.escalationRun !== ref.run) return { skip: "escalation run ended or replaced" };
  if (item.escalationStep !== ref.step) return { skip: `step ${ref.step} already taken` };
  if (item.state !== "open") return { skip: `item is ${item.state}` };
  const step = target.escalation[ref.step];
  return step ? { step } : { skip: "no such step (the route changed)" };
}

/**
 * Takes step `ref` under the item's row lock, after the caller did its outside part (a notify step's reply,
 * `notified` says what happened): records it in the item's history, tells subscribed webhooks, and queues the next
 * step (after the wait of a wait step). Returns the outbox rows to dispatch; none when the job is stale.
 */
export async function takeEscalationStep(tx: Tx, itemId: string, ref: StepRef, target: ItemTarget, now: Date, notified?: Record<string, unknown>): Promise<OutboxRow[]> {
  const item = await lockOperatorItem(tx, itemId);
  if (!item) return [];
  const next = stepToTake(item, ref, target);
  if ("skip" in next) return [];
  const { step } = next;
  let nextStep = ref.step + 1;
  let repeats = item.escalationRepeats;
  let at = now;
  const data: Record<string, unknown> = { run: ref.run, step: ref.step, type: step.type };
  switch (step.type) {
    case "wait":
      at = new Date(now.getTime() + step.minutes * 60_000);
      data.until = at.toISOString();
      break;
    case "notify":
    case "notify_on_call":
      Object.assign(data, notified ?? {});
      break;
    case "notify_webhook":
      data.webhook_id = step.webhook_id;
      break;
    case "repeat":
      if (repeats < step.times) { repeats++; nextStep = 0; data.repeat = repeats; } else nextStep = target.escalation.length;
      break;
  }
  // A wait tells nobody; every other step is an operator.escalated notice.
  if (step.type !== "wait") {
    await recordAccountEventsIn(tx, [{
      accountId: item.accountId, type: "operator.escalated",
      data: {
        item_id: item.id, trend_id: item.trendId, title: item.title, severity: item.severity, step: ref.step, step_type: step.type, route_id: item.routeId,
        ...(step.type === "notify_webhook" ? { notify_webhook_id: step.webhook_id } : {}),
      },
    }]);
  }
  const done = nextStep >= target.escalation.length;
  const updated = await updateOperatorItem(tx, item.id, { escalationStep: nextStep, escalationRepeats: repeats, ...(done ? { escalationRun: null } : {}) });
  await history(tx, updated, "escalated", data);
  if (done) {
    await history(tx, updated, "escalation_finished", { run: ref.run, repeats });
    return [];
  }
  return addOutboxMessages(tx, [escalationMessage(updated, ref.run, nextStep, target.connection.id, at)]);
}

function history(tx: Tx, item: OperatorItemRow, action: string, data: Record<string, unknown>) {
  return appendOperatorItemEvents(tx, [{
    itemId: item.id, accountId: item.accountId, action, fromState: item.state, toState: item.state, actor: SYSTEM_ACTOR, version: item.version, data,
  }]);
}
