import type { Config } from "@trendgate/config";
import type { ConnectorRegistry } from "@trendgate/connectors";
import { CARD_MUTE_MINUTES, SNOOZE_MINUTES, type OperatorActionName, type OperatorItemState, type Severity } from "@trendgate/contracts";
import {
  addOutboxMessages, appendOperatorItemEvents, createMute, lockOperatorItem, recordAccountEventsIn, updateOperatorItemAtVersion,
  type OperatorItemRow, type OutboxRow, type Prisma, type Tx,
} from "@trendgate/db";
import { startEscalation, stopEscalation } from "./escalation.ts";
import { chatMessage, hasCard } from "./messages.ts";
import { targetOf } from "./routing.ts";
import { chatSetupOf, type ChatSetup } from "./settings.ts";
import { transition, type Change } from "./state-machine.ts";

export interface OperatorDeps {
  registry: ConnectorRegistry;
  config: Pick<Config, "OPERATOR_RENOTIFY_SECONDS" | "DETECTION_INTERVAL_SECONDS">;
}


export interface ActionInput {
  itemId: string;
  /** Only an item of this account (REST). Chat interactions look the item up first and check the workspace. */
  accountId?: string;
  action: OperatorActionName;
  /** The version the actor saw; a card without one counts as stale. */
  version: number | undefined;
  snoozeMinutes?: number;
  note?: string;
  actor: string;
  /** A display name for the actor (a chat user's name), kept in the history. */
  actorName?: string;
}

export type ActionResult =
  | { ok: true; item: OperatorItemRow; outbox: OutboxRow[] }
  | { ok: false; reason: "not_found" }
  | { ok: false; reason: "version_conflict"; item: OperatorItemRow }
  | { ok: false; reason: "invalid_transition"; item: OperatorItemRow; allowed: OperatorActionName[] };

export interface CommitInput {
  change: Change;
  actor: string;
  now: Date;
  renotifyMs: number;
  snoozeMinutes?: number;
  /** Kept on the history entry. */
  data?: Record<string, unknown>;
  /** Other columns changed in the same update (a reopening event's figures). */
  extra?: Prisma.OperatorItemUpdateManyMutationInput;
}

/**
 * Moves a locked item through the state machine: the versioned update (version + 1) and its history entry. Returns
 * null when the transition is not allowed or the item is no longer at the version read.
 */
export async function commitTransition(tx: Tx, item: OperatorItemRow, c: CommitInput): Promise<{ item: OperatorItemRow; from: OperatorItemState } | { refused: OperatorActionName[] } | null> {
  const t = transition(
    { state: item.state as OperatorItemState, severity: ((c.extra?.severity as Severity | undefined) ?? item.severity) as Severity, acknowledgedAt: item.acknowledgedAt, acknowledgedBy: item.acknowledgedBy },
    c.change,
    { now: c.now, actor: c.actor, renotifyMs: c.renotifyMs, snoozeMinutes: c.snoozeMinutes },
  );
  if (!t.ok) return { refused: t.allowed };
  const updated = await updateOperatorItemAtVersion(tx, item.id, item.version, { ...c.extra, ...t.patch });
  if (!updated) return null;
  await appendOperatorItemEvents(tx, [{
    itemId: item.id, accountId: item.accountId, action: c.change, fromState: t.from, toState: t.to, actor: c.actor,
    version: updated.version, data: c.data,
  }]);
  // Somebody is on it (or it is over): escalation stops, and subscribed webhooks hear of it.
  if (t.to !== "open") await stopEscalation(tx, updated, `${c.change} by ${c.actor}`);
  const notice = t.to === "acknowledged" ? "operator.acknowledged" : t.to === "resolved" ? "operator.resolved" : null;
  if (notice) {
    await recordAccountEventsIn(tx, [{
      accountId: item.accountId, type: notice,
      data: { item_id: item.id, trend_id: item.trendId, title: item.title, severity: updated.severity, actor: c.actor, actor_name: typeof c.data?.actor_name === "string" ? c.data.actor_name : null, route_id: item.routeId, action: c.change },
    }]);
  }
  return { item: updated, from: t.from };
}

/**
 * After an item (re)opened: its escalation starts again (or, for a route without steps, the reminder stays as the
 * transition set it). After any change: its card is updated. Returns the outbox rows to dispatch.
 */
export async function afterTransition(tx: Tx, setup: ChatSetup | null, item: OperatorItemRow, now: Date): Promise<OutboxRow[]> {
  const target = setup && targetOf(setup, item);
  const rows = hasCard(item) ? await addOutboxMessages(tx, [chatMessage(item, "update_item", target?.connection.id ?? null)]) : [];
  if (target && item.state === "open") rows.push(...await startEscalation(tx, item, target, now));
  return rows;
}

/**
 * An operator action (REST or chat button), in the caller's transaction: checks the version the actor saw, applies
 * the state machine, appends the history entry and, when the item has a card, queues its update (dispatch the
 * returned outbox rows after the commit).
 */
export async function applyActionIn(tx: Tx, deps: OperatorDeps, input: ActionInput, now = new Date()): Promise<ActionResult> {
  const item = await lockOperatorItem(tx, input.itemId, input.accountId);
  if (!item) return { ok: false, reason: "not_found" };
  if (input.version !== item.version) return { ok: false, reason: "version_conflict", item };
  const setup = await chatSetupOf(tx, deps.registry, item.accountId, deps.config.OPERATOR_RENOTIFY_SECONDS);
  const snoozeMinutes = input.action === "snooze" ? input.snoozeMinutes ?? SNOOZE_MINUTES.default : undefined;
  const data: Record<string, unknown> = {};
  if (input.note) data.note = input.note;
  if (input.actorName) data.actor_name = input.actorName;
  if (snoozeMinutes !== undefined) data.snooze_minutes = snoozeMinutes;
  if (input.action === "mute") data.mute_minutes = CARD_MUTE_MINUTES;
  const done = await commitTransition(tx, item, {
    change: input.action, actor: input.actor, now, data, snoozeMinutes,
    renotifyMs: setup?.settings.renotifyMs ?? deps.config.OPERATOR_RENOTIFY_SECONDS * 1000,
  });
  if (!done) return { ok: false, reason: "version_conflict", item: (await lockOperatorItem(tx, item.id)) ?? item };
  if ("refused" in done) return { ok: false, reason: "invalid_transition", item, allowed: done.refused };
  // Muting resolves the item and keeps its topic quiet for a day: the same mute as POST /api/mutes makes.
  if (input.action === "mute") {
    await createMute(tx, {
      accountId: item.accountId, topic: item.title, category: null, startsAt: now, endsAt: new Date(now.getTime() + CARD_MUTE_MINUTES * 60_000),
      rrule: null, windowMinutes: null, reason: `muted from operator item ${item.id}`, createdBy: input.actor,
    });
  }
  return { ok: true, item: done.item, outbox: await afterTransition(tx, setup, done.item, now) };
}

/** Queues a refresh of the item's card (a stale card was pressed): it will show the current state. */
export async function queueCardRefresh(tx: Tx, item: OperatorItemRow, connectionId: string | null): Promise<OutboxRow[]> {
  return hasCard(item) ? addOutboxMessages(tx, [chatMessage(item, "update_item", connectionId)]) : [];
}
