import { ADS_SAFETY_DEFAULTS, severityRank, type Severity } from "@trendgate/contracts";

// strict_safety: what a targeting plan may contain, decided per change with a reason a person can read.
// The rules: a wrong apply spends a customer's money on the
// wrong audience, so with strict_safety on (the default) a plan only ever adds targeting, in small numbers, from
// trends that are severe enough, not negative and not about sensitive topics. Off, it may also remove targeting
// this service added earlier. Budgets, bids and schedules are never touched, whatever the setting.

/** A trend as the planner sees it (the account's current trends in the selected category). */
export interface PlanTrend {
  id: string;
  name: string;
  category: string;
  severity: Severity;
  /** Mean sentiment (-1..1) when known. */
  sentiment: number | null;
}

/** One targeting change the planner proposes for one campaign entity. */
export interface ProposedChange {
  entity_id: string;
  /** The targeting field, e.g. `keywords`, `interests`; never a budget, bid or schedule field. */
  field: string;
  op: "add" | "remove" | "replace";
  /** The targeting item (keyword text, interest name) and the provider's id for it when it has one. */
  item: { text: string; id?: string };
  /** The trend that caused it (null for a removal of something no trend asks for any more). */
  trend_id: string | null;
  /** Whether this service added the item earlier (only such items may be removed, and only with strict_safety off). */
  added_by_us?: boolean;
}

export interface SafetySettings {
  strict: boolean;
  /** Trends below this severity are ignored. */
  minSeverity: Severity;
  maxChangesPerEntity: number;
  maxChangesPerRun: number;
  /** Sensitive topics (case-insensitive words or phrases) no trend or item may mention. */
  blocklist: readonly string[];
}

export type GuardrailRule =
  | "additions_only" | "not_added_by_us" | "no_budget_fields" | "blocklisted_topic" | "negative_sentiment"
  | "below_min_severity" | "unknown_trend" | "max_changes_per_entity" | "max_changes_per_run"
  /** Set by the preview, not here: the provider's dry run refused the change. */
  | "dry_run_failed";

export interface Refusal { change: ProposedChange; rule: GuardrailRule; reason: string }

/**
 * A brand-safety default in the spirit of the industry's sensitive-content categories (adult content, arms, crime,
 * death and injury, hate, drugs, terrorism, debated social issues): trends about these are never turned into
 * targeting unless an account changes its list.
 */
export const DEFAULT_BLOCKLIST: readonly string[] = [
  "death", "dead", "killed", "shooting", "shooter", "murder", "war", "terror", "terrorism", "attack", "bomb", "explosion",
  "disaster", "earthquake", "hurricane", "flood", "wildfire", "crash", "tragedy", "victim", "suicide", "abuse", "assault",
  "violence", "weapon", "gun", "firearm", "drug", "overdose", "porn", "adult", "sex", "nude", "hate", "racism", "extremist",
  "abortion", "election", "outbreak", "pandemic", "epidemic", "layoffs", "bankruptcy", "scandal", "lawsuit", "arrest",
];

export const DEFAULT_SAFETY: SafetySettings = { strict: true, ...ADS_SAFETY_DEFAULTS, blocklist: DEFAULT_BLOCKLIST };

/** Fields a plan never writes: money and time are decided by people. */
const FORBIDDEN_FIELD = /budget|bid|schedule|spend|pacing|start_time|end_time|cpc|cpm|price/i;

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The first blocklisted term `text` mentions (as a whole word or phrase), if any. */
export function blocklistedTerm(text: string, blocklist: readonly string[]): string | null {
  for (const term of blocklist) {
    const t = term.trim();
    if (t && new RegExp(`(^|[^\\p{L}\\p{N}])${escape(t)}($|[^\\p{L}\\p{N}])`, "iu").test(text)) return t;
  }
  return null;
}

/** Why a trend may not drive targeting at all, or null when it may. */
export function trendRefusal(trend: PlanTrend, s: SafetySettings): { rule: GuardrailRule; reason: string } | null {
  if (severityRank(trend.severity) < severityRank(s.minSeverity))
    return { rule: "below_min_severity", reason: `trend "${trend.name}" is ${trend.severity}; the minimum is ${s.minSeverity}` };
  if (trend.sentiment !== null && trend.sentiment < 0)
    return { rule: "negative_sentiment", reason: `trend "${trend.name}" has negative sentiment (${trend.sentiment.toFixed(2)})` };
  const term = blocklistedTerm(`${trend.name} ${trend.category.replaceAll("/", " ")}`, s.blocklist);
  if (term) return { rule: "blocklisted_topic", reason: `trend "${trend.name}" touches a sensitive topic ("${term}")` };
  return null;
}

/**
 * Splits proposed changes into those the settings allow and those refused, each refusal with its rule and reason.
 * Order matters for the caps: changes are taken as given (the planner orders them by trend severity), and the caps
 * count allowed changes only.
 */
export function applyGuardrails(changes: ProposedChange[], trends: ReadonlyMap<string, PlanTrend>, s: SafetySettings): { allowed: ProposedChange[]; refused: Refusal[] } {
  const allowed: ProposedChange[] = [];
  const refused: Refusal[] = [];
  const perEntity = new Map<string, number>();
  const refuse = (change: ProposedChange, rule: GuardrailRule, reason: string) => refused.push({ change, rule, reason });
  for (const c of changes) {
    if (FORBIDDEN_FIELD.test(c.field)) { refuse(c, "no_budget_fields", `${c.field}: budgets, bids and schedules are never changed by a plan`); continue; }
    if (c.op !== "add") {
      if (s.strict) { refuse(c, "additions_only", `strict_safety allows additions only (this ${c.op}s ${c.field} "${c.item.text}")`); continue; }
      if (c.op === "replace" || !c.added_by_us) { refuse(c, "not_added_by_us", `only ${c.field} this service added may be removed ("${c.item.text}" was not)`); continue; }
    }
    if (c.trend_id !== null) {
      const trend = trends.get(c.trend_id);
      if (!trend) { refuse(c, "unknown_trend", `trend ${c.trend_id} is not among the account's current trends`); continue; }
      const why = trendRefusal(trend, s);
      if (why) { refuse(c, why.rule, why.reason); continue; }
    }
    const term = c.op === "add" ? blocklistedTerm(c.item.text, s.blocklist) : null;
    if (term) { refuse(c, "blocklisted_topic", `"${c.item.text}" touches a sensitive topic ("${term}")`); continue; }
    const n = perEntity.get(c.entity_id) ?? 0;
    if (n >= s.maxChangesPerEntity) { refuse(c, "max_changes_per_entity", `at most ${s.maxChangesPerEntity} changes per entity per plan`); continue; }
    if (allowed.length >= s.maxChangesPerRun) { refuse(c, "max_changes_per_run", `at most ${s.maxChangesPerRun} changes per plan`); continue; }
    perEntity.set(c.entity_id, n + 1);
    allowed.push(c);
  }
  return { allowed, refused };
}


