import { replaySubscription, windowChecks, type BacktestRules, type PastEvent } from "@trendgate/connector-webhook";
import { severityRank, type ChatBacktest, type Severity, type TrendEvent, type WebhookBacktest } from "@trendgate/contracts";
import { trendEventsSince, type Db } from "@trendgate/db";
import { previewChatItems, type OperatorSettings } from "@trendgate/operator";
import { anomalousAt, type DetectionConfig } from "@trendgate/trends";

// Backtests: what a subscription (or chat settings) would have received over the account's stored history. The
// detector's output over that history is the trend events its passes published (at the production cadence, from the
// bucket in progress too: a re-detection from stored hourly buckets could not reproduce those); the detector is run
// again only where a rule needs a fact the events do not carry: whether a trend was still anomalous at the end of a
// trigger window (anomalousAt, from the stored buckets).

const DAY_MS = 86_400_000;
const MAX_TRENDS = 100;

interface Window { from: Date; to: Date; events: PastEvent[]; topics: Map<string, string | null> }

async function history(db: Db, accountId: string, days: number, now: Date): Promise<Window> {
  const from = new Date(now.getTime() - days * DAY_MS);
  const stored = await trendEventsSince(db, accountId, from);
  return {
    from, to: now,
    events: stored.map((s) => ({ event: s.event, at: s.publishedAt })),
    topics: new Map(stored.map((s) => [s.event.trend_id, s.topicId])),
  };
}

/** Every UTC day from `from` to `to`, each with the count of `ats` on it. */
function perDay(from: Date, to: Date, ats: Date[]) {
  const counts = new Map<string, number>();
  for (let d = Math.floor(from.getTime() / DAY_MS); d <= Math.floor(to.getTime() / DAY_MS); d++) counts.set(new Date(d * DAY_MS).toISOString().slice(0, 10), 0);
  for (const at of ats) {
    const day = at.toISOString().slice(0, 10);
    if (counts.has(day)) counts.set(day, counts.get(day)! + 1);
  }
  return [...counts].map(([date, n]) => ({ date, n }));
}

function trendsOf(items: { event: TrendEvent; at: Date }[]) {
  const byTrend = new Map<string, { trend_id: string; trend_name: string; category: string; severity: Severity; deliveries: number; first_at: string }>();
  for (const { event: e, at } of items) {
    const t = byTrend.get(e.trend_id);
    if (!t) byTrend.set(e.trend_id, { trend_id: e.trend_id, trend_name: e.trend_name, category: e.category, severity: e.severity, deliveries: 1, first_at: at.toISOString() });
    else {
      t.deliveries++;
      if (severityRank(e.severity) > severityRank(t.severity)) t.severity = e.severity;
    }
  }
  return [...byTrend.values()];
}

export async function backtestWebhook(db: Db, accountId: string, rules: BacktestRules, days: number, detection: DetectionConfig, now = new Date()): Promise<WebhookBacktest> {
  const h = await history(db, accountId, days, now);
  // The detector's answer for each firing a trigger window holds: anomalous at the window's end?
  const checks = windowChecks(rules, h.events).filter((p) => h.topics.get(p.event.trend_id));
  const answers = await anomalousAt(db, checks.map((p) => ({ topicId: h.topics.get(p.event.trend_id)!, at: new Date(p.at.getTime() + rules.triggerWindowMinutes * 60_000) })), detection);
  const lasted = new Set(checks.filter((_, k) => answers[k]));
  const r = replaySubscription(rules, h.events, (p) => lasted.has(p));
  const delivered = r.deliveries.filter((d) => d.at <= now); // a digest due after now has not gone yet
  return {
    from: h.from.toISOString(), to: h.to.toISOString(), events_replayed: h.events.length,
    deliveries: delivered.length, suppressed: r.suppressed,
    per_day: perDay(h.from, h.to, delivered.map((d) => d.at)).map(({ date, n }) => ({ date, deliveries: n })),
    trends: trendsOf(delivered).sort((a, b) => b.deliveries - a.deliveries || a.first_at.localeCompare(b.first_at)).slice(0, MAX_TRENDS),
  };
}

export async function backtestChat(
  db: Db, accountId: string, settings: Pick<OperatorSettings, "minSeverity" | "categories" | "recoveryWindowMinutes" | "triggerWindowMinutes">, days: number,
  detection: DetectionConfig, now = new Date(),
): Promise<ChatBacktest> {
  const h = await history(db, accountId, days, now);
  const opened = previewChatItems(settings, h.events);
  // Under a trigger window a card is posted only if the detector still finds its trend anomalous at the window's end.
  const checked = settings.triggerWindowMinutes > 0 ? opened.filter((o) => h.topics.get(o.event.trend_id)) : [];
  const lasted = await anomalousAt(db, checked.map((o) => ({ topicId: h.topics.get(o.event.trend_id)!, at: new Date(o.at.getTime() + settings.triggerWindowMinutes * 60_000) })), detection);
  return {
    from: h.from.toISOString(), to: h.to.toISOString(), events_replayed: h.events.length, items_opened: opened.length,
    cards_held_back: settings.triggerWindowMinutes > 0 ? opened.length - lasted.filter(Boolean).length : 0,
    per_day: perDay(h.from, h.to, opened.map((o) => o.at)).map(({ date, n }) => ({ date, items_opened: n })),
    trends: trendsOf(opened).map(({ deliveries: _, ...t }) => t).sort((a, b) => b.first_at.localeCompare(a.first_at)).slice(0, MAX_TRENDS),
  };
}
