import { z } from "zod";
import { QUEUES } from "@trendgate/contracts";
import type { NewOutboxMessage, OperatorItemRow } from "@trendgate/db";

// The chat messages the operator queue sends, as outbox rows (QUEUES.chatMessages). They carry ids only: the worker
// renders the item as it is when the message is sent, so a late or repeated message never shows an old state.

export const CHAT_MESSAGE_TYPES = ["post_item", "update_item", "renotify_item"] as const;
export type ChatMessageType = (typeof CHAT_MESSAGE_TYPES)[number];

export const ChatMessagePayload = z.object({
  type: z.enum(CHAT_MESSAGE_TYPES),
  item_id: z.string(),
  /** The item's version when the message was queued (updates older than the item's version are superseded). */
  version: z.number().int().optional(),
});
export type ChatMessagePayload = z.infer<typeof ChatMessagePayload>;

export function chatMessage(item: OperatorItemRow, type: ChatMessageType, connectionId: string | null): NewOutboxMessage {
  const payload: ChatMessagePayload = { type, item_id: item.id, version: item.version };
  return { queue: QUEUES.chatMessages, accountId: item.accountId, connectionId, subjectId: item.id, payload };
}

/** The item has a posted card to update or reply under. */
export const hasCard = (item: OperatorItemRow): boolean => !!item.chatChannelId && !!item.chatMessageTs;
