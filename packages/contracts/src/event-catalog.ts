import type { TrendEvent } from "./trend-events.ts";
import type { AccountEventData, OperationalPayload } from "./account-events.ts";
import { TREND_EVENT_TYPES, type OPERATIONAL_EVENT_TYPES } from "./vocabulary.ts";

export type OperationalEventType = (typeof OPERATIONAL_EVENT_TYPES)[number];

// The published catalog of the events Trendgate sends: what each type means and an example. The AsyncAPI document
// (apps/gateway/src/openapi/asyncapi.ts, GET /asyncapi.json, GET /docs/events) is built from this and from the zod
// contracts the events are validated with, so the catalog cannot drift from what is delivered.

export type TrendEventType = (typeof TREND_EVENT_TYPES)[number];

export const EVENT_CATALOG: Record<TrendEventType, { title: string; summary: string }> = {
  "trend.detected": {
    title: "Trend detected",
    summary: "A topic became a trend (or a later wave of an open trend, after 6 h quiet, outgrew it: above a low trend, or two severity levels above a stronger one).",
  },
  "trend.severity_changed": {
    title: "Severity changed",
    summary: "A trend's severity moved and held for DETECTION_SEVERITY_HOLD_SECONDS (30 min by default).",
  },
  "trend.velocity_changed": {
    title: "Velocity changed",
    summary: "A trend's velocity moved 50 %, at most once per trend per DETECTION_VELOCITY_EVENT_MIN_SECONDS (3 h), judged on closed buckets.",
  },
  "trend.cooling": {
    title: "Trend cooling",
    summary: "The first closed hour after the trend's last anomalous one was calm: it is cooling down, and ends DETECTION_END_AFTER_HOURS (12 h) after that last anomalous hour unless it rises again. Once per wave. Only subscriptions that list it in event_types receive it.",
  },
  "trend.ended": {
    title: "Trend ended",
    summary: "No bucket of the trend has been anomalous for DETECTION_END_AFTER_HOURS (12 h by default): close what trend.detected opened. Its figures are the closing ones.",
  },
};

/** One example event of each type: the lifecycle of one trend. */
export function exampleTrendEvent(type: TrendEventType): TrendEvent {
  const base: TrendEvent = {
    id: `evt_01KF3EXAMPLE${type.replace(/\W/g, "").toUpperCase().slice(0, 12)}`,
    account_id: "acc_01KF3EXAMPLEACCOUNT",
    type,
    trend_id: "trend_01KF3EXAMPLETREND",
    trend_name: "AI agents",
    category: "tech/ai",
    severity: "medium",
    previous_severity: null,
    velocity: 180,
    previous_velocity: null,
    anomaly_score: 8.4,
    sentiment: 0.12,
    timestamp: "2026-11-26T14:00:00.000Z",
    summary: "Mentions of AI agents: 240 in the 14:00 hour, about 4x the usual 60 an hour.",
    source_link: "https://trendgate.example/briefings/eyJhbGciOi...",
    recommended_next_steps: ["Push to the content workflow", "Preview the tech/ai ads targeting plan"],
  };
  switch (type) {
    case "trend.severity_changed":
      return { ...base, severity: "high", previous_severity: "medium", velocity: 420, previous_velocity: 180, anomaly_score: 12.9 };
    case "trend.velocity_changed":
      return { ...base, severity: "high", previous_severity: "high", velocity: 700, previous_velocity: 420, anomaly_score: 15.2 };
    case "trend.cooling":
      return { ...base, severity: "high", previous_severity: "high", velocity: 35, previous_velocity: 700, anomaly_score: 1.2, summary: "\"AI agents\" (tech/ai) is cooling: 95 mentions/h against 60 expected, no longer anomalous; it ends 12 h after its last anomalous hour unless it rises again (severity high)." };
    case "trend.ended":
      return { ...base, severity: "low", previous_severity: "high", velocity: 0, previous_velocity: 700, anomaly_score: 0.4, summary: "AI agents is back to its usual rate: the trend has ended." };
    default:
      return base;
  }
}

/** One example of each operational event's delivery body (the account event). */
export function exampleOperationalEvent(type: OperationalEventType): OperationalPayload {
  const data: { [T in OperationalEventType]: AccountEventData<T> } = {
    "webhook.disabled": { webhook_id: "wh_01KF3EXAMPLEWEBHOOK", reason: "the endpoint answered 410 Gone" },
    "webhook.delivery_failed": { webhook_id: "wh_01KF3EXAMPLEWEBHOOK", delivery_id: "msg_01KF3EXAMPLEDELIVERY", attempts: 8, error: "HTTP 503", event_type: "trend.detected" },
    "connection.needs_reauth": { provider: "slack", connection_id: "con_01KF3EXAMPLECONN", reason: "invalid_grant: the refresh token was revoked" },
    "connection.connected": { provider: "slack", account: { team_id: "T0001", team_name: "Acme" } },
    "connector.needs_reauth": { connection_id: "soc_01KF3EXAMPLESOCIAL", provider: "x", reason: "recent search: X rejected the token (401 Unauthorized)" },
    "connector.recovered": { connection_id: "soc_01KF3EXAMPLESOCIAL", provider: "x" },
    "connector.delivery_failing": {
      connection_id: "con_01KF3EXAMPLECONN", provider: "n8n", message_id: "obx_01KF3EXAMPLEMESSAGE", event_id: "evt_01KF3EXAMPLETRENDDETECT",
      workflow_id: "wf_1042", outcome: "failed", error: "pushing to the workflow: n8n has no active webhook at this URL (404)",
    },
    "report.export_ready": { export_id: "rex_01KF3EXAMPLEEXPORT", rows: 1250, bytes: 96512 },
    "operator.acknowledged": { item_id: "opi_01KF3EXAMPLEITEM", trend_id: "trend_01KF3EXAMPLETREND", title: "AI agents", severity: "critical", actor: "chat:T0001/U0001", actor_name: "Ada", route_id: null, action: "acknowledge" },
    "operator.resolved": { item_id: "opi_01KF3EXAMPLEITEM", trend_id: "trend_01KF3EXAMPLETREND", title: "AI agents", severity: "critical", actor: "key:key_01KF3EXAMPLEKEY", actor_name: null, route_id: null, action: "resolve" },
    "operator.route_failed": {
      item_id: "opi_01KF3EXAMPLEITEM", trend_id: "trend_01KF3EXAMPLETREND", title: "AI agents", route_id: "rte_01KF3EXAMPLEROUTE", route: "Finance desk",
      provider: "slack", channel_id: "C0FINANCE01", error: "chat.postMessage: is_archived", posted_to: { provider: "slack", channel_id: "C0ALERTS001" },
    },
    "operator.escalated": { item_id: "opi_01KF3EXAMPLEITEM", trend_id: "trend_01KF3EXAMPLETREND", title: "AI agents", severity: "critical", step: 1, step_type: "notify_webhook", route_id: "rte_01KF3EXAMPLEROUTE", notify_webhook_id: "wh_01KF3EXAMPLEWEBHOOK" },
  };
  // Each pair of type and data is checked above; TypeScript cannot follow `type` into the union.
  return { id: `evt_01KF3EXAMPLE${type.replace(/\W/g, "").toUpperCase().slice(0, 12)}`, type, created_at: "2026-11-26T14:05:00.000Z", data: data[type] } as OperationalPayload;
}
