import type { EntityTargeting, TargetingChange } from "@trendgate/connector-ads";

// Before an apply writes anything it reads the targets again. Comparing what it reads with the
// plan's prior state and its "after" tells four cases apart, which also makes an apply idempotent across retries
// and crashes (no provider here offers an idempotency key, so it reads before it writes):
// - fresh: the targets are as previewed: make every change;
// - already applied: the targets are the plan's "after" (an earlier attempt wrote everything): write nothing;
// - partially applied: the targets are the prior state plus some of the plan's changes (an attempt cut short):
//   make the rest;
// - stale: anything else (someone changed the targets since the preview): write nothing, refuse the plan.

export type Reconciled =
  | { verdict: "fresh" | "partially_applied"; remaining: TargetingChange[] }
  | { verdict: "already_applied" }
  | { verdict: "stale"; reason: string };

const keyOf = (t: { entity_id: string; field: string }) => `${t.entity_id}|${t.field}`;

export function reconcile(changes: TargetingChange[], prior: EntityTargeting[], current: EntityTargeting[]): Reconciled {
  const now = new Map(current.map((t) => [keyOf(t), new Set(t.items.map((i) => i.key))]));
  const done: TargetingChange[] = [];
  const remaining: TargetingChange[] = [];
  for (const t of prior) {
    const mine = changes.filter((c) => keyOf(c) === keyOf(t));
    const have = now.get(keyOf(t)) ?? new Set<string>();
    // Items the plan does not touch must be exactly as they were.
    const touched = new Set(mine.map((c) => c.item.key));
    const before = new Set(t.items.map((i) => i.key));
    const untouchedNow = [...have].filter((k) => !touched.has(k)).sort();
    const untouchedBefore = [...before].filter((k) => !touched.has(k)).sort();
    if (untouchedNow.join("\n") !== untouchedBefore.join("\n"))
      return { verdict: "stale", reason: `the targeting of ${t.entity_id} changed since the preview` };
    for (const c of mine) {
      const present = have.has(c.item.key);
      const wasPresent = before.has(c.item.key);
      if ((c.op === "add" && present) || (c.op === "remove" && !present)) {
        if ((c.op === "add" && wasPresent) || (c.op === "remove" && !wasPresent))
          return { verdict: "stale", reason: `the targeting of ${t.entity_id} changed since the preview` };
        done.push(c);
      } else remaining.push(c);
    }
  }
  if (!remaining.length) return { verdict: "already_applied" };
  return { verdict: done.length ? "partially_applied" : "fresh", remaining };
}
