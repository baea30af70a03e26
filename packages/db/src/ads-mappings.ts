import type { Db, Tx } from "./client.ts";

// The campaign entities an account maps to its ads selection's trend category, per provider.

export interface AdsMappingEntity { id: string; name?: string | null; field: string }

export const listAdsMappings = (db: Db | Tx, accountId: string, provider: string) =>
  db.adsMapping.findMany({ where: { accountId, provider }, orderBy: { entityId: "asc" } });

/** Replaces the provider's mapping with `entities` (empty: cleared), in one transaction. */
export async function replaceAdsMappings(db: Db, accountId: string, provider: string, entities: AdsMappingEntity[]): Promise<void> {
  await db.$transaction([
    db.adsMapping.deleteMany({ where: { accountId, provider } }),
    db.adsMapping.createMany({ data: entities.map((e) => ({ accountId, provider, entityId: e.id, entityName: e.name ?? null, field: e.field })) }),
  ]);
}
