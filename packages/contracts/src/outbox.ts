import { z } from "zod";
import { QUEUES, type OutboxQueueName } from "./queues.ts";

// What each outbox kind's message carries (outbox_messages.payload): producers build it with these types, and the
// worker's loop parses it with these schemas once, before the kind's handler runs (a payload that does not parse is
// recorded as a permanent failure, error class `invalid_payload`).

export const CHAT_MESSAGE_TYPES = ["post_item", "update_item", "renotify_item", "escalate_item"] as const;
export type ChatMessageType = (typeof CHAT_MESSAGE_TYPES)[number];

/** An operator card to post, re-render or reply under: ids only, the worker renders the item as it is when sent. */
export const ChatMessagePayload = z.object({
  type: z.enum(CHAT_MESSAGE_TYPES),
  item_id: z.string(),
  /** The item's version when the message was queued (updates older than the item's version are superseded). */
  version: z.number().int().optional(),
  /** A post held for the chat setup's trigger window: sent only if a detection pass found the item's trend anomalous at or after this instant. */
  confirm_after: z.iso.datetime().optional(),
  /** escalate_item: the escalation run it belongs to and the step to take (a stopped or restarted run's steps are skipped). */
  escalation: z.object({ run: z.string(), step: z.number().int().min(0) }).optional(),
});
export type ChatMessagePayload = z.infer<typeof ChatMessagePayload>;

/**
 * A workflow push, bound to the workflow selected when it was made (`workflow_id`, `push_url`, `push_method`): a retry
 * goes there even if another workflow is selected meanwhile; while that workflow is still the selected one, its
 * current URL (a new override, a followed webhook path) is used. include_metadata is read when the push is sent.
 */
export const WorkflowPushPayload = z.object({
  /** Our event id: sent as X-Trendgate-Event-Id (and in metadata) so the workflow can drop duplicates. */
  event_id: z.string(),
  event: z.string(),
  data: z.record(z.string(), z.unknown()),
  /** The trend a trend-event push is about. */
  trend_id: z.string().optional(),
  /** `api` (POST …/push) or `trend_event` (automatic). */
  source: z.enum(["api", "trend_event"]),
  /** The workflow the push is for, and its trigger then (absent on pushes queued before pushes were bound). */
  workflow_id: z.string().optional(),
  push_url: z.string().optional(),
  push_method: z.string().optional(),
  /** push_url was the user's override (then a changed webhook path in n8n is not followed). */
  push_url_overridden: z.boolean().optional(),
});
export type WorkflowPushPayload = z.infer<typeof WorkflowPushPayload>;

/** One conversion event as accepted at push time (the provider's push schema, identifiers already hashed). */
export const ConversionPush = z.object({
  /** The event name as the user gave it (or the selection's default); the provider maps it to its own types. */
  event_name: z.string(),
  /** The event's fields (`data` of the push body, normalised by the push schema; `event_at` in epoch ms). */
  data: z.looseObject({ conversion_id: z.string(), event_at: z.number() }),
});
export type ConversionPush = z.infer<typeof ConversionPush>;

/** A queued conversion event: sent in batches per connection, pixel and test id. */
export const ConversionMessagePayload = z.object({
  pixel_id: z.string(),
  ad_account_id: z.string(),
  test_id: z.string().nullable(),
  event: ConversionPush,
});
export type ConversionMessagePayload = z.infer<typeof ConversionMessagePayload>;

/** One applied ads plan (the plan row holds the changes). */
export const AdsApplyPayload = z.object({ plan_id: z.string() });
export type AdsApplyPayload = z.infer<typeof AdsApplyPayload>;

/** One CSV export of ads reports (the export row holds the request). */
export const ReportExportPayload = z.object({ export_id: z.string() });
export type ReportExportPayload = z.infer<typeof ReportExportPayload>;

/** The payload schema of every outbox queue. A new kind of outbound job adds its queue to OUTBOX_QUEUES and here. */
export const OUTBOX_PAYLOADS = {
  [QUEUES.chatMessages]: ChatMessagePayload,
  [QUEUES.workflowPushes]: WorkflowPushPayload,
  [QUEUES.conversionEvents]: ConversionMessagePayload,
  [QUEUES.adsApplies]: AdsApplyPayload,
  [QUEUES.reportExports]: ReportExportPayload,
} satisfies Record<OutboxQueueName, z.ZodType>;

export type OutboxPayload<Q extends OutboxQueueName> = z.infer<(typeof OUTBOX_PAYLOADS)[Q]>;

/** The error class of an attempt whose message's payload does not match its queue's schema (never retried). */
export const INVALID_PAYLOAD = "invalid_payload";

// ---- The API's view of a connector's outbox messages (workflow pushes, conversion events) ----------------------------

/** `unknown`: the peer may have acted on the last attempt (e.g. the workflow ran and failed); not retried, replayable. */
export const OUTBOX_STATUSES = ["pending", "succeeded", "failed", "unknown", "cancelled"] as const;

/** A failed (or unknown) outbox message put back to pending for one more attempt. */
export const OutboxReplayed = z.object({
  id: z.string(), status: z.literal("queued"), attempt: z.number().int().meta({ description: "The number of the attempt queued" }),
}).meta({ id: "OutboxReplayed" });
export type OutboxReplayed = z.infer<typeof OutboxReplayed>;
