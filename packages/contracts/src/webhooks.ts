import { z } from "zod";
import { decimalInt, documentedEnum, HttpHeaderValue, Id, OutboundUrl, page, pageQuery, SendableHeaderName, text, Timestamp } from "./common.ts";
import { CategoryPath } from "./signals.ts";
import { DELIVERY_MODES, SEVERITIES, EXECUTION_OUTCOMES, EXECUTION_TRIGGERS, RATE_LIMIT_PER_SECOND, RECOVERY_WINDOW_MINUTES, SENSITIVITIES, TRIGGER_TYPES, TRIGGER_WINDOW_MINUTES, WEBHOOK_EVENT_TYPES } from "./vocabulary.ts";
import { WebhookFilter } from "./webhook-filter.ts";

export const TriggerType = documentedEnum(TRIGGER_TYPES);

export const DeliveryMode = documentedEnum(DELIVERY_MODES);

export const MAX_THRESHOLD = 1_000_000;
export const MAX_COOLDOWN_SECONDS = 7 * 86_400;

export const WebhookUrl = OutboundUrl;

export const WebhookEventType = z.enum(WEBHOOK_EVENT_TYPES);

export const MAX_CUSTOM_HEADERS = 10;
// Names: SendableHeaderName (./common.ts), the rule a workflow push's header credential follows too.
export const CustomHeaders = z.record(SendableHeaderName, HttpHeaderValue)
  .refine((h) => Object.keys(h).length <= MAX_CUSTOM_HEADERS, { message: `at most ${MAX_CUSTOM_HEADERS} headers` })
  .refine((h) => new Set(Object.keys(h).map((k) => k.toLowerCase())).size === Object.keys(h).length, { message: "each header once (names are case-insensitive)" })
  .meta({ description: "Sent with every delivery, e.g. an API gateway's `Authorization`. Stored sealed; only the names are shown back" });

/** A body template: a chat incoming webhook's preset, or a custom Mustache template rendering JSON. */
export const BodyTemplate = z
  .object({
    format: z.enum(["slack", "discord", "teams", "custom"]).meta({
      description: "`slack`, `discord`, `teams`: a card for that chat's incoming webhook (Teams: a Workflows webhook taking an Adaptive Card); `custom`: `template`",
    }),
    template: text({ min: 2, max: 8000 }).optional().meta({
      description: "With `custom`: a Mustache template that renders JSON. Values are JSON-escaped (put string tags inside quotes); the body's fields and `event_type` are its view; " +
        "no triple braces, partials or delimiter changes. Checked when saved: it must render valid JSON for an example of every event type",
    }),
  })
  .strict()
  .refine((t) => (t.format === "custom") === (t.template !== undefined), { message: "template goes with format custom, and only with it", path: ["template"] })
  .meta({ id: "WebhookBodyTemplate" });
export type BodyTemplate = z.infer<typeof BodyTemplate>;

const subscriptionFields = {
  url: WebhookUrl,
  trigger_type: TriggerType,
  delivery_mode: DeliveryMode,
  threshold_value: z.number().min(0).max(MAX_THRESHOLD).meta({ description: `Level at which the trigger fires (0 to ${MAX_THRESHOLD})` }),
  cooldown_seconds: z.number().int().min(0).max(MAX_COOLDOWN_SECONDS).meta({ description: `Minimum seconds between deliveries (0 to ${MAX_COOLDOWN_SECONDS}, 7 days)` }),
  category: CategoryPath.nullable().optional().meta({ description: "Only trends in this category or its sub-categories (e.g. `tech` matches `tech/ai`); null = all" }),
  description: text({ max: 500 }).nullable().optional(),
  // Empty is accepted (as none) so that a subscription read back, which shows [] for the other triggers, can be written.
  event_types: z.array(WebhookEventType).max(WEBHOOK_EVENT_TYPES.length).optional().meta({
    description: "With `trigger_type: event_types` (at least one): the event types delivered; empty or absent with the other triggers, as a read shows it (each delivery names its type in X-Webhook-Event-Type); trend events and operational events (the account's own: a subscription disabled, a connection needing re-authorisation, an export ready)",
  }),
  filter: WebhookFilter.nullable().optional(),
  sensitivity: z.enum(SENSITIVITIES).optional().meta({
    description: "The least trend this subscription is told about: `high` (default) every trend (anomaly score >= 4.5, severity low and up), " +
      "`normal` medium and up (>= 7), `low` high and up (>= 10). A trend first detected below it is announced when it rises to it " +
      "(with trigger_type trend_detected: the trend.severity_changed that crosses it). trend.ended is not filtered: a receiver can close what it opened",
  }),
  trigger_window_minutes: z.number().int().min(TRIGGER_WINDOW_MINUTES.min).max(TRIGGER_WINDOW_MINUTES.max).optional().meta({
    description: "Minimum duration before alerting: a firing is held this long and delivered only if a detection pass still finds its trend " +
      "anomalous at least this long after the event (else it is recorded as suppressed). 0 (default): at once",
  }),
  recovery_window_minutes: z.number().int().min(RECOVERY_WINDOW_MINUTES.min).max(RECOVERY_WINDOW_MINUTES.max).optional().meta({
    description: "Quiet period after an end: a trend.detected of a trend that ended less than this long before is not delivered " +
      "(recorded as suppressed). 0 (default): off",
  }),
  rate_limit: z.number().int().min(RATE_LIMIT_PER_SECOND.min).max(RATE_LIMIT_PER_SECOND.max).nullable().optional().meta({
    description: `At most this many deliveries a second to this subscription's url (${RATE_LIMIT_PER_SECOND.min} to ${RATE_LIMIT_PER_SECOND.max}), across all workers: ` +
      "a request counts until a second after its answer, and a delivery over the limit waits its turn (never dropped, no attempt used). null (default): unlimited",
  }),
  headers: CustomHeaders.nullable().optional(),
  body_template: BodyTemplate.nullable().optional().meta({
    description: "Render each delivery's body through a template instead of the spec's fields (a chat incoming webhook); still signed. null: the spec's body",
  }),
};

/**
 * The rules between fields, on a subscription as it will be (a PATCH merged into the stored one): event_types goes
 * with trigger_type event_types, which needs it and takes threshold_value 0.
 */
export function subscriptionProblems(s: { trigger_type: string; threshold_value: number; event_types?: readonly string[] | null }) {
  const out: { path: string[]; message: string }[] = [];
  const listed = (s.event_types ?? []).length > 0;
  if (s.trigger_type === "event_types") {
    if (!listed) out.push({ path: ["event_types"], message: "trigger_type event_types needs the list of event types to deliver" });
    if (s.threshold_value !== 0) out.push({ path: ["threshold_value"], message: "not used with trigger_type event_types: send 0 (narrow with filter)" });
  } else if (listed) out.push({ path: ["event_types"], message: "only with trigger_type event_types" });
  return out;
}

export const CreateWebhookBody = z.object(subscriptionFields).strict()
  .superRefine((b, ctx) => { for (const p of subscriptionProblems(b)) ctx.addIssue({ code: "custom", ...p }); })
  .meta({ id: "CreateWebhookBody" });
export const UpdateWebhookBody = z
  .object(Object.fromEntries(Object.entries(subscriptionFields).map(([k, v]) => [k, v.optional()])) as { [K in keyof typeof subscriptionFields]: z.ZodOptional<(typeof subscriptionFields)[K]> })
  .strict()
  .refine((b) => Object.keys(b).length > 0, "send at least one field to change")
  .meta({ id: "UpdateWebhookBody" });

export const WEBHOOK_STATUSES = ["active", "paused", "disabled"] as const;

export const Webhook = z
  .object({
    id: z.string(),
    url: z.string(),
    trigger_type: TriggerType,
    delivery_mode: DeliveryMode,
    threshold_value: z.number(),
    cooldown_seconds: z.number().int(),
    category: z.string().nullable(),
    description: z.string().nullable(),
    event_types: z.array(WebhookEventType).meta({ description: "The types delivered with trigger_type event_types; empty otherwise" }),
    filter: WebhookFilter.nullable(),
    sensitivity: z.enum(SENSITIVITIES),
    trigger_window_minutes: z.number().int(),
    recovery_window_minutes: z.number().int(),
    rate_limit: z.number().int().nullable().meta({ description: "Deliveries per second at most; null: unlimited" }),
    header_names: z.array(z.string()).meta({ description: "The custom headers sent with each delivery; their values are never shown" }),
    body_template: BodyTemplate.nullable(),
    status: z.enum(WEBHOOK_STATUSES).meta({ description: "`disabled` is set by the service (410 Gone, or failing continuously); resume to re-enable" }),
    disabled_reason: z.string().nullable(),
    failing_since: Timestamp.nullable(),
    secret_rotating_until: Timestamp.nullable().meta({ description: "While set, deliveries are signed with both the new and the previous secret" }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: "Webhook" });

export type Webhook = z.infer<typeof Webhook>;

export const WebhookWithSecret = Webhook.extend({
  secret: z.string().meta({ description: "Signing secret `whsec_<base64>`. Returned only here; store it now." }),
}).meta({ id: "WebhookWithSecret" });

export const RotateSecretBody = z
  .object({
    grace_period_seconds: z.number().int().min(0).max(7 * 86_400).default(86_400)
      .meta({ description: "How long the previous secret keeps signing too (default 24 h, max 7 days, 0 = stop at once)" }),
  })
  .strict()
  .meta({ id: "RotateWebhookSecretBody" });

export const RotatedSecret = z
  .object({ secret: z.string(), previous_secret_expires_at: Timestamp.nullable() })
  .meta({ id: "RotatedWebhookSecret" });

export const RecoverBody = z
  .object({ since: Timestamp.meta({ description: "Re-send every failed delivery created at or after this time (at most 14 days ago)" }) })
  .strict()
  .meta({ id: "RecoverWebhookBody" });

export const EXECUTION_ERROR_CLASSES = [
  "timeout", "connection_error", "dns_error", "tls_error", "blocked_destination",
  "http_3xx", "http_4xx", "http_408", "http_410", "http_429", "http_5xx", "subscription_inactive", "cooldown", "trigger_window", "recovery_window",
] as const;

export const WebhookExecution = z
  .object({
    id: z.string(),
    webhook_id: z.string(),
    delivery_id: z.string().meta({ description: "The X-Webhook-Id / webhook-id sent; the same for every attempt of one delivery" }),
    attempt: z.number().int().meta({ description: "1 for the first attempt of the delivery; 0 for a `suppressed` firing (nothing was sent)" }),
    trigger: z.enum(EXECUTION_TRIGGERS).meta({
      description: "Why this attempt was made: a firing (`trend_event`, `account_event`), `test`, or a resend asked for (`replay`, `recovery`), " +
        "whatever its delivery: a replayed test delivery's attempt is `replay` and still sends `X-Webhook-Test: true` (in `request.headers`)",
    }),
    outcome: z.enum(EXECUTION_OUTCOMES).meta({
      description: "`suppressed`: a firing not sent: dropped by the cooldown (error_class `cooldown`; error_message says until when, or which digest kept the stronger firing), " +
        "its trend no longer anomalous at the end of the trigger window (`trigger_window`), or a re-detection inside the recovery window (`recovery_window`); " +
        "error_message names the trend and event. Its delivery_id belongs to no delivery. " +
        "`interrupted`: the worker stopped during the request, or before the answer was recorded (a crash, a deploy): the receiver may have received it, " +
        "and the same attempt was sent again (the next execution with this attempt number); de-duplicate on webhook-id.",
    }),
    request: z.object({
      url: z.string(),
      headers: z.record(z.string(), z.string()).meta({ description: "Headers sent; signatures redacted" }),
      body_bytes: z.number().int(),
    }),
    response_status: z.number().int().nullable(),
    response_body: z.string().nullable().meta({ description: "First 16 KiB of the response body" }),
    response_body_truncated: z.boolean(),
    duration_ms: z.number().int(),
    error_class: z.enum(EXECUTION_ERROR_CLASSES).nullable(),
    error_message: z.string().nullable(),
    next_retry_at: Timestamp.nullable(),
    created_at: Timestamp,
  })
  .meta({ id: "WebhookExecution" });
export type WebhookExecution = z.infer<typeof WebhookExecution>;

export const ExecutionsQuery = pageQuery({ limit: 20, max: 100, cursor: { ids: ["exe"] } }).extend({
  outcome: WebhookExecution.shape.outcome.optional().meta({ description: "Only attempts with this outcome" }),
  trigger: WebhookExecution.shape.trigger.optional().meta({ description: "Only attempts made for this reason (`replay`: the replayed attempts)" }),
  since: Timestamp.optional().meta({ description: "Only attempts made at or after this instant" }),
  until: Timestamp.optional().meta({ description: "Only attempts made before this instant" }),
});
export const WebhookIdParam = z.object({ webhook_id: Id });
export const ExecutionIdParam = WebhookIdParam.extend({ execution_id: Id });

/** The body of every delivery: exactly the fields receivers are promised, no more. */
export const WebhookPayload = z
  .object({
    trend_name: z.string(),
    category: z.string(),
    severity: z.string(),
    velocity: z.number().meta({ description: "Mentions per hour above the topic's expected rate" }),
    timestamp: z.string().meta({ description: "Start (UTC, ISO 8601) of the bucket the trend was measured in, not the moment of detection or sending" }),
    summary: z.string(),
    source_link: z.string().meta({ description: "The trend's briefing page: opens without an API key, signed, expires after BRIEFING_LINK_TTL_SECONDS, revocable per account" }),
    recommended_next_steps: z.array(z.string()),
  })
  .strict()
  .meta({ id: "WebhookPayload" });
export type WebhookPayload = z.infer<typeof WebhookPayload>;

export const AccountEvent = z
  .object({
    id: z.string(), type: z.string().meta({ example: "webhook.disabled" }),
    // Typed per type in account-events.ts; listed loosely here, as stored, so older rows read back too.
    data: z.record(z.string(), z.unknown()).meta({ description: "Its type's data, a schema per type: for the types subscriptions can list, in this document's webhooks (`<Type>Data`, e.g. `WebhookDisabledData`) and in /asyncapi.json" }),
    created_at: Timestamp,
  })
  .meta({ id: "AccountEvent" });

export const WebhookList = page(Webhook).meta({ id: "WebhookList" });
export const WebhookExecutionList = page(WebhookExecution).meta({ id: "WebhookExecutionList" });
export const AccountEventList = page(AccountEvent).meta({ id: "AccountEventList" });
/** A delivery queued again (a test delivery, a redelivery). */
export const QueuedDelivery = z.object({ delivery_id: z.string(), webhook_id: z.string(), status: z.literal("queued") }).meta({ id: "QueuedDelivery" });
export const RecoverResult = z.object({ recovered: z.number().int() }).meta({ id: "RecoverResult" });

// Backtests: a subscription's rules (or chat settings) replayed over the account's stored trend events.

export const BACKTEST_MAX_DAYS = 14;
const backtestDays = z.number().int().min(1).max(BACKTEST_MAX_DAYS).default(BACKTEST_MAX_DAYS)
  .meta({ description: `How many days back to replay (1-${BACKTEST_MAX_DAYS}, default ${BACKTEST_MAX_DAYS})` });

const ruleFields = (({ trigger_type, delivery_mode, threshold_value, cooldown_seconds, category, event_types, filter, sensitivity, trigger_window_minutes, recovery_window_minutes }) =>
  ({ trigger_type, delivery_mode, threshold_value, cooldown_seconds, category, event_types, filter, sensitivity, trigger_window_minutes, recovery_window_minutes }))(subscriptionFields);

export const WebhookPreviewBody = z.object({ ...ruleFields, days: backtestDays }).strict()
  .superRefine((b, ctx) => { for (const p of subscriptionProblems(b)) ctx.addIssue({ code: "custom", ...p }); })
  .meta({ id: "WebhookPreviewBody", description: "A subscription's rules as POST /api/integrations/webhooks takes them (no url, headers or template: nothing is sent), and how far back to look" });

export const BacktestTrend = z.object({
  trend_id: z.string(),
  trend_name: z.string(),
  category: z.string(),
  severity: z.enum(SEVERITIES).meta({ description: "The highest severity among the events it was delivered with" }),
  deliveries: z.number().int(),
  first_at: Timestamp,
}).meta({ id: "BacktestTrend" });

const backtestWindow = {
  from: Timestamp.meta({ description: "Start of the replayed history" }),
  to: Timestamp,
  events_replayed: z.number().int().meta({ description: "Trend events the account's detection passes published in that time" }),
  truncated: z.boolean().meta({
    description: "The replay stopped early (at BACKTEST_MAX_EVENTS events or after BACKTEST_MAX_SECONDS): `to` is then the publication of the " +
      "last event replayed, and every count covers `from` to `to` only. Ask for fewer `days` to see the rest",
  }),
  truncated_reason: z.enum(["event_limit", "time_limit"]).nullable().meta({ description: "Why it stopped early; null when not truncated" }),
};

export const WebhookBacktest = z.object({
  ...backtestWindow,
  deliveries: z.number().int().meta({ description: "What the subscription would have received" }),
  suppressed: z.object({ cooldown: z.number().int(), trigger_window: z.number().int(), recovery_window: z.number().int() })
    .meta({ description: "Firings it would have dropped, by reason (as `suppressed` executions). One a trigger window holds and the cooldown drops anyway " +
      "counts under `cooldown`: the detector is not asked whether it lasted (live, it counts under `trigger_window` if it did not). The total is exact." }),
  per_day: z.array(z.object({ date: z.string().meta({ example: "2026-11-20" }), deliveries: z.number().int() }))
    .meta({ description: "Deliveries per UTC day, every day of the window" }),
  trends: z.array(BacktestTrend).meta({ description: "The trends that would have fired, most deliveries first (at most 100)" }),
}).meta({ id: "WebhookBacktest" });
export type WebhookBacktest = z.infer<typeof WebhookBacktest>;

export const ChatBacktest = z.object({
  ...backtestWindow,
  items_opened: z.number().int().meta({
    description: "Operator items the settings and the account's stored routing rules would have opened: one per trend, at its first event that a rule " +
      "matches (the first matching rule, as the live intake picks it) or the settings admit (the default route). A rule's `sources` are matched " +
      "against the item's source (`trends`) only: the signal sources behind a trend's last 24 hours are not replayed, so a rule that needs them " +
      "opens nothing here",
  }),
  cards_held_back: z.number().int().meta({ description: "Of those, the items whose card the trigger window would have held back (the trend no longer anomalous at its end)" }),
  per_day: z.array(z.object({ date: z.string(), items_opened: z.number().int() })),
  trends: z.array(BacktestTrend.omit({ deliveries: true }).extend({
    route_id: z.string().nullable().meta({ description: "The routing rule its item would have opened under; null: the default route (the settings)" }),
  })).meta({ description: "The trends that would have opened an item, newest first (at most 100)" }),
}).meta({ id: "ChatBacktest" });
export type ChatBacktest = z.infer<typeof ChatBacktest>;
/** `?days=` of a backtest given in the query (chat settings: the body is the settings). */
export const BACKTEST_DAYS = decimalInt(1, BACKTEST_MAX_DAYS).optional().transform((v) => v ?? BACKTEST_MAX_DAYS)
  .meta({ description: `How many days back to replay (1-${BACKTEST_MAX_DAYS}, default ${BACKTEST_MAX_DAYS})` });
