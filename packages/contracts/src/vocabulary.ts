// The service's vocabulary: the fixed values the schemas are built from, with what each means. No zod here, so code
// that must stay small (the web console's browser bundle) imports exactly this (`@trendgate/contracts/vocabulary`).

export const SEVERITIES = ["low", "medium", "high", "critical"] as const;

/**
 * A trend's lifecycle: detected once, changes while it lasts, cooling once per wave when its bursts calm, ended once
 * (a receiver closes what `trend.detected` opened).
 */
export const TREND_EVENT_TYPES = ["trend.detected", "trend.severity_changed", "trend.velocity_changed", "trend.cooling", "trend.ended"] as const;

export const STAGES = ["emerging", "rising", "peaking", "cooling", "dormant"] as const;

// What fires a subscription. threshold_value is compared against a different number for each trigger.
export const TRIGGER_TYPES = {
  trend_velocity: "fires when a trend's velocity crosses threshold_value upwards (previous below, current at or above)",
  trend_detected: "fires for every newly detected trend whose velocity is at or above threshold_value (0 = every new trend)",
  severity_change: "fires when a trend's severity rises to at least threshold_value (1 low, 2 medium, 3 high, 4 critical)",
  trend_ended: "fires once when a trend ends (trend.ended), if the severity it ended with is at least threshold_value (0 = every trend that ends)",
  event_types: "fires for every event whose type is listed in event_types (threshold_value is not used: send 0); narrow it with category and filter. " +
    "The other trigger types map onto event types: trend_detected is trend.detected at a minimum velocity; trend_velocity any trend event whose velocity crosses the threshold upwards; " +
    "severity_change any trend event whose severity rises to the threshold; trend_ended is trend.ended at a minimum closing severity",
} as const;
export const DELIVERY_MODES = {
  instant_stream: "each firing is delivered at once; firings within cooldown_seconds of the last delivery are dropped",
  cooldown_digest: "the first firing is delivered at once; firings inside the cooldown are held and the strongest one (highest velocity) is delivered when the cooldown ends",
} as const;

/**
 * Operational events: what the service tells an account (GET /api/events), also pushed to subscriptions that list
 * them. Their body is the account event itself (OperationalPayload); each type's data has its own schema
 * (account-events.ts), which these lines only summarise.
 */
export const OPERATIONAL_EVENTS = {
  "webhook.disabled": "a subscription was disabled (410 Gone, or failing continuously); data: webhook_id, reason",
  "webhook.delivery_failed": "a delivery exhausted its retries; data: webhook_id, delivery_id, attempts, error, event_type (at most one an hour per subscription)",
  "connection.needs_reauth": "a browser-OAuth connection's token was refused: re-authorise it; data: provider, connection_id, reason",
  "connection.connected": "a browser-OAuth connection was made or re-authorised (the recovery of connection.needs_reauth); data: provider, account",
  "connector.needs_reauth": "a social connector's credentials were refused: PUT new ones; data: connection_id, provider, reason",
  "connector.recovered": "a social connector that needed new credentials polled successfully again; data: connection_id, provider",
  "connector.delivery_failing": "workflow pushes started failing for good; data: connection_id, provider, message_id, event_id, workflow_id, outcome, error",
  "report.export_ready": "a CSV export finished; data: export_id, rows, bytes",
  "operator.acknowledged": "someone acknowledged an operator item; data: item_id, trend_id, title, severity, actor, actor_name, route_id, action",
  "operator.resolved": "an operator item was resolved (or muted); data: item_id, trend_id, title, severity, actor, actor_name, route_id, action",
  "operator.escalated": "an operator item nobody acknowledged reached an escalation step; data: item_id, trend_id, title, severity, step, step_type, route_id, notify_webhook_id",
  "operator.route_failed": "a routing rule's channel could not take an item's card (deleted, archived, the bot removed): it went to the default channel; data: item_id, trend_id, title, route_id, route, provider, channel_id, error, posted_to",
} as const;
export const OPERATIONAL_EVENT_TYPES = Object.keys(OPERATIONAL_EVENTS) as (keyof typeof OPERATIONAL_EVENTS)[];

/** What a subscription with `trigger_type: event_types` may list: the trend lifecycle and the operational events. */
export const WEBHOOK_EVENT_TYPES = [...TREND_EVENT_TYPES, ...OPERATIONAL_EVENT_TYPES] as const;

/**
 * What became of one delivery attempt (a webhook execution). `interrupted`: the worker stopped during the request (or
 * before its answer was recorded); the receiver may have it, and the same attempt was sent again.
 */
export const EXECUTION_OUTCOMES = ["succeeded", "retrying", "failed", "suppressed", "interrupted"] as const;
/** Why a delivery was made. */
export const EXECUTION_TRIGGERS = ["trend_event", "account_event", "test", "replay", "recovery"] as const;

// The operator queue (high-priority trend events routed to people): one item per trend, changed only through one
// state machine (packages/operator) by the REST routes, chat buttons and the tick.
export const OPERATOR_STATES = {
  open: "needs someone; a critical item re-notifies the channel until it is acknowledged",
  acknowledged: "someone is on it",
  snoozed: "hidden until `snoozed_until`, then open again",
  resolved: "done; a new event of its trend reopens it",
} as const;
export type OperatorItemState = keyof typeof OPERATOR_STATES;
export const OPERATOR_ACTIONS = {
  acknowledge: "open or snoozed -> acknowledged",
  resolve: "open, acknowledged or snoozed -> resolved",
  snooze: "open, acknowledged or snoozed -> snoozed for `snooze_minutes` (a snoozed item gets a new end)",
  reopen: "acknowledged, snoozed or resolved -> open",
  mute: "open, acknowledged or snoozed -> resolved, and the item's topic muted for CARD_MUTE_MINUTES (24 h; other periods: POST /api/mutes)",
} as const;
/**
 * The state each action (and the snooze ending, `unsnoozed`, the system's only) leads to from each state; absent:
 * refused. packages/operator's state machine applies it; clients read it to offer only what is allowed.
 */
export const OPERATOR_TRANSITIONS: Record<OperatorItemState, Partial<Record<OperatorActionName | "unsnoozed", OperatorItemState>>> = {
  open: { acknowledge: "acknowledged", snooze: "snoozed", resolve: "resolved", mute: "resolved" },
  acknowledged: { resolve: "resolved", snooze: "snoozed", reopen: "open", mute: "resolved" },
  snoozed: { acknowledge: "acknowledged", resolve: "resolved", snooze: "snoozed", reopen: "open", unsnoozed: "open", mute: "resolved" },
  resolved: { reopen: "open" },
};
/** Where an operator item comes from, besides a trend's signal sources: route rules can match these. */
export const OPERATOR_ITEM_SOURCES = ["trends", "ads_approval", "ads_review"] as const;
/** The event that opens an ads-approval item (route rules can match it beside the trend events). */
export const ADS_APPROVAL_EVENT_TYPE = "ads.approval_requested";
/** Limits of operator routing and escalation. */
export const ESCALATION = { maxRoutes: 50, maxSteps: 20, maxRepeats: 10, minWaitMinutes: 0.25, maxWaitMinutes: 1440 } as const;
/** How long the operator queue's "mute" action (a card's Mute button) mutes the item's topic. */
export const CARD_MUTE_MINUTES = 24 * 60;
export type OperatorActionName = keyof typeof OPERATOR_ACTIONS;
export const SNOOZE_MINUTES = { min: 5, max: 10_080, default: 60 } as const;

/** Feedback on a detection: "this was not a trend" or "this was useful". */
export const FEEDBACK_VERDICTS = ["not_a_trend", "useful"] as const;
export type FeedbackVerdict = (typeof FEEDBACK_VERDICTS)[number];
/**
 * How feedback moves a topic's evidence bar (the factor on the detector's score thresholds): each of its detections
 * counts once, by its latest verdict; the bar is 1 + step x (detections judged not a trend - detections judged
 * useful), never under 1 nor over max. Five or more "not a trend" detections: 1.5 (a low trend then needs an anomaly
 * score of 6.75, not 4.5). Removing the feedback, or "useful" on later detections, brings it back down. Chosen on the
 * evaluation corpus: steeper (0.25 a step, up to 2) cut more false alarms but lost real anomalies on topics that had
 * cried wolf (bench/eval-detection/README.md).
 */
export const EVIDENCE_BAR = { step: 0.1, max: 1.5 } as const;
/** The evidence bar of a topic with `net` detections judged not a trend beyond those judged useful. */
export const evidenceBarFor = (net: number) => Math.round(Math.min(EVIDENCE_BAR.max, 1 + EVIDENCE_BAR.step * Math.max(0, net)) * 100) / 100;

/**
 * A subscription's or chat setup's sensitivity: the least severity of trend it is told about, i.e. the least anomaly
 * score (the detector's severity thresholds): high = every trend (score >= 4.5, severity low and up), normal = medium
 * and up (>= 7), low = high and up (>= 10). A trend below the bar that later rises to it is announced then.
 */
export const SENSITIVITIES = ["low", "normal", "high"] as const;
export type Sensitivity = (typeof SENSITIVITIES)[number];
export const SENSITIVITY_MIN_SEVERITY = { high: "low", normal: "medium", low: "high" } as const satisfies Record<Sensitivity, (typeof SEVERITIES)[number]>;
/** Trigger and recovery windows: 0 (off) up to a day. */
export const TRIGGER_WINDOW_MINUTES = { min: 0, max: 1440 } as const;
export const RECOVERY_WINDOW_MINUTES = { min: 0, max: 10_080 } as const;
/** A subscription's rate limit, deliveries per second (null: unlimited). */
export const RATE_LIMIT_PER_SECOND = { min: 1, max: 10_000 } as const;
