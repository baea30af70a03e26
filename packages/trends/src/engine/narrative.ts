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
}

const round = (n: number) => (Math.abs(n) >= 10 ? Math.round(n) : Math.round(n * 10) / 10);

/** At most TREND_EVENT_LIMITS.summary characters whatever the name and category ("…" marks a cut). */
export function summaryOf(t: TrendFacts, bucketSeconds: number): string {
  const perHour = (n: number) => round((n * 3600) / bucketSeconds);
  const ratio = t.baseline > 0 ? `${round(t.current / t.baseline)}x its usual rate` : "well above its usual rate";
  return clipText(`"${clipText(t.name, TREND_EVENT_LIMITS.trendName)}" (${t.category}) is ${t.stage} at ${ratio}: ${perHour(t.current)} mentions/h against ${perHour(t.baseline)} expected, ` +
    `${round(t.velocity)} mentions/h above baseline (severity ${t.severity}).`, TREND_EVENT_LIMITS.summary);
}

/** What a marketing or ops team would do next, by severity and lifecycle stage. */
export function nextStepsOf(t: Pick<TrendFacts, "severity" | "stage" | "category">): string[] {
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

/** The facts of a trend; its name is held to TREND_EVENT_LIMITS.trendName ("…" marks a cut), so the summary that quotes it stays short. */
export const factsOf = (name: string, category: string, a: Assessment, severity: string): TrendFacts => ({
  name: clipText(name, TREND_EVENT_LIMITS.trendName), category, severity, stage: a.stage, velocity: a.velocity, current: a.current, baseline: a.baseline,
});
