import { QUEUES, type AdsApplyPayload } from "@trendgate/contracts";
import type { AdsConnector } from "@trendgate/connector-ads";
import { addOutboxMessages, lockAdsPlan, markPlanApplying, type AdsPlanRow, type OutboxRow, type Tx } from "@trendgate/db";
import { AdsPlanError } from "./errors.ts";
import { needsAcknowledgement, planHashOf } from "./plan-view.ts";

// Starting a plan's run, ours (an apply, queued on the ads-applies outbox) or a caller's executor's: the plan is
// locked and must be previewed (so never run twice), not expired, not empty, and acknowledged where strict_safety
// asks for it.

export interface ClaimRequest {
  accountId: string;
  connector: AdsConnector;
  planId: string;
  acknowledgedPlanHash?: string;
}

/**
 * Locks the plan for the caller's transaction and checks it could start a run (previewed, so never run twice; not
 * expired; not empty): the one check of an apply, an executor's claim and an approval request. AdsPlanError otherwise.
 */
export async function lockRunnablePlan(tx: Tx, q: { accountId: string; provider: string; planId: string }): Promise<AdsPlanRow> {
  const p = await lockAdsPlan(tx, { id: q.planId, accountId: q.accountId, provider: q.provider });
  if (!p) throw new AdsPlanError("not_found", "Plan not found");
  if (p.status !== "previewed") throw new AdsPlanError("conflict", `This plan is ${p.status}${p.runId ? ` (run ${p.runId})` : ""}: a plan is applied once; preview again for a new one`);
  if (p.expiresAt.getTime() < Date.now()) throw new AdsPlanError("conflict", `This plan expired at ${p.expiresAt.toISOString()}: preview again (the targets may have changed)`);
  if (!(p.changes as unknown[]).length) throw new AdsPlanError("conflict", "This plan has no changes to apply");
  return p;
}

/** lockRunnablePlan, and the acknowledgement strict_safety asks for; AdsPlanError otherwise. */
export async function claimPreviewedPlan(tx: Tx, q: ClaimRequest): Promise<AdsPlanRow> {
  const name = q.connector.manifest.displayName;
  const p = await lockRunnablePlan(tx, { accountId: q.accountId, provider: q.connector.manifest.id, planId: q.planId });
  const at = { location: "body" as const, path: "acknowledged_plan_hash", code: "invalid_value" };
  if (q.acknowledgedPlanHash === undefined && needsAcknowledgement(p.strictSafety, q.connector.capabilities))
    throw new AdsPlanError("acknowledgement_required", `${name} has no dry run: with strict_safety on, read the plan and send its plan_hash as acknowledged_plan_hash`, [{ ...at, message: "required: the plan's plan_hash" }]);
  if (q.acknowledgedPlanHash !== undefined && q.acknowledgedPlanHash !== planHashOf(p))
    throw new AdsPlanError("acknowledgement_required", "acknowledged_plan_hash is not this plan's plan_hash: read the plan again (GET …/plans/{id})", [{ ...at, message: "does not match the plan's plan_hash" }]);
  return p;
}

/** Claims the plan and queues its apply in the caller's transaction; dispatch `outbox` after the commit. */
export async function queueApply(tx: Tx, q: ClaimRequest): Promise<{ planId: string; runId: string; outbox: OutboxRow[] }> {
  const p = await claimPreviewedPlan(tx, q);
  const payload: AdsApplyPayload = { plan_id: p.id };
  const outbox = await addOutboxMessages(tx, [{ queue: QUEUES.adsApplies, accountId: q.accountId, connectionId: p.connectionId, subjectId: p.id, dedupKey: p.id, payload }]);
  const runId = outbox[0].id;
  await markPlanApplying(tx, p.id, runId);
  return { planId: p.id, runId, outbox };
}
