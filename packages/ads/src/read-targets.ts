import type { AdsClient, EntityTargeting, TargetingField } from "@trendgate/connector-ads";

/** The entities' targeting as read now, one provider read per targeting field (preview, rollback and apply alike). */
export async function readTargets(client: AdsClient, adAccountId: string, entities: { id: string; field: TargetingField }[]): Promise<EntityTargeting[]> {
  const fields = [...new Set(entities.map((e) => e.field))];
  return (await Promise.all(fields.map((f) => client.readTargeting(adAccountId, entities.filter((e) => e.field === f).map((e) => e.id), f)))).flat();
}
