import type { TargetingChange } from "../kind.ts";

// Read-merge-write of an ad group's targeting_spec: a PATCH of an ad group replaces its whole targeting_spec,
// so the plan's interest changes are merged into the spec read at preview and everything else
// (LOCATION, GEO, ages, genders, audiences, locales, devices) is sent back exactly as read. An INTEREST list that a
// removal empties is dropped (no INTEREST means "all interests", as before the plan added any), so a rollback gives
// back exactly the spec read before.

type Spec = Record<string, unknown>;

export function mergeInterests(prior: Spec, changes: TargetingChange[]): Spec {
  const spec = structuredClone(prior);
  let ids = Array.isArray(spec.INTEREST) ? (spec.INTEREST as unknown[]).map(String) : [];
  for (const c of changes) {
    const id = c.item.id ?? c.item.key;
    if (c.op === "add" && !ids.includes(id)) ids = [...ids, id];
    if (c.op === "remove") ids = ids.filter((i) => i !== id);
  }
  if (ids.length) spec.INTEREST = ids;
  else delete spec.INTEREST;
  return spec;
}
