import { QUEUES, type ChatMessagePayload, type ChatMessageType } from "@trendgate/contracts";
import type { NewOutboxMessage, OperatorItemRow } from "@trendgate/db";

// The chat messages the operator queue sends, as outbox rows (QUEUES.chatMessages). They carry ids only: the worker
// renders the item as it is when the message is sent, so a late or repeated message never shows an old state.

export function chatMessage(item: OperatorItemRow, type: ChatMessageType, connectionId: string | null): NewOutboxMessage {
  const payload: ChatMessagePayload = { type, item_id: item.id, version: item.version };
  return { queue: QUEUES.chatMessages, accountId: item.accountId, connectionId, subjectId: item.id, payload };
}

/** The item has a posted card to update or reply under. */
export const hasCard = (item: OperatorItemRow): boolean => !!item.chatChannelId && !!item.chatMessageTs;
