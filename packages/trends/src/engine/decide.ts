import type { TrendEvent } from "@trendgate/contracts";
import type { Assessment, Severity } from "../detection/index.ts";

// What one assessment changes for a topic's trend, and which event (if any) it publishes. Pure: the engine applies
// it to the trend row, the detection evaluation replays it in memory.

export type PublishedSeverity = Exclude<Severity, "none">;

/** The part of a trend row that decides events. */
export interface TrendState {
  status: "active" | "ended";
  /** The severity last published. */
  severity: PublishedSeverity;
  /** The velocity last published. */
  publishedVelocity: number;
  /** A different severity seen since `pendingSince`, not yet held long enough to publish. */
  pendingSeverity: PublishedSeverity | null;
  pendingSince: Date | null;
  /** When the last trend.velocity_changed was published. */
  velocityEventAt: Date | null;
}

export interface EventRules {
  /** A new velocity event needs the velocity to move by this fraction of the published one (and >= 1 mention/h). */
  velocityEventStep: number;
  /** At most one trend.velocity_changed per trend per this many seconds. */
  velocityEventMinSeconds: number;
  /** A severity change is published only once the new severity has held for this long (hysteresis). */
  severityHoldSeconds: number;
}

export const DEFAULT_EVENT_RULES: EventRules = Object.freeze({ velocityEventStep: 0.5, velocityEventMinSeconds: 10800, severityHoldSeconds: 1800 });

export interface Decision {
  status: "active" | "ended";
  event?: TrendEvent["type"];
  state: TrendState;
}

/**
 * The next state of a topic's trend after assessment `a` made at `now` (the time of the pass), or null when there is
 * nothing to record (no trend, none starting).
 * - trend.detected: the topic becomes a trend (none before, or the previous one ended);
 * - trend.severity_changed: the severity differs from the published one and every assessment since it first differed
 *   gave that same severity for at least severityHoldSeconds (a severity that flickers publishes nothing);
 * - trend.velocity_changed: the velocity moved by velocityEventStep since the last published one, at most once per
 *   velocityEventMinSeconds per trend, from closed buckets only, and never in the same pass as another event.
 * A trend ends when the topic is back to dormant; the published severity is kept for the record.
 */
export function decide(state: TrendState | undefined, a: Assessment, rules: EventRules, now: Date): Decision | null {
  if (!a.isTrend) {
    if (!state || state.status === "ended") return null;
    const status = a.stage === "dormant" ? "ended" : "active";
    return { status, state: { ...state, status, pendingSeverity: null, pendingSince: null } };
  }
  const severity = a.severity as PublishedSeverity;
  if (!state || state.status === "ended") {
    return {
      status: "active", event: "trend.detected",
      state: { status: "active", severity, publishedVelocity: a.velocity, pendingSeverity: null, pendingSince: null, velocityEventAt: null },
    };
  }
  if (severity !== state.severity) {
    if (state.pendingSeverity !== severity || !state.pendingSince) {
      return { status: "active", state: { ...state, pendingSeverity: severity, pendingSince: now } };
    }
    if (now.getTime() - state.pendingSince.getTime() >= rules.severityHoldSeconds * 1000) {
      return {
        status: "active", event: "trend.severity_changed",
        state: { ...state, severity, publishedVelocity: a.velocity, pendingSeverity: null, pendingSince: null },
      };
    }
    return { status: "active", state };
  }
  const settled = { ...state, pendingSeverity: null, pendingSince: null };
  const step = Math.max(rules.velocityEventStep * Math.abs(state.publishedVelocity), 1);
  const rested = !state.velocityEventAt || now.getTime() - state.velocityEventAt.getTime() >= rules.velocityEventMinSeconds * 1000;
  // Only closed buckets: a bucket in progress projects its velocity from a few minutes, too noisy to announce.
  if (rested && a.observed === 1 && Math.abs(a.velocity - state.publishedVelocity) >= step) {
    return { status: "active", event: "trend.velocity_changed", state: { ...settled, publishedVelocity: a.velocity, velocityEventAt: now } };
  }
  return { status: "active", state: settled };
}
