import type { Db, Tx } from "./client.ts";
import type { OperatorRoute, Prisma } from "./generated/client.ts";
import { newId } from "./ids.ts";

// Operator routing rules (ordered per account) and the default route's escalation. The rules' meaning lives in
// packages/operator/src/routing.ts; these only read and write them.

export type OperatorRouteRow = OperatorRoute;

export interface OperatorRouteInput {
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

/** Replaces the account's routes (positions 0..n-1, in the given order) and its default escalation, in one transaction. */
export async function replaceOperatorRoutes(db: Db, accountId: string, routes: OperatorRouteInput[], defaultEscalation: unknown): Promise<void> {
  await db.$transaction(async (tx) => {
    await tx.operatorRoute.deleteMany({ where: { accountId } });
    if (routes.length) {
      await tx.operatorRoute.createMany({
        data: routes.map((r, position) => ({
          id: newId("rte"), accountId, position, name: r.name, match: r.match as Prisma.InputJsonValue,
          provider: r.provider, channelId: r.channelId, escalation: r.escalation as Prisma.InputJsonValue,
        })),
      });
    }
    await tx.account.update({ where: { id: accountId }, data: { operatorEscalation: defaultEscalation as Prisma.InputJsonValue } });
  });
}
