import type { AdsDryRun } from "@trendgate/contracts";
import type { AdsClient, ProviderCall } from "@trendgate/connector-ads";
import { entityLabel, type ComputedPlan } from "./plan.ts";

/** The dry run of the calls, per change: the provider's own where it has one (`dryRun`), else the connector's checks. */
export async function dryRunOf(client: AdsClient, providerHasDryRun: boolean, adAccountId: string, calls: ProviderCall[]): Promise<AdsDryRun> {
  const by = providerHasDryRun ? "provider" : "connector";
  if (!calls.length) return { ran: false, passed: null, by, results: [] };
  const rs = await client.run(adAccountId, calls, { dryRun: true });
  return {
    ran: true, passed: rs.every((r) => r.ok), by,
    results: rs.map((r) => ({ change_id: r.change_id, ok: r.ok, error: r.error?.message ?? null, request_id: r.request_id ?? null, ...(r.note ? { note: r.note } : {}) })),
  };
}

/**
 * The plan less the changes its dry run refused: each becomes a refusal (rule dry_run_failed, with the provider's
 * reason) and leaves the diff, so what is applied is exactly what passed the dry run.
 */
export function withoutDryRunRefusals(plan: ComputedPlan, dry: AdsDryRun, providerName: string): ComputedPlan {
  const failed = new Map(dry.results.filter((r) => !r.ok).map((r) => [r.change_id, r]));
  if (!failed.size) return plan;
  const refusedNow = plan.changes.filter((x) => failed.has(x.id)).map((ch) => ({
    change_id: ch.id, entity_id: ch.entity_id, field: ch.field, item: ch.item.text, trend_id: ch.trend_id,
    rule: "dry_run_failed" as const, reason: `${providerName}'s dry run refused it: ${failed.get(ch.id)!.error ?? "refused"}`,
  }));
  return {
    ...plan,
    changes: plan.changes.filter((x) => !failed.has(x.id)),
    refused: [...plan.refused, ...refusedNow],
    diff: plan.diff.map((d) => {
      const gone = new Set(d.changes.filter((x) => failed.has(x.change_id)).map((x) => x.item));
      const changes = d.changes.filter((x) => !failed.has(x.change_id));
      // A row the dry run emptied says so (its earlier refusals, if any, are in `refused` too).
      const emptied = d.changes.length > 0 && !changes.length;
      return {
        ...d, changes, after: d.after.filter((x) => !gone.has(x) || d.before.includes(x)),
        ...(emptied ? { empty_reason: "all_refused" as const, empty_detail: `${entityLabel({ id: d.entity_id, name: d.entity_name })}: ${providerName}'s dry run refused all of its changes (see refused)` } : {}),
      };
    }),
  };
}
