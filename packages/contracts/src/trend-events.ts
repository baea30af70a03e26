import { z } from "zod";
import { CategoryPath } from "./signals.ts";

export const SEVERITIES = ["low", "medium", "high", "critical"] as const;
export const Severity = z.enum(SEVERITIES);
export type Severity = z.infer<typeof Severity>;
/** 1..4; `severity_change` subscriptions compare threshold_value against this rank. */
export const severityRank = (s: Severity) => SEVERITIES.indexOf(s) + 1;

export const TREND_EVENT_TYPES = ["trend.detected", "trend.severity_changed", "trend.velocity_changed"] as const;

/**
 * A significant change of a trend, published once by the trend engine (packages/trends) and matched against webhook
 * subscriptions (and later other outlets). Carries everything the outbound payloads need.
 */
export const TrendEvent = z
  .object({
    id: z.string(),
    account_id: z.string(),
    type: z.enum(TREND_EVENT_TYPES),
    trend_id: z.string(),
    trend_name: z.string(),
    category: CategoryPath,
    severity: Severity,
    previous_severity: Severity.nullable(),
    velocity: z.number(),
    previous_velocity: z.number().nullable(),
    anomaly_score: z.number(),
    timestamp: z.iso.datetime(),
    summary: z.string(),
    source_link: z.string(),
    recommended_next_steps: z.array(z.string()),
  })
  .meta({ id: "TrendEvent" });
export type TrendEvent = z.infer<typeof TrendEvent>;
