import type { ChatMention, OperatorCard } from "@trendgate/connector-chat";
import type { EscalationStep, OperatorItemState, Severity } from "@trendgate/contracts";
import type { Db, OperatorItemRow } from "@trendgate/db";
import type { OperatorSettings } from "./settings.ts";
import { chatUserOf, onCallAt, type OnCallScheduleSpec } from "./on-call.ts";

// What a chat card shows of an item. Actors are shown by name: a chat user by the name the interaction carried
// (kept in the history), an API key by its id.

/** A readable name for an actor (`key:<id>`, `chat:<team>/<user>`, `system`). */
export function actorLabel(actor: string | null, name?: unknown): string | null {
  if (!actor) return null;
  if (typeof name === "string" && name) return name;
  if (actor.startsWith("key:")) return `API key ${actor.slice(4)}`;
  if (actor.startsWith("chat:")) return `user ${actor.slice(actor.indexOf("/") + 1)}`;
  return "Trendgate";
}

/** The display names of whoever acknowledged and resolved the item, from the latest such history entries. */
async function actorNames(db: Db, item: OperatorItemRow): Promise<{ acknowledge?: unknown; resolve?: unknown }> {
  if (!item.acknowledgedBy && !item.resolvedBy) return {};
  const rows = await db.operatorItemEvent.findMany({
    where: { itemId: item.id, action: { in: ["acknowledge", "resolve"] } }, orderBy: { id: "desc" }, take: 20, select: { action: true, actor: true, data: true },
  });
  const nameOf = (action: string, actor: string | null) =>
    (rows.find((r) => r.action === action && r.actor === actor)?.data as { actor_name?: unknown } | undefined)?.actor_name;
  return { acknowledge: nameOf("acknowledge", item.acknowledgedBy), resolve: nameOf("resolve", item.resolvedBy) };
}

/**
 * An ads-approval item's request (kept on its "opened" history entry) and whether its plan was decided since: applied,
 * refused, expired... anything but previewed. Undefined for other items.
 */
async function approvalOf(db: Db, item: OperatorItemRow): Promise<OperatorCard["approval"]> {
  if (item.source !== "ads_approval" || !item.adsPlanId) return undefined;
  const [opened, plan] = await Promise.all([
    db.operatorItemEvent.findFirst({ where: { itemId: item.id, action: "opened" }, select: { data: true } }),
    db.adsPlan.findUnique({ where: { id: item.adsPlanId }, select: { status: true, expiresAt: true, approvedBy: true } }),
  ]);
  const a = (opened?.data as { approval?: { plan_id: string; plan_hash: string; provider: string; lines: string[] } } | undefined)?.approval;
  if (!a) return undefined;
  const decided = !plan ? "deleted"
    : plan.status !== "previewed" ? `${plan.status}${plan.approvedBy ? ` (approved by ${actorLabel(plan.approvedBy)})` : ""}`
    : plan.expiresAt.getTime() < Date.now() ? "expired: preview again" : null;
  return { planId: a.plan_id, planHash: a.plan_hash, provider: a.provider, lines: a.lines, decided };
}

export async function operatorCard(db: Db, item: OperatorItemRow, settings: OperatorSettings | null): Promise<OperatorCard> {
  const [names, approval] = await Promise.all([actorNames(db, item), approvalOf(db, item)]);
  return {
    itemId: item.id,
    version: item.version,
    state: item.state as OperatorItemState,
    severity: item.severity as Severity,
    title: item.title,
    category: item.category,
    summary: item.summary,
    velocity: item.velocity,
    briefingUrl: item.briefingUrl,
    occurrences: item.occurrences,
    acknowledgedBy: actorLabel(item.acknowledgedBy, names.acknowledge),
    resolvedBy: actorLabel(item.resolvedBy, names.resolve),
    snoozedUntil: item.snoozedUntil,
    mention: item.severity === "critical" ? settings?.criticalMention ?? null : null,
    judgeable: item.trendId !== null,
    ...(approval ? { approval } : {}),
  };
}

/** The threaded reply of a re-notification: service text only (no trend text, so nothing to escape); the mention goes as the provider renders one. */
export function renotifyText(item: OperatorItemRow): string {
  return `Reminder ${item.renotifyCount}: this critical item is still open and nobody has acknowledged it.`;
}

const STILL_OPEN = "This item is still open and nobody has acknowledged it.";

/** The reply of an escalation's notify step: its message (or the default) and whom it mentions. */
export function escalationReply(step: Extract<EscalationStep, { type: "notify" }>): { text: string; mentions: ChatMention[] } {
  return {
    text: step.message ?? STILL_OPEN,
    mentions: step.mentions.map((m) => ({ kind: m.kind, id: m.id ?? "", ...(m.name ? { name: m.name } : {}) })),
  };
}

/**
 * The reply of a notify_on_call step: whoever is on call at `now` in the step's schedule (null: deleted since),
 * mentioned as their user on `provider` (the provider renders it). When nobody can be mentioned the reply says why, in
 * the service's words (no name from the schedule goes into the text). `data` is kept in the item's history.
 */
export function onCallReply(
  step: Extract<EscalationStep, { type: "notify_on_call" }>, schedule: OnCallScheduleSpec | null, provider: string, now: Date,
): { text: string; mentions: ChatMention[]; data: Record<string, unknown> } {
  const text = step.message ?? STILL_OPEN;
  const data: Record<string, unknown> = { schedule_id: step.schedule_id };
  if (!schedule) return { text: `${text} (Its on-call schedule was deleted: nobody to mention.)`, mentions: [], data: { ...data, on_call: null, why: "schedule deleted" } };
  const { member, source } = onCallAt(schedule, now);
  const user = chatUserOf(member, provider);
  Object.assign(data, { on_call: member?.name ?? null, source });
  if (!member) return { text: `${text} (Nobody is on call in its schedule now.)`, mentions: [], data: { ...data, why: "nobody on call" } };
  if (!user) return { text: `${text} (Whoever is on call has no ${provider} user in the schedule.)`, mentions: [], data: { ...data, why: `no ${provider} user` } };
  return { text, mentions: [{ kind: "user", id: user.user_id, name: member.name }], data: { ...data, user_id: user.user_id } };
}
