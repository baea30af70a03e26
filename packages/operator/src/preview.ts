import type { TrendEvent } from "@trendgate/contracts";
import type { OperatorRouteRow } from "@trendgate/db";
import { inRecoveryWindow } from "@trendgate/trends";
import { itemRouteOf } from "./intake.ts";
import type { OperatorSettings } from "./settings.ts";

/** A stored routing rule as a backtest needs it (plain data: it crosses to a backtest thread). */
export type PreviewRoute = Pick<OperatorRouteRow, "id" | "match">;

/** An item the settings and rules would have opened, and the rule it would open under (null: the default route). */
export interface PreviewItem {
  event: TrendEvent;
  at: Date;
  routeId: string | null;
}

/**
 * Chat settings and the account's routing rules replayed over stored trend events (oldest first): the items they
 * would have opened, one per trend, at the first event that opens one (intake's rule: the first routing rule that
 * matches, else the default route's settings; the recovery window included). A rule's `sources` match the item's
 * source (trends) only: the signal sources of the trend's last 24 hours are not replayed. Reopening a resolved item
 * depends on when a person resolved it, so a backtest counts each trend's first opening only. A history replayed a
 * page at a time passes the same `opened` (the trends that opened one in earlier pages) with each page.
 */
export async function previewChatItems(
  settings: Pick<OperatorSettings, "minSeverity" | "categories" | "recoveryWindowMinutes">, events: { event: TrendEvent; at: Date }[],
  opened = new Set<string>(), routes: readonly PreviewRoute[] = [],
): Promise<PreviewItem[]> {
  const items: PreviewItem[] = [];
  for (const p of events) {
    const e = p.event;
    if (opened.has(e.trend_id) || inRecoveryWindow(settings, e, p.at)) continue;
    // Without signal sources a sources-only rule matches no trend event.
    const route = await itemRouteOf(routes, settings, e);
    if (route === undefined) continue;
    opened.add(e.trend_id);
    items.push({ ...p, routeId: route?.id ?? null });
  }
  return items;
}
