import type { AdsConnector } from "@trendgate/connector-ads";
import type { ChatInteraction } from "@trendgate/connector-chat";
import { ADS_APPROVAL_EVENT_TYPE } from "@trendgate/contracts";
import {
  findAdsPlanById, findOperatorItemByDedupKey, lockOperatorItem, setPlanApprover, type AdsPlanRow, type Db, type OperatorItemRow, type OutboxRow, type Tx,
} from "@trendgate/db";
import { afterTransition, chatSetupOf, commitTransition, openReviewItem, queueCardRefresh, type OperatorDeps } from "@trendgate/operator";
import { lockRunnablePlan, queueApply } from "./apply.ts";
import { AdsPlanError } from "./errors.ts";
import type { DiffRow } from "./plan.ts";
import { planHashOf } from "./plan-view.ts";

// A plan approved from a chat card: the preview's plan becomes an operator item (routed like any, source
// ads_approval) whose card lists the changes and an approve button bound to the plan's hash; the press applies it
// through the same claim and queue as POST …/apply (so once, and only the plan the card showed), with the approver
// recorded on the plan and the item resolved. Opening (POST …/plans/{id}/request-approval) and the press both check
// the plan with the apply's own check (lockRunnablePlan, claimPreviewedPlan).

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

/**
 * Opens (once) the approval item of a plan of this account that could run (lockRunnablePlan); returns the plan, the
 * item and the outbox rows to dispatch. AdsPlanError when the plan cannot run or no chat is connected (no item).
 */
export async function openPlanApproval(tx: Tx, deps: OperatorDeps, connector: AdsConnector, q: { accountId: string; planId: string }) {
  const plan = await lockRunnablePlan(tx, { accountId: q.accountId, provider: connector.manifest.id, planId: q.planId });
  const r = await requestApproval(tx, deps, connector, plan);
  if (!r.itemId) throw new AdsPlanError("conflict", "Approval items are posted to team chat: connect a chat provider first (GET /api/integrations/chat/auth)");
  return { plan, ...r, itemId: r.itemId };
}

/** Opens the plan's approval item (once per plan); returns it with the outbox rows to dispatch. */
async function requestApproval(tx: Tx, deps: OperatorDeps, connector: AdsConnector, plan: AdsPlanRow): Promise<{ itemId: string | null; created: boolean; outbox: OutboxRow[] }> {
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

/**
 * An approve press on an approval card, in the caller's transaction: applies the plan the card showed (its hash must
 * still be the plan's), records the approver on the plan and resolves the item. Returns a text for the presser when
 * nothing was applied, and the outbox rows to dispatch.
 */
export async function approveFromCard(tx: Tx, deps: OperatorDeps, item: OperatorItemRow, it: Pick<ChatInteraction, "user"> & { approve: NonNullable<ChatInteraction["approve"]> }, actor: string): Promise<{ text: string | null; outbox: OutboxRow[] }> {
  const plan = item.source === "ads_approval" && item.adsPlanId === it.approve.planId ? await findAdsPlanById(tx, it.approve.planId) : null;
  const connector = plan && deps.registry.find("ads", plan.provider);
  if (!plan || !connector || plan.accountId !== item.accountId) return { text: "This card's plan is not available.", outbox: [] };
  let run;
  try {
    run = await queueApply(tx, { accountId: item.accountId, connector, planId: plan.id, acknowledgedPlanHash: it.approve.planHash });
  } catch (err) {
    if (!(err instanceof AdsPlanError)) throw err;
    const text = err.code === "acknowledgement_required" ? "This card shows an older version of the plan: nothing was applied. Preview again." : `Nothing was applied: ${err.message}`;
    return { text, outbox: [] };
  }
  await setPlanApprover(tx, plan.id, actor);
  const locked = await lockOperatorItem(tx, item.id);
  const setup = await chatSetupOf(tx, deps.registry, item.accountId, deps.config.OPERATOR_RENOTIFY_SECONDS);
  const done = locked && await commitTransition(tx, locked, {
    change: "resolve", actor, now: new Date(), renotifyMs: setup?.settings.renotifyMs ?? deps.config.OPERATOR_RENOTIFY_SECONDS * 1000,
    data: { approved_plan: plan.id, run_id: run.runId, ...(it.user.name ? { actor_name: it.user.name } : {}) },
  });
  // Resolved (or already resolved by someone): the card is refreshed either way, to show the plan applying.
  const outbox = done && "item" in done ? await afterTransition(tx, setup, done.item, new Date()) : locked ? await afterTransition(tx, setup, locked, new Date()) : [];
  return { text: null, outbox: [...run.outbox, ...outbox] };
}

/** Once a plan's run ended (however): its approval card, if it has one, is refreshed to say how. */
export async function refreshApprovalCard(db: Db, plan: { id: string; accountId: string }): Promise<OutboxRow[]> {
  const item = await findOperatorItemByDedupKey(db, plan.accountId, approvalDedupKey(plan.id));
  return item ? db.$transaction((tx) => queueCardRefresh(tx, item, null)) : [];
}
