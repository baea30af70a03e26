import type { EntityTargeting, TargetingChange, TargetingField, TargetingItem } from "@trendgate/connector-ads";
import { applyGuardrails, type PlanTrend, type ProposedChange, type Refusal, type SafetySettings } from "./guardrails.ts";
import { stateHash } from "./plan-hash.ts";

// From trends to a plan's changes: for each mapped entity, the targeting items the category's
// current trends resolve to (most severe trends first), less what the entity already targets, through the
// guardrails. The result is what a preview shows: each change with the trend that caused it, a per-entity diff
// (before, after), the refusals with their reasons, and the hash of the state it was computed from (an apply reads
// the targets again and refuses the plan if that hash changed).

export interface PlanInput {
  /** The account's current trends in the selected category. */
  trends: PlanTrend[];
  /** The entities mapped to the category and the field a plan changes on each. */
  entities: { id: string; name?: string; field: TargetingField }[];
  /** Their targeting as read now. */
  prior: EntityTargeting[];
  /** Targeting items per field, then per trend name (the provider's resolveItems, once per mapped field). */
  resolved: ReadonlyMap<TargetingField, ReadonlyMap<string, TargetingItem[]>>;
  safety: SafetySettings;
}

export interface DiffRow {
  entity_id: string;
  entity_name: string | null;
  field: TargetingField;
  before: string[];
  after: string[];
  changes: { change_id: string; op: "add" | "remove"; item: string; trend: { id: string; name: string } | null }[];
}

export interface RefusedChange { change_id: string; entity_id: string; field: string; item: string; trend_id: string | null; rule: Refusal["rule"]; reason: string }

export interface ComputedPlan {
  changes: TargetingChange[];
  diff: DiffRow[];
  /** Changes the guardrails refused, each with its rule and reason (shown in the preview, never applied). */
  refused: RefusedChange[];
  prior_state_hash: string;
}

const SEVERITY_ORDER = { critical: 0, high: 1, medium: 2, low: 3 } as const;

/** The prior state as hashed: per entity and field, the item keys in order (what a write can change). */
export function hashablePrior(prior: EntityTargeting[]) {
  return [...prior]
    .sort((a, b) => (a.entity_id + a.field < b.entity_id + b.field ? -1 : 1))
    .map((t) => ({ entity_id: t.entity_id, field: t.field, items: t.items.map((i) => i.key).sort(), spec: t.spec ?? null }));
}

export function computePlan(input: PlanInput): ComputedPlan {
  const trends = [...input.trends].sort((a, b) => SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] || a.name.localeCompare(b.name));
  const trendById = new Map(trends.map((t) => [t.id, t]));
  const priorOf = new Map(input.prior.map((t) => [`${t.entity_id}|${t.field}`, t]));
  const proposed: (ProposedChange & { change: TargetingChange })[] = [];
  let n = 0;
  for (const entity of input.entities) {
    const current = priorOf.get(`${entity.id}|${entity.field}`)?.items ?? [];
    const have = new Set(current.map((i) => i.key));
    for (const trend of trends) {
      for (const item of input.resolved.get(entity.field)?.get(trend.name) ?? []) {
        if (have.has(item.key)) continue; // already targeted (or proposed by a more severe trend)
        have.add(item.key);
        const change: TargetingChange = { id: `chg_${++n}`, entity_id: entity.id, field: entity.field, op: "add", item, trend_id: trend.id };
        proposed.push({ entity_id: entity.id, field: entity.field, op: "add", item: { text: item.text, id: item.id }, trend_id: trend.id, change });
      }
    }
  }
  const { allowed, refused } = applyGuardrails(proposed, trendById, input.safety);
  const changes = (allowed as typeof proposed).map((p) => p.change);

  const diff: DiffRow[] = input.entities.map((entity) => {
    const before = priorOf.get(`${entity.id}|${entity.field}`)?.items ?? [];
    const mine = changes.filter((c) => c.entity_id === entity.id && c.field === entity.field);
    return {
      entity_id: entity.id, entity_name: entity.name ?? null, field: entity.field,
      before: before.map((i) => i.text),
      after: [...before.map((i) => i.text), ...mine.filter((c) => c.op === "add").map((c) => c.item.text)],
      changes: mine.map((c) => {
        const t = c.trend_id ? trendById.get(c.trend_id) : undefined;
        return { change_id: c.id, op: c.op, item: c.item.text, trend: t ? { id: t.id, name: t.name } : null };
      }),
    };
  });
  return {
    changes, diff,
    refused: refused.map((r): RefusedChange => {
      const c = (r.change as (typeof proposed)[number]).change;
      return { change_id: c.id, entity_id: c.entity_id, field: c.field, item: c.item.text, trend_id: c.trend_id, rule: r.rule, reason: r.reason };
    }),
    prior_state_hash: stateHash(hashablePrior(input.prior)),
  };
}
