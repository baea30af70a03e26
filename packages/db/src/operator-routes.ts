import type { Db, Tx } from "./client.ts";
import type { OperatorRoute, Prisma } from "./generated/client.ts";
import { newId } from "./ids.ts";

// Operator routing rules (ordered per account) and the default route's escalation. The rules' meaning lives in
// packages/operator/src/routing.ts; these only read and write them.

export type OperatorRouteRow = OperatorRoute;

export interface OperatorRouteInput {
  /** The stored rule this one is (it keeps its id); absent: a new rule. */
  id?: string;
  name: string;
  match: unknown;
  provider: string;
  channelId: string;
  escalation: unknown;
}

/** The routes of these accounts, in order, and each account's default escalation. */
export async function operatorRoutesOf(db: Db | Tx, accountIds: string[]): Promise<Map<string, { routes: OperatorRouteRow[]; defaultEscalation: unknown }>> {
  const ids = [...new Set(accountIds)];
  if (!ids.length) return new Map();
  const [routes, accounts] = await Promise.all([
    db.operatorRoute.findMany({ where: { accountId: { in: ids } }, orderBy: [{ accountId: "asc" }, { position: "asc" }] }),
    db.account.findMany({ where: { id: { in: ids } }, select: { id: true, operatorEscalation: true } }),
  ]);
  return new Map(accounts.map((a) => [a.id, { routes: routes.filter((r) => r.accountId === a.id), defaultEscalation: a.operatorEscalation }]));
}

export async function findOperatorRoute(db: Db | Tx, id: string): Promise<OperatorRouteRow | null> {
  return db.operatorRoute.findUnique({ where: { id } });
}

/** The ids of the account's rules. */
export async function operatorRouteIds(db: Db | Tx, accountId: string): Promise<string[]> {
  return (await db.operatorRoute.findMany({ where: { accountId }, select: { id: true } })).map((r) => r.id);
}

/**
 * Saves the account's rules (positions 0..n-1, in the given order) and its default escalation, in one transaction:
 * a rule with an id updates that rule in place (items routed by it keep their rule), one without is created, and the
 * account's rules not given are deleted. Saves of one account take turns (its row is locked). When a given id is not
 * one of the account's rules (a save meanwhile deleted it), nothing is written and those rules' indexes are returned.
 */
export async function saveOperatorRoutes(db: Db, accountId: string, routes: OperatorRouteInput[], defaultEscalation: unknown): Promise<{ unknown: number[] }> {
  return db.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT id FROM accounts WHERE id = ${accountId} FOR UPDATE`;
    const stored = new Map((await tx.operatorRoute.findMany({ where: { accountId } })).map((r) => [r.id, r]));
    const unknown = routes.flatMap((r, i) => (r.id !== undefined && !stored.has(r.id) ? [i] : []));
    if (unknown.length) return { unknown };
    const kept = routes.flatMap((r, position) => (r.id ? [{ ...r, id: r.id, position }] : []));
    await tx.operatorRoute.deleteMany({ where: { accountId, id: { notIn: kept.map((r) => r.id) } } });
    // (account_id, position) is unique: rules that move are parked at negative positions first, so no two collide.
    const moved = kept.filter((r) => stored.get(r.id)!.position !== r.position);
    if (moved.length) {
      await tx.$executeRaw`UPDATE operator_routes SET position = -1 - position WHERE account_id = ${accountId} AND id = ANY(${moved.map((r) => r.id)}::text[])`;
    }
    for (const r of kept) {
      const before = stored.get(r.id)!;
      // An unchanged rule is not written, so its updated_at says when it last changed.
      const same = before.position === r.position && before.name === r.name && before.provider === r.provider && before.channelId === r.channelId
        && sameJson(before.match, r.match) && sameJson(before.escalation, r.escalation);
      if (same) continue;
      await tx.operatorRoute.update({
        where: { id: r.id },
        data: { position: r.position, name: r.name, match: r.match as Prisma.InputJsonValue, provider: r.provider, channelId: r.channelId, escalation: r.escalation as Prisma.InputJsonValue },
      });
    }
    const added = routes.flatMap((r, position) => (r.id ? [] : [{
      id: newId("rte"), accountId, position, name: r.name, match: r.match as Prisma.InputJsonValue,
      provider: r.provider, channelId: r.channelId, escalation: r.escalation as Prisma.InputJsonValue,
    }]));
    if (added.length) await tx.operatorRoute.createMany({ data: added });
    await tx.account.update({ where: { id: accountId }, data: { operatorEscalation: defaultEscalation as Prisma.InputJsonValue } });
    return { unknown: [] };
  });
}

/** JSON equality whatever the key order (jsonb does not keep it). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return false;
  const defined = (o: object) => Object.entries(o).filter(([, v]) => v !== undefined);
  const ea = defined(a), eb = new Map(defined(b));
  return ea.length === eb.size && ea.every(([k, v]) => eb.has(k) && sameJson(v, eb.get(k)));
}
