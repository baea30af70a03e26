import type { AdsClient, TargetingField } from "@trendgate/connector-ads";

/** A mapped entity the provider does not confirm: no such entity in the ad account, or one whose targeting the field is not. */
export interface MappingProblem { index: number; id: string; problem: "unknown_entity" | "field_not_targetable"; targeting: TargetingField[] }

const PAGE = 200;

/**
 * Checks mapped entities against the provider's own listing of the ad account's entities (paged until each is seen
 * with its field), so a mapping cannot name what a preview would later fail to read.
 */
export async function checkMappedEntities(client: AdsClient, adAccountId: string, mapped: { id: string; field: TargetingField }[]): Promise<MappingProblem[]> {
  const wanted = new Set(mapped.map((e) => e.id));
  // Targeting per id, across levels (a provider may number campaigns and ad groups alike).
  const found = new Map<string, Set<TargetingField>>();
  let cursor: string | undefined;
  do {
    const page = await client.listEntities(adAccountId, { cursor, limit: PAGE });
    for (const e of page.data) if (wanted.has(e.id)) found.set(e.id, new Set([...(found.get(e.id) ?? []), ...e.targeting]));
    cursor = page.next_cursor ?? undefined;
  } while (cursor && !mapped.every((m) => found.get(m.id)?.has(m.field)));
  return mapped.flatMap((m, index): MappingProblem[] => {
    const e = found.get(m.id);
    if (!e) return [{ index, id: m.id, problem: "unknown_entity", targeting: [] }];
    return e.has(m.field) ? [] : [{ index, id: m.id, problem: "field_not_targetable", targeting: [...e] }];
  });
}
