import { AdsPlanError, applyApproved, requestApproval } from "@trendgate/ads";
import type { ChatInteraction } from "@trendgate/connector-chat";
import { findAdsPlanById, lockAdsPlan, lockOperatorItem, type OperatorItemRow, type OutboxRow, type Tx } from "@trendgate/db";
import { afterTransition, chatSetupOf, commitTransition } from "@trendgate/operator";
import { ApiError, notFound } from "../http/api-error.ts";
import type { GatewayDeps } from "../deps.ts";

// Ads plans approved from an operator card: opening the approval item (POST …/plans/{id}/request-approval), and the
// card's approve press, which applies through the same claim as POST …/apply and resolves the item.

/** Opens (once) the approval item of a previewed plan of this account; 409 when it cannot be approved or no chat is connected. */
export async function openPlanApproval(tx: Tx, deps: GatewayDeps, q: { accountId: string; provider: string; planId: string }) {
  const connector = deps.registry.find("ads", q.provider)!;
  const plan = await lockAdsPlan(tx, { id: q.planId, accountId: q.accountId, provider: q.provider });
  if (!plan) throw notFound("Plan");
  if (plan.status !== "previewed") throw new ApiError("conflict", `This plan is ${plan.status}: only a previewed plan can be approved`);
  if (plan.expiresAt.getTime() < Date.now()) throw new ApiError("conflict", `This plan expired at ${plan.expiresAt.toISOString()}: preview again`);
  const r = await requestApproval(tx, deps, connector, plan);
  if (!r.itemId) throw new ApiError("conflict", "Approval items are posted to team chat: connect a chat provider first (GET /api/integrations/chat/auth)");
  return { plan, ...r };
}

/**
 * An approve press on an approval card, in the caller's transaction: applies the plan the card showed (its hash must
 * still be the plan's), records the approver on the plan and resolves the item. Returns a text for the presser when
 * nothing was applied, and the outbox rows to dispatch.
 */
export async function approveFromCard(tx: Tx, deps: GatewayDeps, item: OperatorItemRow, it: ChatInteraction & { approve: NonNullable<ChatInteraction["approve"]> }, actor: string): Promise<{ text: string | null; outbox: OutboxRow[] }> {
  const plan = item.source === "ads_approval" && item.adsPlanId === it.approve.planId ? await findAdsPlanById(tx, it.approve.planId) : null;
  const connector = plan && deps.registry.find("ads", plan.provider);
  if (!plan || !connector || plan.accountId !== item.accountId) return { text: "This card's plan is not available.", outbox: [] };
  let run;
  try {
    run = await applyApproved(tx, connector, { accountId: item.accountId, planId: plan.id, planHash: it.approve.planHash, approver: actor });
  } catch (err) {
    if (!(err instanceof AdsPlanError)) throw err;
    const text = err.code === "acknowledgement_required" ? "This card shows an older version of the plan: nothing was applied. Preview again." : `Nothing was applied: ${err.message}`;
    return { text, outbox: [] };
  }
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
