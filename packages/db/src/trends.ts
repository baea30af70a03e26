import type { Db, Tx } from "./client.ts";

// Reads of the trends table for services that act on current trends (ads plans).

/** The account's active trends in `category` or below it, at one of `stages`, fastest first. */
export const activeTrendsInCategory = (db: Db | Tx, q: { accountId: string; category: string; stages: readonly string[]; take: number }) =>
  db.trend.findMany({
    where: { accountId: q.accountId, status: "active", stage: { in: [...q.stages] }, OR: [{ category: q.category }, { category: { startsWith: `${q.category}/` } }] },
    orderBy: { velocity: "desc" }, take: q.take,
  });
