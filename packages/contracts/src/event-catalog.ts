import type { TrendEvent } from "./trend-events.ts";
import { TREND_EVENT_TYPES } from "./trend-events.ts";

// The published catalog of the events Trendgate sends: what each type means and an example. The AsyncAPI document
// (apps/gateway/src/openapi/asyncapi.ts, GET /asyncapi.json, GET /docs/events) is built from this and from the zod
// contracts the events are validated with, so the catalog cannot drift from what is delivered.

export type TrendEventType = (typeof TREND_EVENT_TYPES)[number];

export const EVENT_CATALOG: Record<TrendEventType, { title: string; summary: string }> = {
  "trend.detected": {
    title: "Trend detected",
    summary: "A topic became a trend (or a later wave of an open trend, after 6 h quiet, grew more severe than the trend ever was).",
  },
  "trend.severity_changed": {
    title: "Severity changed",
    summary: "A trend's severity moved and held for DETECTION_SEVERITY_HOLD_SECONDS (30 min by default).",
  },
  "trend.velocity_changed": {
    title: "Velocity changed",
    summary: "A trend's velocity moved 50 %, at most once per trend per DETECTION_VELOCITY_EVENT_MIN_SECONDS (3 h), judged on closed buckets.",
  },
  "trend.ended": {
    title: "Trend ended",
    summary: "No bucket of the trend has been anomalous for 24 h: close what trend.detected opened. Its figures are the closing ones.",
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
    case "trend.ended":
      return { ...base, severity: "low", previous_severity: "high", velocity: 0, previous_velocity: 700, anomaly_score: 0.4, summary: "AI agents is back to its usual rate: the trend has ended." };
    default:
      return base;
  }
}
