import type { TrendEvent } from "@trendgate/contracts";
import { inRecoveryWindow } from "@trendgate/trends";
import { opensItem } from "./intake.ts";
import type { OperatorSettings } from "./settings.ts";

/**
 * Chat settings replayed over stored trend events (oldest first): the items they would have opened, one per trend,
 * at the first event that opens one (intake's rule, recovery window included). Reopening a resolved item depends on
 * when a person resolved it, so a backtest counts each trend's first opening only. A history replayed a page at a
 * time passes the same `opened` (the trends that opened one in earlier pages) with each page.
 */
export function previewChatItems(
  settings: Pick<OperatorSettings, "minSeverity" | "categories" | "recoveryWindowMinutes">, events: { event: TrendEvent; at: Date }[], opened = new Set<string>(),
) {
  const items: { event: TrendEvent; at: Date }[] = [];
  for (const p of events) {
    if (!opened.has(p.event.trend_id) && opensItem(settings, p.event) && !inRecoveryWindow(settings, p.event, p.at)) {
      opened.add(p.event.trend_id);
      items.push(p);
    }
  }
  return items;
}
