import { categoryWithin, SENSITIVITY_MIN_SEVERITY, severityRank, type Sensitivity, type TrendEvent, type WebhookFilter } from "@trendgate/contracts";
import { filterMatches } from "./filter.ts";

export interface TriggerSubscription {
  triggerType: string;
  thresholdValue: number;
  category: string | null;
  /** With trigger_type event_types: the types delivered. */
  eventTypes?: string[];
  /** A WebhookFilter as stored (validated when saved). */
  filter?: unknown;
  /** high (every trend) when absent. */
  sensitivity?: string;
}

/** `tech` matches `tech` and `tech/ai`, not `technology`. */
export const categoryMatches = (filter: string | null, category: string) =>
  !filter || categoryWithin(category, filter);

/** Whether a trend event fires a subscription's trigger (before cooldown, which the database decides). */
export function triggerFires(sub: TriggerSubscription, e: TrendEvent): boolean {
  if (!categoryMatches(sub.category, e.category)) return false;
  return triggered(sub, e) && filterMatches(sub.filter as WebhookFilter | null | undefined, e);
}

/** The least severity rank a subscription is told about (its sensitivity). */
const barOf = (sub: TriggerSubscription) => severityRank(SENSITIVITY_MIN_SEVERITY[(sub.sensitivity ?? "high") as Sensitivity] ?? "low");

/**
 * Whether the event is, for a subscription with severity bar `bar`, the trend's arrival: a detection at or above the
 * bar, or a severity change that crosses it from below (a trend detected weaker than the bar, risen to it since).
 */
export const arrivesAt = (e: TrendEvent, bar: number) =>
  (e.type === "trend.detected" && severityRank(e.severity) >= bar) ||
  (bar > 1 && e.type === "trend.severity_changed" && severityRank(e.severity) >= bar && (e.previous_severity === null || severityRank(e.previous_severity) < bar));

/**
 * The trigger alone: the event types listed, or the spec's trigger_type and threshold_value; under the sensitivity,
 * only trends at or above its severity count (an end always does: a receiver closes what it opened).
 */
function triggered(sub: TriggerSubscription, e: TrendEvent): boolean {
  const bar = barOf(sub);
  if (e.type !== "trend.ended" && severityRank(e.severity) < bar) return false;
  if (sub.triggerType === "event_types") return (sub.eventTypes ?? []).includes(e.type);
  // A trend cooling down is news only to whoever asked for it by name: no rise, no arrival, no end.
  if (e.type === "trend.cooling") return false;
  const t = sub.thresholdValue;
  // An end is only ever a trend_ended firing: its figures are the closing ones, not a rise.
  if (e.type === "trend.ended") return sub.triggerType === "trend_ended" && severityRank(e.severity) >= t;
  switch (sub.triggerType) {
    case "trend_velocity": // an upward crossing: below the threshold before (or unknown), at or above it now
      return e.velocity >= t && (e.previous_velocity === null || e.previous_velocity < t);
    case "trend_detected":
      return arrivesAt(e, bar) && e.velocity >= t;
    case "severity_change": {
      const now = severityRank(e.severity);
      const before = e.previous_severity ? severityRank(e.previous_severity) : 0;
      return now >= t && before < t;
    }
    default:
      return false;
  }
}
