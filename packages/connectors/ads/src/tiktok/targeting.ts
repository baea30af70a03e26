import type { TargetingChange, TargetingItem } from "../kind.ts";

// An ad group's interest targeting as TikTok keeps it: general interest categories (`interest_category_ids`, ids
// from /tool/interest_category/), additional interests (`interest_keyword_ids`, from /tool/interest_keyword/
// recommend/) and purchase-intention keywords (`purchase_intention_keyword_ids`). A plan's "interests" field is the
// first two: items are keyed `category:<id>` or `keyword:<id>`. /adgroup/update/ replaces each list it is sent, so a
// write carries the lists read at preview with only the plan's changes merged in (read-merge-write); purchase-
// intention keywords are never sent (TikTok refuses them next to interest keywords).

export interface InterestSpec {
  interest_category_ids: string[];
  interest_keyword_ids: string[];
  purchase_intention_keyword_ids: string[];
}

/** What a write sends besides the ids: the two lists a plan changes, whole. */
export interface InterestWrite { interest_category_ids: string[]; interest_keyword_ids: string[] }

/**
 * The connector's own caps on list lengths. TikTok does not publish its exact limits; a plan that would grow an ad
 * group's interests past these is refused in the preview rather than left to TikTok's validation.
 */
export const MAX_INTEREST_CATEGORIES = 100;
export const MAX_INTEREST_KEYWORDS = 100;

export const categoryItem = (id: string, name?: string): TargetingItem => ({ key: `category:${id}`, id, text: name || id });
export const keywordItem = (id: string, name?: string): TargetingItem => ({ key: `keyword:${id}`, id, text: name || id });

export const itemTypeOf = (key: string): "category" | "keyword" | null =>
  key.startsWith("category:") ? "category" : key.startsWith("keyword:") ? "keyword" : null;

const ids = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);
export const specOf = (row: Record<string, unknown>): InterestSpec => ({
  interest_category_ids: ids(row.interest_category_ids),
  interest_keyword_ids: ids(row.interest_keyword_ids),
  purchase_intention_keyword_ids: ids(row.purchase_intention_keyword_ids),
});

/** The two lists after the changes: adds appended (once), removes dropped; everything else as read. */
export function mergeInterests(prior: InterestSpec, changes: TargetingChange[]): InterestWrite {
  let categories = [...prior.interest_category_ids];
  let keywords = [...prior.interest_keyword_ids];
  for (const c of changes) {
    const type = itemTypeOf(c.item.key);
    const id = c.item.id ?? c.item.key.slice(c.item.key.indexOf(":") + 1);
    if (type === "category") categories = c.op === "add" ? (categories.includes(id) ? categories : [...categories, id]) : categories.filter((x) => x !== id);
    if (type === "keyword") keywords = c.op === "add" ? (keywords.includes(id) ? keywords : [...keywords, id]) : keywords.filter((x) => x !== id);
  }
  return { interest_category_ids: categories, interest_keyword_ids: keywords };
}

/**
 * Why TikTok would refuse this write to an ad group whose targeting is `current` now, against its documented
 * constraints (null: nothing found). Checks of the ids themselves need lookups and live in the client.
 */
export function writeConflicts(write: InterestWrite, current: InterestSpec): string[] {
  const out: string[] = [];
  const added = write.interest_keyword_ids.filter((k) => !current.interest_keyword_ids.includes(k));
  // TikTok refuses purchase_intention_keyword_ids together with interest keywords ("keyword conflict").
  if (write.interest_keyword_ids.length && current.purchase_intention_keyword_ids.length && added.length) {
    out.push(`the ad group targets purchase-intention keywords (${current.purchase_intention_keyword_ids.length}), which TikTok does not allow together with interest keywords`);
  }
  if (write.interest_category_ids.length > MAX_INTEREST_CATEGORIES) out.push(`${write.interest_category_ids.length} interest categories would exceed the connector's cap of ${MAX_INTEREST_CATEGORIES}`);
  if (write.interest_keyword_ids.length > MAX_INTEREST_KEYWORDS) out.push(`${write.interest_keyword_ids.length} interest keywords would exceed the connector's cap of ${MAX_INTEREST_KEYWORDS}`);
  for (const name of ["interest_category_ids", "interest_keyword_ids"] as const) {
    const list = write[name];
    if (new Set(list).size !== list.length) out.push(`${name} repeats an id`);
    if (list.some((x: string) => !/^\d+$/.test(x))) out.push(`${name} holds an id that is not digits`);
  }
  return out;
}
