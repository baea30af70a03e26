import { QUEUES, severityRank, type ChatMessageType, type TrendEvent } from "@trendgate/contracts";
import {
  addOutboxMessages, appendOperatorItemEvents, hasPendingChatPost, insertOperatorItemIfAbsent, lockOperatorItemByDedupKey,
  operatorItemSawEvent, topicSourcesSince, updateOperatorItem, type Db, type OperatorItemRow, type OperatorRouteRow, type OutboxRow, type Tx,
} from "@trendgate/db";
import { inRecoveryWindow } from "@trendgate/trends";
import { commitTransition, type OperatorDeps } from "./apply.ts";
import { SYSTEM_ACTOR } from "./actors.ts";
import { startEscalation } from "./escalation.ts";
import { chatMessage, hasCard } from "./messages.ts";
import { chainAt, matchRoute, targetOf, type ItemTarget } from "./routing.ts";
import { categoryMatches, chatSetups, type ChatSetup, type OperatorSettings } from "./settings.ts";
import { renotifyAtFor } from "./state-machine.ts";

// Trend events -> operator items, one item per trend (dedup key `trend:<trend_id>`):
// - an event that matches a routing rule opens an item on that rule's route (its channel, its escalation); one no
//   rule matches opens an item on the default route when it is at or above the settings' min_severity, in one of
//   their categories (posted once a channel is saved);
// - an open item escalates through its route's steps, as they were when it opened (kept on the item), until someone
//   acknowledges it (without steps: an open critical item is re-notified after the delay);
// - any later event of the trend updates the item's figures (severity, velocity, summary) and counts an occurrence;
//   its card is updated when velocity_alerts is on or the severity rose;
// - an event that would open an item reopens a resolved one;
// - trend.ended never opens or reopens one: it updates an open item's card to say the trend is over (the item stays
//   for a person to resolve, with what it learned); trend.cooling likewise says it is cooling down. Both stop reminders.
// Each event is applied once per item (its id is kept in the history), so a re-run of an event batch counts nothing twice.

export const trendDedupKey = (trendId: string) => `trend:${trendId}`;

/** An end or a cooling down: the trend calms, so it opens nothing and reminds nobody. */
const calms = (e: TrendEvent) => e.type === "trend.ended" || e.type === "trend.cooling";

/** Whether an event opens (or reopens) an item under these settings: at or above min_severity, in their categories, not an end. */
export const opensItem = (s: Pick<OperatorSettings, "minSeverity" | "categories">, e: TrendEvent) =>
  !calms(e) && severityRank(e.severity) >= severityRank(s.minSeverity) && categoryMatches(s.categories, e.category);

export interface IntakeResult {
  /** Items opened, updated or reopened. */
  changed: number;
  /** Outbox rows to dispatch. */
  outbox: OutboxRow[];
}

/** `setups`: the accounts' chat setups when the caller has them already (the fan-out caches them); else read here. */
export async function intakeTrendEvents(db: Db, deps: OperatorDeps, events: TrendEvent[], now = new Date(), setups?: Map<string, ChatSetup>): Promise<IntakeResult> {
  setups ??= await chatSetups(db, deps.registry, events.map((e) => e.account_id), deps.config.OPERATOR_RENOTIFY_SECONDS);
  const result: IntakeResult = { changed: 0, outbox: [] };
  for (const e of events) {
    const setup = setups.get(e.account_id);
    if (!setup) continue;
    const rows = await db.$transaction((tx) => intakeOne(tx, setup, e, now, deps.config.DETECTION_INTERVAL_SECONDS * 1000));
    if (rows) { result.changed++; result.outbox.push(...rows); }
  }
  return result;
}

/** The rule an event opens an item under (undefined: none opens one), null for the default route. */
/**
 * The route an event opens an item under: the first routing rule it matches, else the default route (null) when the
 * settings admit it; undefined: no item (an end never opens one). `signalSources`: the trend's signal sources of the
 * last 24 hours, for rules that match on them (without it, such a rule matches only the item's own source).
 */
export async function itemRouteOf<R extends Pick<OperatorRouteRow, "match">>(
  routes: readonly R[], settings: Pick<OperatorSettings, "minSeverity" | "categories">, e: TrendEvent, signalSources?: () => Promise<string[]>,
): Promise<R | null | undefined> {
  if (calms(e)) return undefined;
  const route = await matchRoute(routes, { category: e.category, severity: e.severity, eventType: e.type, source: "trends", signalSources });
  return route ?? (opensItem(settings, e) ? null : undefined);
}

const routeOf = (tx: Tx, setup: ChatSetup, e: TrendEvent) => itemRouteOf(setup.routes, setup.settings, e,
  () => topicSourcesSince(tx, { accountId: e.account_id, name: e.trend_name, category: e.category }, new Date(Date.parse(e.timestamp) - 86_400_000)));

/** Re-notification (the settings' reminder) is for items whose route has no escalation steps. */
const reminds = (target: ItemTarget | null) => !target?.escalation.length;

/** One event in one transaction; returns the outbox rows it added, or null when nothing changed. */
async function intakeOne(tx: Tx, setup: ChatSetup, e: TrendEvent, now: Date, graceMs: number): Promise<OutboxRow[] | null> {
  const s = setup.settings;
  const ended = calms(e);
  const route = await routeOf(tx, setup, e);
  // A re-detection inside the recovery window opens (and reopens) nothing; its later events still update an open item.
  const opens = route !== undefined && !inRecoveryWindow(s, e, now);
  const dedupKey = trendDedupKey(e.trend_id);
  const figures = { severity: e.severity, title: e.trend_name, category: e.category, summary: e.summary, velocity: e.velocity, briefingUrl: e.source_link || null };
  const eventData = { event_id: e.id, event_type: e.type, severity: e.severity, velocity: e.velocity };
  const message = (item: OperatorItemRow, type: ChatMessageType, target: ItemTarget) => addOutboxMessages(tx, [chatMessage(item, type, target.connection.id,
    // Under a trigger window a card is posted only once its trend has lasted it (the chat-messages worker checks).
    type === "post_item" && s.triggerWindowMinutes > 0 ? { until: new Date(now.getTime() + s.triggerWindowMinutes * 60_000), graceMs } : undefined)]);
  // A card when there is none yet (first post, a post that failed, or a channel saved since), else an update.
  const show = async (item: OperatorItemRow, update: boolean): Promise<OutboxRow[]> => {
    const target = targetOf(setup, item);
    if (!target) return [];
    if (hasCard(item)) return update ? message(item, "update_item", target) : [];
    if (!target.channelId || await hasPendingChatPost(tx, QUEUES.chatMessages, item.id)) return [];
    return message(item, "post_item", target);
  };
  /** The card, and the escalation of an item that just (re)opened. */
  const opened = async (item: OperatorItemRow, update: boolean): Promise<OutboxRow[]> => {
    const target = targetOf(setup, item);
    return [...await show(item, update), ...(target ? await startEscalation(tx, item, target, now) : [])];
  };

  if (opens) {
    const created = await insertOperatorItemIfAbsent(tx, {
      accountId: e.account_id, dedupKey, trendId: e.trend_id, ...figures, routeId: route?.id ?? null, escalationChain: chainAt(setup, route?.id ?? null),
      renotifyAt: renotifyAtFor("open", e.severity, now, s.renotifyMs), // cleared when its route escalates instead
    });
    if (created) {
      await appendOperatorItemEvents(tx, [{
        itemId: created.id, accountId: created.accountId, action: "opened", fromState: null, toState: "open", actor: SYSTEM_ACTOR, version: created.version,
        data: { ...eventData, route_id: created.routeId, route: route?.name ?? "default" },
      }]);
      return opened(created, false);
    }
  }
  const item = await lockOperatorItemByDedupKey(tx, e.account_id, dedupKey);
  if (!item || await operatorItemSawEvent(tx, item.id, e.id)) return null;

  if (item.state === "resolved") {
    if (!opens) return null;
    const done = await commitTransition(tx, item, {
      change: "reopen", actor: SYSTEM_ACTOR, now, renotifyMs: s.renotifyMs,
      data: { ...eventData, reason: "its trend fired again" }, extra: { ...figures, occurrences: { increment: 1 } },
    });
    return done && "item" in done ? opened(done.item, true) : null;
  }

  const rose = severityRank(e.severity) > severityRank(item.severity as TrendEvent["severity"]);
  // Re-notification follows the severity while the item is open: it starts when the trend turns critical.
  // Re-notification stops when the trend ends: nobody needs reminding of what is over.
  const renotifyAt = ended || !reminds(targetOf(setup, item)) ? null : item.state !== "open" ? item.renotifyAt
    : e.severity === "critical" ? item.renotifyAt ?? renotifyAtFor("open", "critical", now, s.renotifyMs) : null;
  const updated = await updateOperatorItem(tx, item.id, { ...figures, occurrences: { increment: 1 }, renotifyAt });
  await appendOperatorItemEvents(tx, [{
    itemId: item.id, accountId: item.accountId, action: "updated", fromState: item.state, toState: item.state, actor: SYSTEM_ACTOR,
    version: updated.version, data: { ...eventData, previous_severity: item.severity, previous_velocity: item.velocity },
  }]);
  return show(updated, ended || rose || s.velocityAlerts);
}
