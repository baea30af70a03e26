import type { TargetingChange } from "@trendgate/connector-ads";
import { recordPlanFinal, type OutboxRow, type Tx } from "@trendgate/db";
import { openReviewItem, type OperatorDeps } from "@trendgate/operator";

// How a run ends, one way whoever made the writes: our ads worker, or a caller's executor reporting its results.
// The per-change results go on the plan with its final status; changes the provider refused are marked for review
// and, when the account has a chat connection, a person gets an operator item for the run (spec: route 4xx
// validation failures to manual review).

export type RunStatus = "applied" | "partially_applied" | "failed";

export interface StoredResult {
  change_id: string;
  ok: boolean;
  error: string | null;
  request_id: string | null;
  resource: string | null;
  note?: string;
  /** A refusal for a person to look at. */
  review?: boolean;
}

export const runStatusOf = (changes: number, ok: number): RunStatus => (ok === changes ? "applied" : ok === 0 ? "failed" : "partially_applied");

export interface FinishRun {
  plan: { id: string; accountId: string; provider: string; category: string; changes: unknown };
  providerName: string;
  results: StoredResult[];
  /** Set when the run ended without per-change refusals (a whole-run failure). */
  reason?: string;
  /** PUBLIC_BASE_URL, for the item's link to the plan. */
  publicBaseUrl: string;
}

/** Records the final results and status, and opens the review item, in the caller's transaction; returns the
 * outbox rows to dispatch after commit. */
export async function finishRun(tx: Tx, deps: OperatorDeps, f: FinishRun): Promise<{ status: RunStatus; outbox: OutboxRow[] }> {
  const changes = f.plan.changes as TargetingChange[];
  const ok = f.results.filter((r) => r.ok).length;
  const status = runStatusOf(changes.length, ok);
  const review = f.results.filter((r) => r.review);
  const reason = status === "applied" ? null : review.length
    ? `${review.length} of ${changes.length} changes refused by ${f.providerName}: review them`
    : f.reason ?? "apply failed";
  await recordPlanFinal(tx, f.plan.id, { status, statusReason: reason, results: f.results, appliedAt: new Date() });
  if (!review.length) return { status, outbox: [] };
  const first = review.slice(0, 3).map((r) => {
      const c = changes.find((x) => x.id === r.change_id);
      return `${c ? `${c.op} "${c.item.text}" on ${c.entity_id}` : r.change_id}: ${r.error ?? "refused"}`;
    });
  const outbox = await openReviewItem(tx, deps, {
    accountId: f.plan.accountId, dedupKey: `ads_run:${f.plan.id}`, severity: "high", category: f.plan.category,
    title: `${f.providerName} refused ${review.length} of ${changes.length} targeting changes`,
    summary: `Plan ${f.plan.id} ended ${status}. ${first.join("; ")}${review.length > 3 ? `; and ${review.length - 3} more` : ""}`,
    link: new URL(`/api/integrations/ads/${f.plan.provider}/plans/${f.plan.id}`, f.publicBaseUrl).toString(),
    data: { plan_id: f.plan.id, provider: f.plan.provider, status, refused: review.map((r) => r.change_id) },
  });
  return { status, outbox };
}
