import type { Db, Tx } from "./client.ts";
import type { OperatorItem, OperatorItemEvent, Prisma } from "./generated/client.ts";
import { newId, type IdPage } from "./ids.ts";

// Queries of the operator queue. The rules (which change is allowed, what it sets) are packages/operator's; these
// only read and write rows, inside the caller's transaction where a change must be atomic with its history and its
// outbox messages.

export type OperatorItemRow = OperatorItem;
export type OperatorItemEventRow = OperatorItemEvent;

/** Locks an item for the rest of the transaction (other changes of it wait), scoped to an account when given. */
export async function lockOperatorItem(tx: Tx, id: string, accountId?: string): Promise<OperatorItemRow | null> {
  const rows = await tx.$queryRawUnsafe<{ id: string }[]>(
    `SELECT id FROM operator_items WHERE id = $1 AND ($2::text IS NULL OR account_id = $2) FOR UPDATE`, id, accountId ?? null);
  return rows.length ? tx.operatorItem.findUnique({ where: { id } }) : null;
}

/**
 * The optimistic check: changes the item only if it is still at `version`, and bumps the version. Returns the new
 * row, or null when the item moved on (or is gone) meanwhile.
 */
export async function updateOperatorItemAtVersion(tx: Tx, id: string, version: number, data: Prisma.OperatorItemUpdateManyMutationInput): Promise<OperatorItemRow | null> {
  const { count } = await tx.operatorItem.updateMany({ where: { id, version }, data: { ...data, version: { increment: 1 } } });
  return count ? tx.operatorItem.findUnique({ where: { id } }) : null;
}

/** Changes that are not state changes (figures from a repeat event, re-notification): the version stays. */
export async function updateOperatorItem(tx: Tx, id: string, data: Prisma.OperatorItemUpdateInput): Promise<OperatorItemRow> {
  return tx.operatorItem.update({ where: { id }, data });
}

export interface OperatorItemEventInput {
  itemId: string;
  accountId: string;
  action: string;
  fromState: string | null;
  toState: string;
  actor: string;
  version: number;
  data?: Record<string, unknown>;
}

export async function appendOperatorItemEvents(tx: Tx, events: OperatorItemEventInput[]): Promise<void> {
  if (!events.length) return;
  await tx.operatorItemEvent.createMany({
    data: events.map((e) => ({
      id: newId("ope"), itemId: e.itemId, accountId: e.accountId, action: e.action, fromState: e.fromState, toState: e.toState,
      actor: e.actor, version: e.version, data: (e.data ?? {}) as Prisma.InputJsonValue,
    })),
  });
}

export interface NewOperatorItem {
  accountId: string;
  dedupKey: string;
  trendId: string | null;
  severity: string;
  title: string;
  category: string;
  summary: string;
  velocity: number;
  briefingUrl: string | null;
  renotifyAt: Date | null;
  /** The routing rule that matched (null: the default route). */
  routeId?: string | null;
  source?: string;
  adsPlanId?: string | null;
  /** The escalation chain it opens with (packages/operator's EscalationChain), kept for the item's life. */
  escalationChain?: unknown;
}

/** Creates the item unless the account already has one with this dedup key (then null: lock and update that one). */
export async function insertOperatorItemIfAbsent(tx: Tx, it: NewOperatorItem): Promise<OperatorItemRow | null> {
  const id = newId("opi");
  const rows = await tx.$queryRawUnsafe<{ id: string }[]>(
    `INSERT INTO operator_items (id, account_id, dedup_key, trend_id, state, severity, title, category, summary, velocity, briefing_url, renotify_at, route_id, source, ads_plan_id, escalation_chain, created_at, updated_at)
     VALUES ($1, $2, $3, $4, 'open', $5, $6, $7, $8, $9, $10, $11::timestamptz AT TIME ZONE 'UTC', $12, $13, $14, $15::jsonb, now() AT TIME ZONE 'UTC', now() AT TIME ZONE 'UTC')
     ON CONFLICT (account_id, dedup_key) DO NOTHING RETURNING id`,
    id, it.accountId, it.dedupKey, it.trendId, it.severity, it.title, it.category, it.summary, it.velocity, it.briefingUrl, it.renotifyAt?.toISOString() ?? null,
    it.routeId ?? null, it.source ?? "trends", it.adsPlanId ?? null, it.escalationChain === undefined ? null : JSON.stringify(it.escalationChain),
  );
  return rows.length ? tx.operatorItem.findUnique({ where: { id } }) : null;
}

/** The account's item with this dedup key, unlocked. */
export const findOperatorItemByDedupKey = (db: Db | Tx, accountId: string, dedupKey: string): Promise<OperatorItemRow | null> =>
  db.operatorItem.findUnique({ where: { accountId_dedupKey: { accountId, dedupKey } } });

/** Locks the account's item with this dedup key. */
export async function lockOperatorItemByDedupKey(tx: Tx, accountId: string, dedupKey: string): Promise<OperatorItemRow | null> {
  const rows = await tx.$queryRawUnsafe<{ id: string }[]>(
    `SELECT id FROM operator_items WHERE account_id = $1 AND dedup_key = $2 FOR UPDATE`, accountId, dedupKey);
  return rows.length ? tx.operatorItem.findUnique({ where: { id: rows[0].id } }) : null;
}

/** Whether this trend event already reached the item (a re-run of an event batch must not count it twice). */
export async function operatorItemSawEvent(tx: Tx, itemId: string, eventId: string): Promise<boolean> {
  const rows = await tx.$queryRawUnsafe<unknown[]>(
    `SELECT 1 FROM operator_item_events WHERE item_id = $1 AND data @> jsonb_build_object('event_id', $2::text) LIMIT 1`, itemId, eventId);
  return rows.length > 0;
}

export async function findOperatorItem(db: Db | Tx, id: string, accountId?: string): Promise<OperatorItemRow | null> {
  return db.operatorItem.findFirst({ where: { id, ...(accountId ? { accountId } : {}) } });
}

export interface OperatorItemFilter {
  states?: string[];
  severities?: string[];
}

/** A page of an account's items, newest first (keyset on the time-ordered id). */
export async function listOperatorItems(db: Db, accountId: string, f: OperatorItemFilter, page: IdPage) {
  return db.operatorItem.findMany({
    where: {
      accountId, ...page.after,
      ...(f.states?.length ? { state: { in: f.states } } : {}),
      ...(f.severities?.length ? { severity: { in: f.severities } } : {}),
    },
    orderBy: { id: "desc" },
    take: page.take,
  });
}

/** The item's newest `max` history entries, oldest first. */
export async function operatorItemHistory(db: Db, itemId: string, max: number): Promise<OperatorItemEventRow[]> {
  const rows = await db.operatorItemEvent.findMany({ where: { itemId }, orderBy: { id: "desc" }, take: max });
  return rows.reverse();
}

/**
 * Why chat messages about these items could not be delivered: per item, the error of its most recently finished
 * message when that one failed for good (a later success clears it).
 */
export async function chatDeliveryErrors(db: Db, queue: string, itemIds: string[]): Promise<Map<string, string>> {
  if (!itemIds.length) return new Map();
  const { rows } = await db.$pool.query<{ subject_id: string; status: string; last_error: string | null }>(
    `SELECT DISTINCT ON (subject_id) subject_id, status, last_error FROM outbox_messages
      WHERE subject_id = ANY($1::text[]) AND queue = $2 AND status IN ('succeeded', 'failed')
      ORDER BY subject_id, completed_at DESC NULLS LAST, id DESC`,
    [itemIds, queue],
  );
  return new Map(rows.filter((r) => r.status === "failed").map((r) => [r.subject_id, r.last_error ?? "failed"]));
}

/** Whether a chat post of this item is still waiting to be sent (so another one must not be queued). */
export async function hasPendingChatPost(tx: Db | Tx, queue: string, itemId: string): Promise<boolean> {
  const rows = await tx.$queryRawUnsafe<unknown[]>(
    `SELECT 1 FROM outbox_messages WHERE subject_id = $1 AND queue = $2 AND status = 'pending' AND payload->>'type' = 'post_item' LIMIT 1`, itemId, queue);
  return rows.length > 0;
}

/** Whether an update of the item's card was queued after this message (that one will show the latest state). */
export async function hasNewerPendingChatUpdate(db: Db, queue: string, itemId: string, messageId: string): Promise<boolean> {
  const { rows } = await db.$pool.query(
    `SELECT 1 FROM outbox_messages WHERE subject_id = $1 AND queue = $2 AND status = 'pending' AND payload->>'type' = 'update_item' AND id > $3 LIMIT 1`,
    [itemId, queue, messageId]);
  return rows.length > 0;
}

/** Items whose snooze has ended (partial index operator_items_snoozed_idx). */
export async function dueSnoozedItems(db: Db, now: Date, limit: number): Promise<string[]> {
  const { rows } = await db.$pool.query<{ id: string }>(
    `SELECT id FROM operator_items WHERE state = 'snoozed' AND snoozed_until <= ($1::timestamptz AT TIME ZONE 'UTC') ORDER BY snoozed_until LIMIT $2`, [now.toISOString(), limit]);
  return rows.map((r) => r.id);
}

/** Open items due for a re-notification (partial index operator_items_renotify_idx). */
export async function dueRenotifyItems(db: Db, now: Date, limit: number): Promise<string[]> {
  const { rows } = await db.$pool.query<{ id: string }>(
    `SELECT id FROM operator_items WHERE state = 'open' AND renotify_at IS NOT NULL AND renotify_at <= ($1::timestamptz AT TIME ZONE 'UTC') ORDER BY renotify_at LIMIT $2`, [now.toISOString(), limit]);
  return rows.map((r) => r.id);
}

/** Where (and through which chat provider) the item's card was posted. Only the first post is kept (a duplicate post of a retried job is not). */
export async function storeChatMessage(db: Db, itemId: string, provider: string, channelId: string, ts: string): Promise<OperatorItemRow | null> {
  const { count } = await db.operatorItem.updateMany({ where: { id: itemId, chatMessageTs: null }, data: { chatProvider: provider, chatChannelId: channelId, chatMessageTs: ts } });
  return count ? db.operatorItem.findUnique({ where: { id: itemId } }) : null;
}

/** Per trend, the state of its latest operator item when the team has answered it (acknowledged, snoozed, resolved). */
export async function teamAnswersByTrend(db: Db, accountId: string, trendIds: string[]): Promise<Map<string, string>> {
  if (!trendIds.length) return new Map();
  const rows = await db.operatorItem.findMany({
    where: { accountId, trendId: { in: trendIds } }, orderBy: { createdAt: "asc" }, select: { trendId: true, state: true },
  });
  const latest = new Map(rows.map((r) => [r.trendId!, r.state]));
  for (const [trendId, state] of latest) if (state === "open") latest.delete(trendId);
  return latest;
}
