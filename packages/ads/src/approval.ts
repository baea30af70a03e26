import type { AdsConnector } from "@trendgate/connector-ads";
import { ADS_APPROVAL_EVENT_TYPE } from "@trendgate/contracts";
import { findOperatorItemByDedupKey, setPlanApprover, type AdsPlanRow, type Db, type OutboxRow, type Tx } from "@trendgate/db";
import { openReviewItem, queueCardRefresh, type OperatorDeps } from "@trendgate/operator";
import { queueApply } from "./apply.ts";
import type { DiffRow } from "./plan.ts";
import { planHashOf } from "./plan-view.ts";

// A plan approved from a chat card: the preview's plan becomes an operator item (routed like any, source
// ads_approval) whose card lists the changes and an approve button bound to the plan's hash; the press applies it
// through the same claim and queue as POST …/apply (so once, and only the plan the card showed), with the approver
// recorded on the plan.

export const approvalDedupKey = (planId: string) => `ads_approval:${planId}`;
/** Lines of the diff a card shows (the rest: "and N more"). */
const CARD_LINES = 12;

/**
 * The card's view of a plan's changes: one line per change, naming the entity by its id (what the provider acts on;
 * names need not be unique) and by its name where the plan knows it (what a person recognises).
 */
export function approvalLines(diff: DiffRow[]): string[] {
  const lines = diff.flatMap((d) => d.changes.map((c) => `${c.op === "add" ? "+" : "-"} ${c.item} (${d.field} of ${d.entity_id})${d.entity_name ? ` · ${d.entity_name}` : ""}`));
  return lines.length > CARD_LINES ? [...lines.slice(0, CARD_LINES), `and ${lines.length - CARD_LINES} more`] : lines;
}

/** Opens the plan's approval item (once per plan); returns it with the outbox rows to dispatch. */
export async function requestApproval(tx: Tx, deps: OperatorDeps, connector: AdsConnector, plan: AdsPlanRow): Promise<{ itemId: string | null; created: boolean; outbox: OutboxRow[] }> {
  const key = approvalDedupKey(plan.id);
  const existing = await findOperatorItemByDedupKey(tx, plan.accountId, key);
  if (existing) return { itemId: existing.id, created: false, outbox: [] };
  const name = connector.manifest.displayName;
  const changes = (plan.changes as unknown[]).length;
  const lines = approvalLines(plan.diff as unknown as DiffRow[]);
  const outbox = await openReviewItem(tx, deps, {
    accountId: plan.accountId, dedupKey: key, source: "ads_approval", eventType: ADS_APPROVAL_EVENT_TYPE, adsPlanId: plan.id,
    title: `Approve ${name} targeting: ${changes} change${changes === 1 ? "" : "s"} in ${plan.category}`,
    category: plan.category, severity: "high", link: null,
    summary: `${lines.slice(0, 3).join("; ")}. Expires ${plan.expiresAt.toISOString()}.`,
    data: { approval: { plan_id: plan.id, plan_hash: planHashOf(plan), provider: plan.provider, lines } },
  });
  const item = await findOperatorItemByDedupKey(tx, plan.accountId, key);
  return { itemId: item?.id ?? null, created: true, outbox };
}

/** An approve press: queues the apply (AdsPlanError when it may not run) and records who approved. */
export async function applyApproved(tx: Tx, connector: AdsConnector, q: { accountId: string; planId: string; planHash: string; approver: string }) {
  const run = await queueApply(tx, { accountId: q.accountId, connector, planId: q.planId, acknowledgedPlanHash: q.planHash });
  await setPlanApprover(tx, q.planId, q.approver);
  return run;
}

/** Once a plan's run ended (however): its approval card, if it has one, is refreshed to say how. */
export async function refreshApprovalCard(db: Db, plan: { id: string; accountId: string }): Promise<OutboxRow[]> {
  const item = await findOperatorItemByDedupKey(db, plan.accountId, approvalDedupKey(plan.id));
  return item ? db.$transaction((tx) => queueCardRefresh(tx, item, null)) : [];
}
