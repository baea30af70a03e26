import {
  addOutboxMessages, appendOperatorItemEvents, dueRenotifyItems, dueSnoozedItems, lockOperatorItem, updateOperatorItem,
  type Db, type OutboxRow, type Tx,
} from "@trendgate/db";
import { afterTransition, commitTransition, type OperatorDeps } from "./apply.ts";
import { targetOf } from "./routing.ts";
import { SYSTEM_ACTOR } from "./actors.ts";
import { chatMessage, hasCard } from "./messages.ts";
import { chatSetupOf, type ChatSetup } from "./settings.ts";

// The operator queue's clock (QUEUES.operatorTicks, once per OPERATOR_TICK_SECONDS for the fleet): snoozes that
// ended reopen their items, and open critical items whose renotify_at passed get a threaded reply (with the
// configured mention) and their next renotify_at. Each item changes in its own transaction under its row lock, and
// is re-checked there, so a tick that overlaps another, or an operator acting meanwhile, changes nothing twice.

const BATCH = 200;
/** Rounds per tick and kind; what is left is due at the next tick. */
const MAX_ROUNDS = 25;

export interface TickResult {
  unsnoozed: number;
  renotified: number;
  outbox: OutboxRow[];
}

export async function runOperatorTick(db: Db, deps: OperatorDeps, now = new Date()): Promise<TickResult> {
  const result: TickResult = { unsnoozed: 0, renotified: 0, outbox: [] };
  const setups = new Map<string, ChatSetup | null>();
  const setupOf = async (tx: Tx, accountId: string) => {
    if (!setups.has(accountId)) setups.set(accountId, await chatSetupOf(tx, deps.registry, accountId, deps.config.OPERATOR_RENOTIFY_SECONDS));
    return setups.get(accountId)!;
  };
  const defaultRenotifyMs = deps.config.OPERATOR_RENOTIFY_SECONDS * 1000;

  for (let round = 0, seen = new Set<string>(); round < MAX_ROUNDS; round++) {
    const ids = (await dueSnoozedItems(db, now, BATCH)).filter((id) => !seen.has(id));
    for (const id of ids) {
      seen.add(id);
      const rows = await db.$transaction(async (tx) => {
        const item = await lockOperatorItem(tx, id);
        if (!item || item.state !== "snoozed" || !item.snoozedUntil || item.snoozedUntil > now) return null;
        const setup = await setupOf(tx, item.accountId);
        const done = await commitTransition(tx, item, {
          change: "unsnoozed", actor: SYSTEM_ACTOR, now, renotifyMs: setup?.settings.renotifyMs ?? defaultRenotifyMs,
          data: { snoozed_until: item.snoozedUntil.toISOString() },
        });
        if (!done || !("item" in done)) return null;
        return afterTransition(tx, setup, done.item, now);
      });
      if (rows) { result.unsnoozed++; result.outbox.push(...rows); }
    }
    if (ids.length < BATCH) break;
  }

  for (let round = 0, seen = new Set<string>(); round < MAX_ROUNDS; round++) {
    const ids = (await dueRenotifyItems(db, now, BATCH)).filter((id) => !seen.has(id));
    for (const id of ids) {
      seen.add(id);
      const rows = await db.$transaction(async (tx) => {
        const item = await lockOperatorItem(tx, id);
        if (!item || item.state !== "open" || !item.renotifyAt || item.renotifyAt > now) return null;
        const setup = await setupOf(tx, item.accountId);
        const next = new Date(now.getTime() + (setup?.settings.renotifyMs ?? defaultRenotifyMs));
        // Without a card there is nothing to reply under: only the next time is pushed forward.
        if (!hasCard(item)) { await updateOperatorItem(tx, id, { renotifyAt: next }); return null; }
        const updated = await updateOperatorItem(tx, id, { renotifyAt: next, renotifyCount: { increment: 1 } });
        await appendOperatorItemEvents(tx, [{
          itemId: id, accountId: item.accountId, action: "renotified", fromState: item.state, toState: item.state, actor: SYSTEM_ACTOR,
          version: item.version, data: { renotify_count: updated.renotifyCount, next_renotify_at: next.toISOString() },
        }]);
        return addOutboxMessages(tx, [chatMessage(updated, "renotify_item", (setup && targetOf(setup, updated)?.connection.id) ?? null)]);
      });
      if (rows) { result.renotified++; result.outbox.push(...rows); }
    }
    if (ids.length < BATCH) break;
  }
  return result;
}
