import { ADS_EMPTY_REASONS, type AdsDryRun, type AdsEmptyReason, type AdsPlanView } from "@trendgate/contracts";
import type { AdsPlanRow } from "@trendgate/db";
import { stateHash } from "./plan-hash.ts";

/** What an acknowledgement names: the plan exactly as previewed (its changes, the calls, the state they apply to). */
export const planHashOf = (p: { changes: unknown; calls: unknown; priorStateHash: string }) =>
  stateHash({ changes: p.changes, calls: p.calls, prior_state_hash: p.priorStateHash });

/** strict_safety without a provider dry run: a person (or the caller's code) must have read this exact plan. */
export const needsAcknowledgement = (strictSafety: boolean, provider: { dryRun: boolean } | undefined) => strictSafety && !provider?.dryRun;

/**
 * Why a plan has no changes, from its diff rows' reasons (stored per entity): the reason furthest upstream wins
 * (no trends, then nothing found, then all refused, then already targeted), with the distinct details of its rows.
 * Null when the plan has changes, or its rows predate the reasons.
 */
export function emptyReasonOf(changes: unknown[], diff: unknown[]): { empty_reason: AdsEmptyReason | null; empty_detail: string | null } {
  const rows = (changes.length ? [] : diff) as { empty_reason?: AdsEmptyReason | null; empty_detail?: string | null }[];
  const reason = ADS_EMPTY_REASONS.find((r) => rows.some((d) => d.empty_reason === r));
  if (!reason) return { empty_reason: null, empty_detail: null };
  const details = [...new Set(rows.filter((d) => d.empty_reason === reason).map((d) => d.empty_detail).filter((x): x is string => !!x))];
  return { empty_reason: reason, empty_detail: details.join("; ") || null };
}

/** A stored plan as the API shows it; `provider`: its connector's capabilities (undefined: no longer configured). */
export function planView(p: AdsPlanRow, provider: { dryRun: boolean } | undefined): AdsPlanView {
  return {
    id: p.id, provider: p.provider, status: p.status, ad_account_id: p.adAccountId, category: p.category, strict_safety: p.strictSafety,
    changes: p.changes as unknown[], diff: p.diff as unknown[], refused: p.refused as unknown[], calls: p.calls as unknown[],
    ...emptyReasonOf(p.changes as unknown[], p.diff as unknown[]),
    dry_run: (p.dryRun as AdsDryRun | null) ?? { ran: false, passed: null, results: [], by: "provider" }, prior_state_hash: p.priorStateHash,
    plan_hash: planHashOf(p), requires_acknowledgement: needsAcknowledgement(p.strictSafety, provider),
    expires_at: p.expiresAt.toISOString(), created_at: p.createdAt.toISOString(),
    run_id: p.runId, results: (p.results as unknown[] | null) ?? null, status_reason: p.statusReason, applied_at: p.appliedAt?.toISOString() ?? null,
    rollback_of: p.rollbackOf, approved_by: p.approvedBy,
  };
}
