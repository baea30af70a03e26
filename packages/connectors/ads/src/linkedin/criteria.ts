import type { TargetingChange } from "../kind.ts";

// A campaign's `targetingCriteria`: `include.and` is a list of clauses AND-ed together, each an
// `or` map of facet URN -> entity URNs OR-ed together; `exclude.or` takes members out. A PARTIAL_UPDATE `$set` of
// targetingCriteria replaces it WHOLE, so a write carries the criteria read at preview with only the plan's change
// merged in (read-merge-write). The plan's `interests` field is the first include clause that ORs member interests
// or skills: an add widens that clause (never adds a narrowing one while it exists); every other clause (locations,
// locales, industries...) and the exclusions go back exactly as read. An add where no such clause exists appends
// one; a removal that empties it drops it, so a rollback gives back the criteria read before, byte for byte.

export const FACETS = {
  locations: "urn:li:adTargetingFacet:locations",
  profileLocations: "urn:li:adTargetingFacet:profileLocations",
  interests: "urn:li:adTargetingFacet:interests",
  skills: "urn:li:adTargetingFacet:skills",
} as const;

/** The facets behind the plan's `interests` field, keyed by their entities' URN prefix. */
const PLAN_FACETS: [prefix: string, facet: string][] = [["urn:li:interest:", FACETS.interests], ["urn:li:skill:", FACETS.skills]];
const PLAN_FACET_SET = new Set(PLAN_FACETS.map(([, f]) => f));
const LOCATION_FACETS = [FACETS.locations, FACETS.profileLocations];

type Or = Record<string, string[]>;
export interface Criteria { include?: { and?: { or?: Or }[] }; exclude?: { or?: Or }; [k: string]: unknown }

/** The facet an entity URN belongs to when the plan may change it (member interests, skills), else null. */
export const planFacetOf = (urn: string): string | null => PLAN_FACETS.find(([p]) => urn.startsWith(p) && /^[^\s(),]+$/.test(urn.slice(p.length)))?.[1] ?? null;

const clauses = (c: Criteria) => (Array.isArray(c.include?.and) ? c.include!.and! : []);
const planClause = (c: Criteria) => clauses(c).findIndex((cl) => Object.keys(cl?.or ?? {}).some((f) => PLAN_FACET_SET.has(f)));

/** The interest and skill URNs of the plan's clause, in the order LinkedIn keeps them. */
export function planUrns(c: Criteria): string[] {
  const i = planClause(c);
  if (i < 0) return [];
  const or = clauses(c)[i].or ?? {};
  return Object.entries(or).filter(([f]) => PLAN_FACET_SET.has(f)).flatMap(([, v]) => (Array.isArray(v) ? v.map(String) : []));
}

export function mergeInterests(prior: Criteria, changes: TargetingChange[]): Criteria {
  const c = structuredClone(prior);
  let i = planClause(c);
  if (i < 0) {
    if (!changes.some((x) => x.op === "add")) return c;
    c.include = { ...(c.include ?? {}), and: [...clauses(c), { or: {} }] };
    i = clauses(c).length - 1;
  }
  const and = clauses(c);
  const or: Or = { ...(and[i].or ?? {}) };
  for (const ch of changes) {
    const urn = ch.item.id ?? ch.item.key;
    const facet = planFacetOf(urn);
    if (!facet) continue; // calls() refuses these before merging
    const list = Array.isArray(or[facet]) ? or[facet] : [];
    if (ch.op === "add" && !list.includes(urn)) or[facet] = [...list, urn];
    if (ch.op === "remove") or[facet] = list.filter((u) => u !== urn);
    if (!or[facet].length) delete or[facet];
  }
  if (Object.keys(or).length) and[i] = { ...and[i], or };
  else and.splice(i, 1);
  return c;
}

/**
 * Our own checks of a criteria against LinkedIn's documented constraints (there is no validate-only write): the
 * AND-of-OR shape, facet and entity URNs, and the location facet every campaign must have. Reasons, empty if none.
 */
export function criteriaProblems(c: unknown): string[] {
  const out: string[] = [];
  const isUrn = (v: unknown) => typeof v === "string" && /^urn:li:[A-Za-z]+:\S+$/.test(v);
  const checkOr = (or: unknown, where: string) => {
    if (!or || typeof or !== "object" || Array.isArray(or) || !Object.keys(or).length) { out.push(`${where}: an "or" map of facet URNs to entity URNs is required`); return; }
    for (const [facet, values] of Object.entries(or)) {
      if (!/^urn:li:adTargetingFacet:[A-Za-z]+$/.test(facet)) out.push(`${where}: ${facet} is not a targeting facet URN`);
      if (!Array.isArray(values) || !values.length) out.push(`${where}: ${facet} needs at least one entity`);
      else for (const v of values) if (!isUrn(v)) out.push(`${where}: ${JSON.stringify(v)} is not an entity URN`);
    }
  };
  const crit = c as Criteria;
  if (!crit || typeof crit !== "object" || !Array.isArray(crit.include?.and) || !crit.include!.and!.length) return ["targetingCriteria needs include.and with at least one clause"];
  crit.include!.and!.forEach((cl, n) => checkOr(cl?.or, `include.and[${n}]`));
  if (crit.exclude !== undefined) checkOr(crit.exclude?.or, "exclude");
  const located = crit.include!.and!.some((cl) => LOCATION_FACETS.some((f) => Array.isArray(cl?.or?.[f]) && cl.or![f].length > 0));
  if (!located) out.push(`LinkedIn requires a location: no include clause has ${FACETS.locations} (or ${FACETS.profileLocations})`);
  return out;
}
