import { z } from "zod";
import { csvEnum, documentedEnum, Id, page, pageQuery, text, Timestamp } from "./common.ts";
import { OPERATOR_ACTIONS, OPERATOR_ITEM_SOURCES, OPERATOR_STATES, SEVERITIES, SNOOZE_MINUTES, type OperatorItemState } from "./vocabulary.ts";


export const OperatorStateEnum = documentedEnum(OPERATOR_STATES);

export const OperatorActionEnum = documentedEnum(OPERATOR_ACTIONS);



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
    route_id: z.string().nullable().meta({ description: "The routing rule it opened under (GET /api/operator/routes); null: the default route" }),
    source: z.enum(OPERATOR_ITEM_SOURCES).meta({ description: "`trends`, `ads_approval` (an ads plan waiting for approval) or `ads_review` (an ads run a provider refused in part)" }),
    chat: z.object({
      provider: z.string().nullable().meta({ description: "The chat provider the card was posted through (`slack`, `teams`), once posted" }),
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
    action: z.string().meta({ description: "`opened`, `updated` (a later event of its trend), `acknowledge`, `resolve`, `snooze`, `reopen`, `unsnoozed` (its snooze ended), `renotified` `delivery_failed` (a chat message about it could not be sent), `route_failed` (its rule's channel could not take its card: posted to the default channel) or `delivery_unknown` (the chat provider did not answer after the message was sent: it may be in the channel; not sent again)" }),
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
