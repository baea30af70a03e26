import type { AdsDryRun, AdsPlanView } from "@trendgate/contracts";
import type { AdsPlanRow } from "@trendgate/db";
import { stateHash } from "./plan-hash.ts";

/** What an acknowledgement names: the plan exactly as previewed (its changes, the calls, the state they apply to). */
export const planHashOf = (p: { changes: unknown; calls: unknown; priorStateHash: string }) =>
  stateHash({ changes: p.changes, calls: p.calls, prior_state_hash: p.priorStateHash });

/** strict_safety without a provider dry run: a person (or the caller's code) must have read this exact plan. */
export const needsAcknowledgement = (strictSafety: boolean, provider: { dryRun: boolean } | undefined) => strictSafety && !provider?.dryRun;

/** A stored plan as the API shows it; `provider`: its connector's capabilities (undefined: no longer configured). */
export function planView(p: AdsPlanRow, provider: { dryRun: boolean } | undefined): AdsPlanView {
  return {
    id: p.id, provider: p.provider, status: p.status, ad_account_id: p.adAccountId, category: p.category, strict_safety: p.strictSafety,
    changes: p.changes as unknown[], diff: p.diff as unknown[], refused: p.refused as unknown[], calls: p.calls as unknown[],
    dry_run: (p.dryRun as AdsDryRun | null) ?? { ran: false, passed: null, results: [], by: "provider" }, prior_state_hash: p.priorStateHash,
    plan_hash: planHashOf(p), requires_acknowledgement: needsAcknowledgement(p.strictSafety, provider),
    expires_at: p.expiresAt.toISOString(), created_at: p.createdAt.toISOString(),
    run_id: p.runId, results: (p.results as unknown[] | null) ?? null, status_reason: p.statusReason, applied_at: p.appliedAt?.toISOString() ?? null,
    rollback_of: p.rollbackOf, approved_by: p.approvedBy,
  };
}
