import type { TargetingChange } from "../kind.ts";

// An ad squad's interest targeting, and the read-merge-write of its `targeting`. A write is a PATCH carrying only
// `targeting` (Snap replaces that field whole), so the plan's change is merged into the targeting as read and every
// other part of it (geos, demographics, devices, segments, excluded interests) goes back exactly as read; no other
// field of the ad squad (budget, bid, schedule, read-only fields) is sent.
// In `targeting.interests`, entries are OR-ed, and so are the `category_id`s within one; an entry with
// `operation: "EXCLUDE"` takes people out. A plan reads and widens the INCLUDE entries only (no `operation` means
// INCLUDE): an add joins the first INCLUDE entry (or makes one), a remove takes the id out wherever it is included,
// and an entry (or `interests` itself) that a removal empties is dropped, so a rollback gives back the ad squad read
// before.

export type Squad = Record<string, unknown> & { id: string; campaign_id: string; targeting?: Record<string, unknown> };
interface InterestEntry { category_id?: unknown; operation?: unknown }

const isInclude = (e: InterestEntry) => e?.operation === undefined || e.operation === "INCLUDE";
const idsOf = (e: InterestEntry): string[] => (Array.isArray(e?.category_id) ? e.category_id.map(String) : []);
const entriesOf = (t: Record<string, unknown> | undefined): InterestEntry[] => (Array.isArray(t?.interests) ? (t.interests as InterestEntry[]) : []);

/** The interest ids an ad squad targets (its INCLUDE entries), in order, once each. */
export function includedInterests(squad: Squad): string[] {
  return [...new Set(entriesOf(squad.targeting).filter(isInclude).flatMap(idsOf))];
}

export function mergeInterests(prior: Squad, changes: TargetingChange[]): Squad {
  const squad = structuredClone(prior);
  const targeting: Record<string, unknown> = { ...(squad.targeting ?? {}) };
  let entries = entriesOf(targeting);
  for (const c of changes) {
    const id = c.item.id ?? c.item.key;
    const included = entries.some((e) => isInclude(e) && idsOf(e).includes(id));
    if (c.op === "add" && !included) {
      const i = entries.findIndex(isInclude);
      entries = i < 0 ? [...entries, { category_id: [id] }] : entries.map((e, k) => (k === i ? { ...e, category_id: [...idsOf(e), id] } : e));
    }
    if (c.op === "remove" && included) {
      entries = entries
        .map((e) => (isInclude(e) && idsOf(e).includes(id) ? { ...e, category_id: idsOf(e).filter((x) => x !== id), emptied: true } : e))
        .filter((e) => !("emptied" in e) || idsOf(e).length)
        .map(({ emptied: _, ...e }: InterestEntry & { emptied?: boolean }) => e);
    }
  }
  if (entries.length) targeting.interests = entries;
  else delete targeting.interests;
  squad.targeting = targeting;
  return squad;
}

/**
 * Our own checks of the targeting a write sets against Snap's documented constraints (Snap has no validate-only
 * mode), each failure a reason. Field names and rules are from Snap's ad squad and targeting reference; the age
 * floor of 13 is Snap's minimum advertising age. The other fields of the ad squad are not sent, so not checked.
 */
export function targetingProblems(t: Record<string, unknown> | undefined): string[] {
  const out: string[] = [];
  if (!t || typeof t !== "object") return ["targeting is required"];
  const geos = Array.isArray(t.geos) ? (t.geos as { country_code?: unknown; operation?: unknown }[]) : [];
  if (!geos.length) out.push("targeting.geos is required: at least one country");
  geos.forEach((g, i) => { if (typeof g?.country_code !== "string" || !/^[a-z]{2}$/i.test(g.country_code)) out.push(`targeting.geos[${i}].country_code must be a two-letter country code`); });
  const countries = new Set(geos.filter((g) => g?.operation !== "EXCLUDE").map((g) => String(g?.country_code ?? "").toLowerCase()));
  const demographics = Array.isArray(t.demographics) ? (t.demographics as Record<string, unknown>[]) : [];
  if (countries.size > 1 && !demographics.some((d) => Array.isArray(d?.languages) && d.languages.length === 1)) {
    out.push("targeting several countries needs a demographics entry with a single languages entry");
  }
  demographics.forEach((d, i) => {
    const min = d?.min_age === undefined ? undefined : Number(d.min_age);
    const max = d?.max_age === undefined ? undefined : Number(d.max_age);
    if (min !== undefined && !(Number.isInteger(min) && min >= 13)) out.push(`targeting.demographics[${i}].min_age must be a whole number of at least 13`);
    if (min !== undefined && max !== undefined && max < min) out.push(`targeting.demographics[${i}].max_age is below min_age`);
  });
  entriesOf(t).forEach((e, i) => {
    if (!idsOf(e).length) out.push(`targeting.interests[${i}].category_id must list at least one id`);
    if (!isInclude(e) && e.operation !== "EXCLUDE") out.push(`targeting.interests[${i}].operation must be INCLUDE or EXCLUDE`);
  });
  return out;
}

/** The Snap Lifestyle Category ids an ad squad's targeting names (included or excluded): what the lookup can check. */
export const lifestyleIds = (squad: Squad) => [...new Set(entriesOf(squad.targeting).flatMap(idsOf).filter((id) => id.startsWith("SLC_")))];
