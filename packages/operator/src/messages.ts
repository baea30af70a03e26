import { QUEUES, type ChatMessagePayload, type ChatMessageType } from "@trendgate/contracts";
import type { NewOutboxMessage, OperatorItemRow } from "@trendgate/db";

// The chat messages the operator queue sends, as outbox rows (QUEUES.chatMessages). They carry ids only: the worker
// renders the item as it is when the message is sent, so a late or repeated message never shows an old state.

/**
 * `hold`: a post held for a trigger window: sent at `until` (plus `graceMs`, for a detection pass to have run), and only
 * if the item's trend was found anomalous at or after `until`.
 */
export function chatMessage(item: OperatorItemRow, type: ChatMessageType, connectionId: string | null, hold?: { until: Date; graceMs: number }): NewOutboxMessage {
  const payload: ChatMessagePayload = { type, item_id: item.id, version: item.version, ...(hold ? { confirm_after: hold.until.toISOString() } : {}) };
  return {
    queue: QUEUES.chatMessages, accountId: item.accountId, connectionId, subjectId: item.id, payload,
    ...(hold ? { notBefore: new Date(hold.until.getTime() + hold.graceMs) } : {}),
  };
}

/** The item has a posted card to update or reply under. */
export const hasCard = (item: OperatorItemRow): boolean => !!item.chatChannelId && !!item.chatMessageTs;

/** The job of one escalation step (run, step), sent at `at` (after a wait step's minutes). */
export function escalationMessage(item: OperatorItemRow, run: string, step: number, connectionId: string | null, at: Date): NewOutboxMessage {
  const payload: ChatMessagePayload = { type: "escalate_item", item_id: item.id, version: item.version, escalation: { run, step } };
  return { queue: QUEUES.chatMessages, accountId: item.accountId, connectionId, subjectId: item.id, payload, notBefore: at };
}
