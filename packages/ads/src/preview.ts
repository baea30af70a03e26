import type { AdsSelection, AdsTargetingField, Severity } from "@trendgate/contracts";
import type { AdsClient, AdsConnector, TargetingField, TargetingItem } from "@trendgate/connector-ads";
import { activeTrendsInCategory, createPreviewedPlan, listAdsMappings, type AdsPlanRow, type Db } from "@trendgate/db";
import { dryRunOf, withoutDryRunRefusals } from "./dry-run.ts";
import { AdsPlanError } from "./errors.ts";
import { DEFAULT_SAFETY, type PlanTrend, type SafetySettings } from "./guardrails.ts";
import { entityNames } from "./mapping-check.ts";
import { computePlan } from "./plan.ts";
import { readTargets } from "./read-targets.ts";

// A preview: from the account's rising trends in the selected category and the mapped entities' targeting as read
// now, the plan's changes through the guardrails, the provider's exact calls, their dry run (what it refuses leaves
// the plan), stored with the prior state and its hash so an apply runs exactly these calls or refuses.

// The API's targeting fields are the connectors' own: if the two lists differ, this fails the typecheck.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export const TARGETING_FIELDS_AGREE: Same<AdsTargetingField, TargetingField> = true;

/** Trend stages that mean "rising now": a plan targets what is growing, not what is cooling off. */
const POSITIVE_STAGES = ["emerging", "rising", "peaking"];
/** The most trends a plan is computed from (the fastest). */
const MAX_TRENDS = 50;

export const safetyOf = (s: AdsSelection): SafetySettings => ({
  strict: s.strict_safety,
  minSeverity: s.safety?.min_severity ?? DEFAULT_SAFETY.minSeverity,
  maxChangesPerEntity: s.safety?.max_changes_per_entity ?? DEFAULT_SAFETY.maxChangesPerEntity,
  maxChangesPerRun: s.safety?.max_changes_per_run ?? DEFAULT_SAFETY.maxChangesPerRun,
  blocklist: s.safety?.blocklist ?? DEFAULT_SAFETY.blocklist,
});

export interface PreviewRequest {
  accountId: string;
  connector: AdsConnector;
  /** The provider's client with the connection's credentials. */
  client: AdsClient;
  connectionId: string;
  adAccountId: string;
  selection: AdsSelection;
  /** ADS_PLAN_TTL_SECONDS */
  planTtlSeconds: number;
}

/** Computes, dry-runs and stores a plan; AdsPlanError `nothing_mapped` when no entity is mapped. */
export async function previewPlan(deps: { db: Db }, q: PreviewRequest): Promise<AdsPlanRow> {
  const { client, adAccountId } = q;
  const provider = q.connector.manifest.id;
  const name = q.connector.manifest.displayName;
  const mapped = await listAdsMappings(deps.db, q.accountId, provider);
  // Connected and selected, but no entity to plan for: its own code, so a client does not send the user to reconnect.
  if (!mapped.length) {
    throw new AdsPlanError("nothing_mapped", `No ${name} campaign entities are mapped: PUT …/mappings naming the entities to target (GET …/entities lists them), then preview again`);
  }
  // Mappings saved without a name (before names were kept) get the provider's, so the diff names what it changes.
  const unnamed = mapped.filter((e) => e.entityName === null).map((e) => ({ id: e.entityId, field: e.field as TargetingField }));
  const names = unnamed.length ? await entityNames(client, adAccountId, unnamed) : new Map<string, string>();
  const entities = mapped.map((e) => ({ id: e.entityId, name: e.entityName ?? names.get(e.entityId), field: e.field as TargetingField }));
  const category = q.selection.trend_category;
  const rows = await activeTrendsInCategory(deps.db, { accountId: q.accountId, category, stages: POSITIVE_STAGES, take: MAX_TRENDS });
  const trends: PlanTrend[] = rows.map((t) => ({ id: t.id, name: t.name, category: t.category, severity: t.severity as Severity, sentiment: t.sentiment }));

  const prior = await readTargets(client, adAccountId, entities);
  const resolved = new Map<TargetingField, Map<string, TargetingItem[]>>();
  for (const f of new Set(entities.map((e) => e.field))) resolved.set(f, await client.resolveItems(adAccountId, f, trends.map((t) => t.name)));
  const computed = computePlan({ trends, entities, prior, resolved, safety: safetyOf(q.selection), category, lookup: q.connector.itemLookup });
  const planned = client.calls(adAccountId, computed.changes, prior);
  const dry = await dryRunOf(client, q.connector.capabilities.dryRun, adAccountId, planned);
  const plan = withoutDryRunRefusals(computed, dry, name);
  const calls = plan === computed ? planned : client.calls(adAccountId, plan.changes, prior);

  return createPreviewedPlan(deps.db, {
    accountId: q.accountId, provider, connectionId: q.connectionId, adAccountId, category, strictSafety: q.selection.strict_safety,
    changes: plan.changes, calls, diff: plan.diff, refused: plan.refused, dryRun: dry,
    priorState: prior, priorStateHash: plan.prior_state_hash,
  }, q.planTtlSeconds);
}
