import type { TrendEvent } from "@trendgate/contracts";
import { inRecoveryWindow } from "@trendgate/trends";
import { opensItem } from "./intake.ts";
import type { OperatorSettings } from "./settings.ts";

/**
 * Chat settings replayed over stored trend events (oldest first): the items they would have opened, one per trend,
 * at the first event that opens one (intake's rule, recovery window included). Reopening a resolved item depends on
 * when a person resolved it, so a backtest counts each trend's first opening only.
 */
export function previewChatItems(settings: Pick<OperatorSettings, "minSeverity" | "categories" | "recoveryWindowMinutes">, events: { event: TrendEvent; at: Date }[]) {
  const opened = new Map<string, { event: TrendEvent; at: Date }>();
  for (const p of events) {
    if (!opened.has(p.event.trend_id) && opensItem(settings, p.event) && !inRecoveryWindow(settings, p.event, p.at)) opened.set(p.event.trend_id, p);
  }
  return [...opened.values()];
}
