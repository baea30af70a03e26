import { setImmediate as nextTurn } from "node:timers/promises";
import { SubscriptionReplay, type BacktestRules, type PastEvent } from "@trendgate/webhooks";
import { severityRank, type ChatBacktest, type Severity, type TrendEvent, type WebhookBacktest } from "@trendgate/contracts";
import { trendEventsPage, type StoredTrendEvent } from "@trendgate/db";
import { previewChatItems, type OperatorSettings, type PreviewRoute } from "@trendgate/operator";
import { anomalousAt, detectionConfigFrom } from "@trendgate/trends";
import type { Config } from "@trendgate/config";
import type { Db } from "@trendgate/db";

// Backtests: what a subscription (or chat settings) would have received over the account's stored history. The
// detector's output over that history is the trend events its passes published (at the production cadence, from the
// bucket in progress too: a re-detection from stored hourly buckets could not reproduce those); the detector is run
// again only where a rule needs a fact the events do not carry: whether a trend was still anomalous at the end of a
// trigger window (anomalousAt, from the stored buckets).
//
// Bounded: the history is read a page at a time and replayed as it comes, counting deliveries per day and per trend
// instead of keeping them; it stops at BACKTEST_MAX_EVENTS events or after BACKTEST_MAX_SECONDS with an answer marked
// `truncated`. This runs on a backtest thread (./thread.ts), off the event loop that serves requests.

const DAY_MS = 86_400_000;
const MAX_TRENDS = 100;
/**
 * Events per page; the next page is read while one is replayed. On the backtest thread a long stretch of replay holds
 * up no request, so pages are large: a windowed 14-day preview took 5.7 s with pages of 1,000 and 8.2 s with 250
 * (bench/backtest.ts).
 */
const PAGE = 1000;
export interface ReplayDeps { db: Db; config: Config }
type Truncation = WebhookBacktest["truncated_reason"];

/**
 * Hands the account's events published since `from` to `take`, oldest first, a page at a time, until the end of
 * the history, BACKTEST_MAX_EVENTS events or BACKTEST_MAX_SECONDS. `to`: `now`, or the last event replayed when
 * it stopped early.
 */
async function replayHistory(deps: ReplayDeps, accountId: string, from: Date, now: Date, take: (page: StoredTrendEvent[]) => Promise<void>) {
  const { BACKTEST_MAX_EVENTS: maxEvents, BACKTEST_MAX_SECONDS: maxSeconds } = deps.config;
  const deadline = Date.now() + maxSeconds * 1000;
  let after = { publishedAt: from, id: "" };
  let events = 0;
  const stop = (truncated: Truncation) => ({ to: truncated ? after.publishedAt : now, events, truncated });
  // One more than the cap allows tells whether the history goes on past it. A read is marked handled as it starts:
  // one that fails while the page before it is replayed is reported when it is awaited, not as unhandled.
  const read = (from: typeof after, seen: number) => {
    const p = trendEventsPage(deps.db, accountId, from, Math.min(PAGE, maxEvents - seen + 1));
    p.catch(() => {});
    return p;
  };
  let next = read(after, 0);
  for (;;) {
    const room = maxEvents - events;
    const page = await next;
    const full = page.length === PAGE;
    const capped = page.length > room;
    if (capped) page.length = room;
    const more = !capped && full && Date.now() <= deadline;
    if (more) next = read(page[page.length - 1], events + page.length); // read while this page is replayed
    if (page.length) {
      await take(page);
      events += page.length;
      after = page[page.length - 1];
    }
    if (capped) return stop("event_limit");
    if (!full) return stop(null);
    if (!more) return stop("time_limit");
    await nextTurn();
  }
}

const pastEvents = (page: StoredTrendEvent[]): PastEvent[] => page.map((s) => ({ event: s.event, at: s.publishedAt }));
const topicsOf = (page: StoredTrendEvent[]) => new Map(page.map((s) => [s.event.trend_id, s.topicId]));

/** Deliveries (or opened items) counted per UTC day and per trend as they come, in order of time. */
class Tally {
  private readonly days = new Map<string, number>();
  private readonly byTrend = new Map<string, { trend_id: string; trend_name: string; category: string; severity: Severity; deliveries: number; first_at: string }>();
  n = 0;

  add(e: TrendEvent, at: Date) {
    this.n++;
    const day = at.toISOString().slice(0, 10);
    this.days.set(day, (this.days.get(day) ?? 0) + 1);
    const t = this.byTrend.get(e.trend_id);
    if (!t) this.byTrend.set(e.trend_id, { trend_id: e.trend_id, trend_name: e.trend_name, category: e.category, severity: e.severity, deliveries: 1, first_at: at.toISOString() });
    else {
      t.deliveries++;
      if (severityRank(e.severity) > severityRank(t.severity)) t.severity = e.severity;
    }
  }

  /** Every UTC day from `from` to `to`, each with its count. */
  perDay(from: Date, to: Date) {
    const out: { date: string; n: number }[] = [];
    for (let d = Math.floor(from.getTime() / DAY_MS); d <= Math.floor(to.getTime() / DAY_MS); d++) {
      const date = new Date(d * DAY_MS).toISOString().slice(0, 10);
      out.push({ date, n: this.days.get(date) ?? 0 });
    }
    return out;
  }

  trends() {
    return [...this.byTrend.values()];
  }
}

export async function replayWebhook(deps: ReplayDeps, accountId: string, rules: BacktestRules, days: number, now: Date): Promise<WebhookBacktest> {
  const detection = detectionConfigFrom(deps.config);
  const from = new Date(now.getTime() - days * DAY_MS);
  const tally = new Tally();
  let until = now.getTime(); // a delivery due after the end of the replay (a digest, a trigger window's) has not gone yet
  // The detector's answer for a firing a trigger window holds: anomalous at the window's end? (No topic: no answer.)
  const topics = new Map<string, string>();
  const lasted = async (firings: PastEvent[]) => {
    const asked = firings.filter((p) => topics.has(p.event.trend_id));
    const answers = await anomalousAt(deps.db, asked.map((p) => ({ topicId: topics.get(p.event.trend_id)!, at: new Date(p.at.getTime() + rules.triggerWindowMinutes * 60_000) })), detection);
    const yes = new Set(asked.filter((_, k) => answers[k]));
    return firings.map((p) => yes.has(p));
  };
  const replay = new SubscriptionReplay(rules, (d) => { if (d.at.getTime() <= until) tally.add(d.event, d.at); }, lasted);
  const h = await replayHistory(deps, accountId, from, now, async (page) => {
    for (const s of page) if (s.topicId) topics.set(s.event.trend_id, s.topicId);
    await replay.push(pastEvents(page));
  });
  until = h.to.getTime();
  await replay.finish();
  return {
    from: from.toISOString(), to: h.to.toISOString(), events_replayed: h.events, truncated: h.truncated !== null, truncated_reason: h.truncated,
    deliveries: tally.n, suppressed: replay.suppressed,
    per_day: tally.perDay(from, h.to).map(({ date, n }) => ({ date, deliveries: n })),
    trends: tally.trends().sort((a, b) => b.deliveries - a.deliveries || a.first_at.localeCompare(b.first_at)).slice(0, MAX_TRENDS),
  };
}

export type ChatBacktestSettings = Pick<OperatorSettings, "minSeverity" | "categories" | "recoveryWindowMinutes" | "triggerWindowMinutes">;

/** `routes`: the account's stored routing rules, in order (an event a rule matches opens an item whatever the settings say). */
export async function replayChat(deps: ReplayDeps, accountId: string, settings: ChatBacktestSettings, routes: PreviewRoute[], days: number, now: Date): Promise<ChatBacktest> {
  const detection = detectionConfigFrom(deps.config);
  const from = new Date(now.getTime() - days * DAY_MS);
  const tally = new Tally();
  const opened = new Set<string>();
  const routeOf = new Map<string, string | null>();
  let heldBack = 0;
  const h = await replayHistory(deps, accountId, from, now, async (page) => {
    const items = await previewChatItems(settings, pastEvents(page), opened, routes);
    for (const o of items) { tally.add(o.event, o.at); routeOf.set(o.event.trend_id, o.routeId); }
    if (!settings.triggerWindowMinutes) return;
    // Under a trigger window a card is posted only if the detector still finds its trend anomalous at the window's end.
    const topics = topicsOf(page);
    const checked = items.filter((o) => topics.get(o.event.trend_id));
    const lasted = await anomalousAt(deps.db, checked.map((o) => ({ topicId: topics.get(o.event.trend_id)!, at: new Date(o.at.getTime() + settings.triggerWindowMinutes * 60_000) })), detection);
    heldBack += items.length - lasted.filter(Boolean).length;
  });
  return {
    from: from.toISOString(), to: h.to.toISOString(), events_replayed: h.events, truncated: h.truncated !== null, truncated_reason: h.truncated,
    items_opened: tally.n, cards_held_back: heldBack,
    per_day: tally.perDay(from, h.to).map(({ date, n }) => ({ date, items_opened: n })),
    trends: tally.trends().map(({ deliveries: _, ...t }) => ({ ...t, route_id: routeOf.get(t.trend_id) ?? null })).sort((a, b) => b.first_at.localeCompare(a.first_at)).slice(0, MAX_TRENDS),
  };
}
