import { clipText, TREND_EVENT_LIMITS } from "@trendgate/contracts";
import type { Assessment } from "../detection/index.ts";

// Human-facing text of a trend: the summary and next steps sent with every trend event (and shown by the API).

export interface TrendFacts {
  name: string;
  category: string;
  severity: string;
  stage: string;
  velocity: number;
  current: number;
  baseline: number;
  /** Elapsed fraction of the bucket `current` was counted in (1, or absent: a closed bucket). */
  observed?: number;
  /** The trend is over (a trend.ended event). */
  ended?: boolean;
  /** The trend is cooling down (a trend.cooling event): it ends this many hours after its last anomalous bucket. */
  coolingEndsAfterHours?: number;
}

/** A bucket's count as detection projects it: what arrived so far plus the rest of the bucket at the expected rate. */
export const projectedCount = (current: number, observed: number, baseline: number) => current + (1 - observed) * baseline;

const round = (n: number) => (Math.abs(n) >= 10 ? Math.round(n) : Math.round(n * 10) / 10);

/**
 * At most TREND_EVENT_LIMITS.summary characters whatever the name and category ("…" marks a cut). Rates are stated
 * as computed: a closed bucket's count as mentions per hour, a bucket in progress as what arrived in its first
 * minutes and the rate it comes to with the rest of the bucket as usual.
 */
export function summaryOf(t: TrendFacts, bucketSeconds: number): string {
  const perHour = (n: number) => round((n * 3600) / bucketSeconds);
  const observed = t.observed ?? 1;
  const projected = projectedCount(t.current, observed, t.baseline);
  const name = `"${clipText(t.name, TREND_EVENT_LIMITS.trendName)}" (${t.category})`;
  let text: string;
  if (t.ended) {
    text = `${name} has ended: back to its usual rate, ${perHour(projected)} mentions/h against ${perHour(t.baseline)} expected (last severity ${t.severity}).`;
  } else if (t.coolingEndsAfterHours !== undefined) {
    text = `${name} is cooling: ${perHour(t.current)} mentions/h against ${perHour(t.baseline)} expected, no longer anomalous; it ends ${t.coolingEndsAfterHours} h after its last anomalous hour unless it rises again (severity ${t.severity}).`;
  } else {
    const ratio = t.baseline > 0 ? `${round(projected / t.baseline)}x its usual rate` : "well above its usual rate";
    const minutes = Math.round((observed * bucketSeconds) / 60);
    const rate = observed < 1
      ? `${round(t.current)} mentions in the first ${minutes} minutes (${perHour(projected)} mentions/h if the rest of the hour runs as usual) against ${perHour(t.baseline)}/h expected`
      : `${perHour(t.current)} mentions/h against ${perHour(t.baseline)} expected`;
    text = `${name} is ${t.stage} at ${ratio}: ${rate}, ${round(t.velocity)} mentions/h above baseline (severity ${t.severity}).`;
  }
  return clipText(text, TREND_EVENT_LIMITS.summary);
}

/** What a marketing or ops team would do next, by severity and lifecycle stage. */
export function nextStepsOf(t: Pick<TrendFacts, "severity" | "stage" | "category" | "ended">): string[] {
  if (t.ended) {
    return [`Close what this trend opened in ${t.category} (trend-specific spend, tickets, posts)`, "Keep the briefing for the record"]
      .map((s) => clipText(s, TREND_EVENT_LIMITS.nextStep));
  }
  const steps: string[] = [];
  if (t.stage === "emerging" || t.stage === "rising") steps.push(`Brief the content team on ${t.category} while the trend is still ${t.stage}`);
  if (t.severity === "high" || t.severity === "critical") {
    steps.push(`Raise ads targeting for the ${t.category} category (preview first, under strict safety)`);
    steps.push("Alert the on-call marketing operator in the team channel");
  } else {
    steps.push("Watch for a severity change before spending budget");
  }
  if (t.stage === "peaking") steps.push("Publish now: attention is at its peak");
  if (t.stage === "cooling") steps.push("Wind down trend-specific spend");
  return steps.slice(0, TREND_EVENT_LIMITS.nextSteps).map((s) => clipText(s, TREND_EVENT_LIMITS.nextStep));
}

/**
 * The facts of a trend as one assessment found it; its name is held to TREND_EVENT_LIMITS.trendName ("…" marks a
 * cut), so the summary that quotes it stays short. `stage`: the stage the trend is shown in ("dormant" once ended).
 */
export const factsOf = (name: string, category: string, a: Assessment, severity: string, stage: string = a.stage, ended = false): TrendFacts => ({
  name: clipText(name, TREND_EVENT_LIMITS.trendName), category, severity, stage, velocity: a.velocity, current: a.current, baseline: a.baseline,
  observed: a.observed, ended,
});
