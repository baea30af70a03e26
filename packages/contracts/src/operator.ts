import { z } from "zod";
import { csvEnum, documentedEnum, Id, page, pageQuery, text, Timestamp } from "./common.ts";
import { SEVERITIES } from "./trend-events.ts";

// The operator queue (high-priority trend events routed to people): one item per
// trend, changed only through one state machine (packages/operator) by the REST routes, chat buttons and the tick.

export const OPERATOR_STATES = {
  open: "needs someone; a critical item re-notifies the channel until it is acknowledged",
  acknowledged: "someone is on it",
  snoozed: "hidden until `snoozed_until`, then open again",
  resolved: "done; a new event of its trend reopens it",
} as const;
export type OperatorItemState = keyof typeof OPERATOR_STATES;
export const OperatorStateEnum = documentedEnum(OPERATOR_STATES);

export const OPERATOR_ACTIONS = {
  acknowledge: "open or snoozed -> acknowledged",
  resolve: "open, acknowledged or snoozed -> resolved",
  snooze: "open, acknowledged or snoozed -> snoozed for `snooze_minutes` (a snoozed item gets a new end)",
  reopen: "acknowledged, snoozed or resolved -> open",
} as const;
export type OperatorActionName = keyof typeof OPERATOR_ACTIONS;
export const OperatorActionEnum = documentedEnum(OPERATOR_ACTIONS);

export const SNOOZE_MINUTES = { min: 5, max: 10_080, default: 60 } as const;


export const OperatorItemsQuery = pageQuery({ limit: 50, max: 200, cursor: { ids: ["opi"] } }).extend({
  state: csvEnum(Object.keys(OPERATOR_STATES) as OperatorItemState[]).optional().meta({ description: "Comma-separated states, e.g. `open,snoozed`" }),
  severity: csvEnum(SEVERITIES).optional().meta({ description: "Comma-separated severities, e.g. `high,critical`" }),
});
export const OperatorItemIdParam = z.object({ item_id: Id });

export const OperatorActionBody = z
  .object({
    action: OperatorActionEnum,
    version: z.number().int().min(1).max(2_147_483_647)
      .meta({ description: "The item's `version` as you saw it; a changed item answers 409 `version_conflict` with the current version" }),
    snooze_minutes: z.number().int().min(SNOOZE_MINUTES.min).max(SNOOZE_MINUTES.max).optional()
      .meta({ description: `For \`snooze\`: minutes (${SNOOZE_MINUTES.min}-${SNOOZE_MINUTES.max}, default ${SNOOZE_MINUTES.default})` }),
    note: text({ max: 1000, trim: true }).optional().meta({ description: "Kept in the item's history" }),
  })
  .strict()
  .meta({ id: "OperatorActionBody" });
export type OperatorActionBody = z.infer<typeof OperatorActionBody>;

export const OperatorItem = z
  .object({
    id: z.string(),
    state: OperatorStateEnum,
    severity: z.enum(SEVERITIES),
    title: z.string().meta({ description: "The trend's name" }),
    category: z.string(),
    summary: z.string(),
    velocity: z.number().meta({ description: "Mentions per hour above the expected rate, as last reported" }),
    briefing_url: z.string().nullable(),
    trend_id: z.string().nullable(),
    occurrences: z.number().int().meta({ description: "Trend events that reached this item" }),
    version: z.number().int().meta({ description: "Counts state changes; send it with an action" }),
    snoozed_until: Timestamp.nullable(),
    acknowledged_by: z.string().nullable().meta({ description: "`key:<api key id>`, `chat:<team>/<user>` or `system`" }),
    acknowledged_at: Timestamp.nullable(),
    resolved_by: z.string().nullable(),
    resolved_at: Timestamp.nullable(),
    chat: z.object({
      channel_id: z.string().nullable(),
      message_ts: z.string().nullable().meta({ description: "The posted card, once posted" }),
      delivery_error: z.string().nullable().meta({ description: "Why the last chat message for this item could not be delivered (after its retries), or null" }),
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: "OperatorItem" });
export type OperatorItem = z.infer<typeof OperatorItem>;

export const OperatorItemEvent = z
  .object({
    id: z.string(),
    action: z.string().meta({ description: "`opened`, `updated` (a later event of its trend), `acknowledge`, `resolve`, `snooze`, `reopen`, `unsnoozed` (its snooze ended), `renotified` `delivery_failed` (a chat message about it could not be sent) or `delivery_unknown` (the chat provider did not answer after the message was sent: it may be in the channel; not sent again)" }),
    from_state: z.string().nullable(),
    to_state: z.string(),
    actor: z.string(),
    version: z.number().int().meta({ description: "The item's version after this change" }),
    data: z.record(z.string(), z.unknown()),
    created_at: Timestamp,
  })
  .meta({ id: "OperatorItemEvent" });
export type OperatorItemEvent = z.infer<typeof OperatorItemEvent>;

export const OPERATOR_HISTORY_MAX = 500;
export const OperatorItemWithHistory = OperatorItem.extend({
  history: z.array(OperatorItemEvent).meta({ description: `Every change, oldest first (the newest ${OPERATOR_HISTORY_MAX})` }),
}).meta({ id: "OperatorItemWithHistory" });

export const OperatorItemList = page(OperatorItem).meta({ id: "OperatorItemList" });
