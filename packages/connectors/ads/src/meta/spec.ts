import type { TargetingChange } from "../kind.ts";

// Read-merge-write of an ad set's targeting: Meta replaces the whole spec on each write, so the plan's changes are
// merged into the spec read at preview and everything else (geo, ages, custom audiences, exclusions, other
// flexible_spec groups, placements) is sent back exactly as read. Interests go into the first flexible_spec group
// (OR-ed there, so an add widens the audience, never narrows it); adds are appended, removes dropped by id. A group
// (or flexible_spec) that a removal empties is dropped, so a rollback gives back exactly the spec read before.

type Spec = Record<string, unknown>;
interface Interest { id: string; name?: string }

export function mergeInterests(prior: Spec, changes: TargetingChange[]): Spec {
  const spec = structuredClone(prior);
  const groups = Array.isArray(spec.flexible_spec) ? (spec.flexible_spec as Spec[]) : [];
  const first: Spec = groups[0] && typeof groups[0] === "object" ? groups[0] : {};
  let interests: Interest[] = Array.isArray(first.interests) ? (first.interests as Interest[]) : [];
  for (const c of changes) {
    const id = c.item.id ?? c.item.key;
    if (c.op === "add" && !interests.some((i) => String(i.id) === id)) interests = [...interests, { id, name: c.item.text }];
    if (c.op === "remove") interests = interests.filter((i) => String(i.id) !== id);
  }
  const group: Spec = { ...first, interests };
  if (!interests.length) delete group.interests;
  const rest = groups.slice(1);
  const next = Object.keys(group).length ? [group, ...rest] : rest;
  if (next.length) spec.flexible_spec = next;
  else delete spec.flexible_spec;
  return spec;
}
