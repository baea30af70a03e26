import type { AdsClient, TargetingField } from "@trendgate/connector-ads";

/** A mapped entity the provider does not confirm: no such entity in the ad account, or one whose targeting the field is not. */
export interface MappingProblem { index: number; id: string; problem: "unknown_entity" | "field_not_targetable"; targeting: TargetingField[] }

/** What the provider's listing says of mapped entities: the problems, and the names it gives those it has. */
export interface MappingCheck { problems: MappingProblem[]; names: Map<string, string> }

const PAGE = 200;

interface Seen { name: string; targeting: Set<TargetingField> }

/** Pages the provider's listing of the ad account's entities, keeping those of `wanted`, until `enough` or its end. */
async function scanEntities(client: AdsClient, adAccountId: string, wanted: Set<string>, enough: (found: Map<string, Seen>) => boolean): Promise<Map<string, Seen>> {
  // Targeting per id, across levels (a provider may number campaigns and ad groups alike).
  const found = new Map<string, Seen>();
  let cursor: string | undefined;
  do {
    const page = await client.listEntities(adAccountId, { cursor, limit: PAGE });
    for (const e of page.data) {
      if (!wanted.has(e.id)) continue;
      const was = found.get(e.id);
      // Where ids repeat across levels, the name is the targetable level's (the one a mapping names).
      const name = e.targeting.length ? e.name || was?.name || "" : was?.name || e.name;
      found.set(e.id, { name, targeting: new Set([...(was?.targeting ?? []), ...e.targeting]) });
    }
    cursor = page.next_cursor ?? undefined;
  } while (cursor && !enough(found));
  return found;
}

/**
 * Checks mapped entities against the provider's own listing of the ad account's entities (paged until each is seen
 * with its field), so a mapping cannot name what a preview would later fail to read. The names it lists are kept
 * with the mapping, so plans show them without listing again.
 */
export async function checkMappedEntities(client: AdsClient, adAccountId: string, mapped: { id: string; field: TargetingField }[]): Promise<MappingCheck> {
  const found = await scanEntities(client, adAccountId, new Set(mapped.map((e) => e.id)), (f) => mapped.every((m) => f.get(m.id)?.targeting.has(m.field)));
  const problems = mapped.flatMap((m, index): MappingProblem[] => {
    const e = found.get(m.id);
    if (!e) return [{ index, id: m.id, problem: "unknown_entity", targeting: [] }];
    return e.targeting.has(m.field) ? [] : [{ index, id: m.id, problem: "field_not_targetable", targeting: [...e.targeting] }];
  });
  return { problems, names: namesOf(found) };
}

/** The provider's names of these entities (those it lists with one), for mappings saved without them. */
export async function entityNames(client: AdsClient, adAccountId: string, mapped: { id: string; field: TargetingField }[]): Promise<Map<string, string>> {
  return namesOf(await scanEntities(client, adAccountId, new Set(mapped.map((e) => e.id)), (f) => mapped.every((m) => f.get(m.id)?.targeting.has(m.field))));
}

const namesOf = (found: Map<string, Seen>) => new Map([...found].filter(([, e]) => e.name).map(([id, e]) => [id, e.name]));
