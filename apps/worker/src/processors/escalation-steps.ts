import type { ChatClient, ChatMention } from "@trendgate/connector-chat";
import { QUEUES, type ChatMessagePayload } from "@trendgate/contracts";
import { findAccountOnCallSchedule, findOperatorItem, hasPendingChatPost, type OperatorItemRow } from "@trendgate/db";
import { escalationReply, hasCard, onCallReply, scheduleSpec, stepToTake, takeEscalationStep, type ItemTarget, type StepRef } from "@trendgate/operator";
import { dispatchOutbox } from "@trendgate/queues";
import { DeferError } from "@trendgate/delivery";
import type { WorkerDeps } from "./types.ts";

// The chat-messages worker's part of escalation (packages/operator/src/escalation.ts has the rules): an
// escalate_item job takes its step of the chain kept on the item (target.escalation, not the route's steps now) at
// once, except a notify or notify_on_call step, whose reply under the card the worker posts first (paced like any
// post; a notify_on_call step mentions whoever is on call when its reply is planned, in the item's chat provider). A
// reply that fails for good still moves the chain on, so one refused mention does not silence the steps after it.

/** How long an escalation reply waits for its card's post before looking again. */
const CARD_WAIT_MS = 2000;

/** A reply plan names the card it goes under (read after the post it may have waited for). */
export type EscalationPlan = { done: Record<string, unknown> } | { skipped: string }
  | { reply: { text: string; mentions: ChatMention[]; data?: Record<string, unknown> }; ref: StepRef; card: { channelId: string; ts: string } };

export function escalationSteps(deps: WorkerDeps) {
  const { db, logger } = deps;

  /** Takes the step under the item's lock and queues the next one. */
  async function take(itemId: string, ref: StepRef, target: ItemTarget, notified?: Record<string, unknown>) {
    const rows = await db.$transaction((tx) => takeEscalationStep(tx, itemId, ref, target, new Date(), notified));
    await dispatchOutbox(deps.queues, rows).catch((err) => logger.warn({ err: String(err) }, "escalation: next step left to the sweeper"));
  }

  return {
    /** What an escalate_item job does: a step taken now, nothing (stale), or a reply to post first. */
    async plan(item: OperatorItemRow, payload: ChatMessagePayload, target: ItemTarget): Promise<EscalationPlan> {
      const ref = payload.escalation;
      if (!ref) return { skipped: "no escalation step named" };
      const next = stepToTake(item, ref, target);
      if ("skip" in next) return { skipped: next.skip };
      const { step } = next;
      const replies = step.type === "notify" || step.type === "notify_on_call";
      // A notify step replies under the card: while its post is still on its way, wait for it. Asked before the item
      // is read again: a post that completes between an earlier read and this question has written its card by now.
      if (replies && !hasCard(item)) {
        if (await hasPendingChatPost(db, QUEUES.chatMessages, item.id)) throw new DeferError(CARD_WAIT_MS);
        item = (await findOperatorItem(db, item.id)) ?? item;
      }
      if (replies && hasCard(item)) {
        const card = { channelId: item.chatChannelId!, ts: item.chatMessageTs! };
        if (step.type === "notify") return { reply: escalationReply(step), ref, card };
        const schedule = await findAccountOnCallSchedule(db, item.accountId, step.schedule_id);
        return { reply: onCallReply(step, schedule && scheduleSpec(schedule), target.provider, new Date()), ref, card };
      }
      // Nothing to say in the chat (a wait, a webhook, a repeat; or no card to reply under): take it now.
      await take(item.id, ref, target, replies ? { replied: false, why: "no card to reply under" } : undefined);
      return { done: { step: ref.step, type: next.step.type } };
    },

    /** Posts a notify step's reply, then takes the step. */
    async reply(item: OperatorItemRow, plan: Extract<EscalationPlan, { reply: unknown }>, target: ItemTarget, client: ChatClient) {
      const reply = await client.postReply(plan.card, plan.reply.text, plan.reply.mentions);
      await take(item.id, plan.ref, target, { ...plan.reply.data, replied: true, reply_ts: reply.ts, mentions: plan.reply.mentions.length });
      return { step: plan.ref.step, channel: reply.channelId, ts: reply.ts };
    },

    /** A reply that failed for good: the step counts as taken without it (and says why), so the chain goes on. */
    async failed(item: OperatorItemRow, payload: ChatMessagePayload, target: ItemTarget, error: string) {
      if (payload.type !== "escalate_item" || !payload.escalation) return;
      await take(item.id, payload.escalation, target, { replied: false, error });
    },
  };
}
