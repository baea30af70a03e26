import type { AdsEmptyReason } from "@trendgate/contracts";
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
  /** The selected category and where each field's items were looked up: what an empty row's detail names. */
  category?: string;
  lookup?: Partial<Record<TargetingField, string>>;
}

export interface DiffRow {
  entity_id: string;
  entity_name: string | null;
  field: TargetingField;
  before: string[];
  after: string[];
  changes: { change_id: string; op: "add" | "remove"; item: string; trend: { id: string; name: string } | null }[];
  /** Why the entity gets no change (null when it gets some), and that reason for people. */
  empty_reason: AdsEmptyReason | null;
  empty_detail: string | null;
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
    const why = mine.length ? null : whyEmpty(input, trends, entity, proposed.filter((p) => p.entity_id === entity.id && p.field === entity.field).length);
    return {
      entity_id: entity.id, entity_name: entity.name ?? null, field: entity.field,
      before: before.map((i) => i.text),
      after: [...before.map((i) => i.text), ...mine.filter((c) => c.op === "add").map((c) => c.item.text)],
      changes: mine.map((c) => {
        const t = c.trend_id ? trendById.get(c.trend_id) : undefined;
        return { change_id: c.id, op: c.op, item: c.item.text, trend: t ? { id: t.id, name: t.name } : null };
      }),
      empty_reason: why?.reason ?? null, empty_detail: why?.detail ?? null,
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

/** How many names a detail lists before "and N more". */
const LISTED = 10;
export const listed = (xs: string[]) =>
  xs.slice(0, LISTED).map((x) => `"${x}"`).join(", ") + (xs.length > LISTED ? ` and ${xs.length - LISTED} more` : "");
export const entityLabel = (e: { id: string; name?: string | null }) => (e.name ? `"${e.name}" (${e.id})` : e.id);

/**
 * Why an entity gets no change, from what the planner saw: no trend, nothing the provider's lookup found for the
 * trends' terms, every item already targeted, or every change refused. Only the first two say what to change
 * outside the plan (the category, or the trends' wording), so they are told apart from the rest.
 */
function whyEmpty(input: PlanInput, trends: PlanTrend[], entity: PlanInput["entities"][number], proposed: number): { reason: AdsEmptyReason; detail: string } {
  if (!trends.length) {
    return { reason: "no_rising_trends", detail: `no trend${input.category ? ` of category "${input.category}"` : ""} is emerging, rising or peaking` };
  }
  const items = trends.flatMap((t) => input.resolved.get(entity.field)?.get(t.name) ?? []);
  if (!items.length) {
    const what = entity.field === "interests" ? "interest" : "keyword";
    const where = input.lookup?.[entity.field] ?? `the provider's ${what} lookup`;
    return { reason: entity.field === "interests" ? "no_interest_matched" : "no_keyword_matched", detail: `no ${what} matched the trend terms searched in ${where}: ${listed(trends.map((t) => t.name))}` };
  }
  if (proposed) return { reason: "all_refused", detail: `${entityLabel(entity)}: all ${proposed} of its changes were refused (see refused)` };
  return { reason: "already_targeted", detail: `${entityLabel(entity)} already targets every ${entity.field === "interests" ? "interest" : "keyword"} the trends resolve to: ${listed([...new Set(items.map((i) => i.text))])}` };
}
