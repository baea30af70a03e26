import type { ChatMention, OperatorCard } from "@trendgate/connector-chat";
import type { EscalationStep, OperatorItemState, Severity } from "@trendgate/contracts";
import type { Db, OperatorItemRow } from "@trendgate/db";
import type { OperatorSettings } from "./settings.ts";

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

/** The reply of an escalation's notify step: its message (or the default) and whom it mentions. */
export function escalationReply(step: Extract<EscalationStep, { type: "notify" }>): { text: string; mentions: ChatMention[] } {
  return {
    text: step.message ?? "This item is still open and nobody has acknowledged it.",
    mentions: step.mentions.map((m) => ({ kind: m.kind, id: m.id ?? "", ...(m.name ? { name: m.name } : {}) })),
  };
}
