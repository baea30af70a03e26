import crypto from "node:crypto";
import { setImmediate as nextTurn } from "node:timers/promises";
import { SubscriptionReplay, windowChecks, type BacktestRules, type PastEvent } from "@trendgate/connector-webhook";
import { severityRank, type ChatBacktest, type Severity, type TrendEvent, type WebhookBacktest } from "@trendgate/contracts";
import { trendEventsPage, type StoredTrendEvent } from "@trendgate/db";
import { previewChatItems, type OperatorSettings } from "@trendgate/operator";
import { releaseLock, tryLock } from "@trendgate/queues";
import { anomalousAt, detectionConfigFrom } from "@trendgate/trends";
import { ApiError } from "../http/api-error.ts";
import type { Deps } from "../deps.ts";

// Backtests: what a subscription (or chat settings) would have received over the account's stored history. The
// detector's output over that history is the trend events its passes published (at the production cadence, from the
// bucket in progress too: a re-detection from stored hourly buckets could not reproduce those); the detector is run
// again only where a rule needs a fact the events do not carry: whether a trend was still anomalous at the end of a
// trigger window (anomalousAt, from the stored buckets).
//
// Bounded, as one account's backtests share the gateway with every other account's requests: the history is read a
// page at a time (one short query each, a turn of the event loop between pages) and replayed as it comes, counting
// deliveries per day and per trend instead of keeping them; it stops at BACKTEST_MAX_EVENTS events or after
// BACKTEST_MAX_SECONDS with an answer marked `truncated`; and an account runs at most BACKTEST_CONCURRENCY_PER_ACCOUNT
// at once across the fleet (429 beyond).

const DAY_MS = 86_400_000;
const MAX_TRENDS = 100;
/**
 * Events per page. A page is replayed in one stretch of the event loop, which other accounts' requests wait behind:
 * measured beside 2 windowed backtests, another account's read p99 was 120-175 ms with pages of 1,000 and 50 ms with
 * 250 (bench/backtest.ts). The next page is read while one is replayed.
 */
const PAGE = 250;
/** How long a slot outlives the time budget: the page that ends past it, and the answer. */
const SLOT_MARGIN_MS = 30_000;

type BacktestDeps = Pick<Deps, "db" | "redis" | "config">;
type Truncation = WebhookBacktest["truncated_reason"];

/**
 * Hands the account's events published since `from` to `take`, oldest first, a page at a time, until the end of
 * the history, BACKTEST_MAX_EVENTS events or BACKTEST_MAX_SECONDS. `to`: `now`, or the last event replayed when
 * it stopped early.
 */
async function replayHistory(deps: BacktestDeps, accountId: string, from: Date, now: Date, take: (page: StoredTrendEvent[]) => Promise<void>) {
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

/**
 * Runs `fn` in one of the account's BACKTEST_CONCURRENCY_PER_ACCOUNT slots: leases in Redis (tryLock), so the limit
 * holds across every gateway, each lapsing on its own if its gateway dies mid-backtest. None free: 429.
 */
async function inSlot<T>({ redis, config }: BacktestDeps, accountId: string, fn: () => Promise<T>): Promise<T> {
  const slots = config.BACKTEST_CONCURRENCY_PER_ACCOUNT;
  const owner = crypto.randomUUID();
  let key: string | null = null;
  for (let i = 0; i < slots && !key; i++) {
    const k = `${config.QUEUE_PREFIX}:backtest:${accountId}:${i}`;
    if (await tryLock(redis, k, owner, config.BACKTEST_MAX_SECONDS * 1000 + SLOT_MARGIN_MS)) key = k;
  }
  if (!key) {
    throw new ApiError("too_many_backtests", `This account already has ${slots} backtest(s) running, the most it may at once; retry when one has finished`, {
      headers: { "Retry-After": "1" },
    });
  }
  try {
    return await fn();
  } finally {
    await releaseLock(redis, key, owner).catch(() => {}); // unreleased, it lapses
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

export async function backtestWebhook(deps: BacktestDeps, accountId: string, rules: BacktestRules, days: number, now = new Date()): Promise<WebhookBacktest> {
  return inSlot(deps, accountId, async () => {
    const detection = detectionConfigFrom(deps.config);
    const from = new Date(now.getTime() - days * DAY_MS);
    const tally = new Tally();
    let until = now.getTime(); // a delivery due after the end of the replay (a digest, a trigger window's) has not gone yet
    const replay = new SubscriptionReplay(rules, (d) => { if (d.at.getTime() <= until) tally.add(d.event, d.at); });
    const h = await replayHistory(deps, accountId, from, now, async (page) => {
      const events = pastEvents(page);
      const topics = topicsOf(page);
      // The detector's answer for each firing a trigger window holds: anomalous at the window's end?
      const checks = windowChecks(rules, events).filter((p) => topics.get(p.event.trend_id));
      const answers = await anomalousAt(deps.db, checks.map((p) => ({ topicId: topics.get(p.event.trend_id)!, at: new Date(p.at.getTime() + rules.triggerWindowMinutes * 60_000) })), detection);
      const lasted = new Set(checks.filter((_, k) => answers[k]));
      replay.push(events, (p) => lasted.has(p));
    });
    until = h.to.getTime();
    replay.finish();
    return {
      from: from.toISOString(), to: h.to.toISOString(), events_replayed: h.events, truncated: h.truncated !== null, truncated_reason: h.truncated,
      deliveries: tally.n, suppressed: replay.suppressed,
      per_day: tally.perDay(from, h.to).map(({ date, n }) => ({ date, deliveries: n })),
      trends: tally.trends().sort((a, b) => b.deliveries - a.deliveries || a.first_at.localeCompare(b.first_at)).slice(0, MAX_TRENDS),
    };
  });
}

export async function backtestChat(
  deps: BacktestDeps, accountId: string, settings: Pick<OperatorSettings, "minSeverity" | "categories" | "recoveryWindowMinutes" | "triggerWindowMinutes">, days: number,
  now = new Date(),
): Promise<ChatBacktest> {
  return inSlot(deps, accountId, async () => {
    const detection = detectionConfigFrom(deps.config);
    const from = new Date(now.getTime() - days * DAY_MS);
    const tally = new Tally();
    const opened = new Set<string>();
    let heldBack = 0;
    const h = await replayHistory(deps, accountId, from, now, async (page) => {
      const items = previewChatItems(settings, pastEvents(page), opened);
      for (const o of items) tally.add(o.event, o.at);
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
      trends: tally.trends().map(({ deliveries: _, ...t }) => t).sort((a, b) => b.first_at.localeCompare(a.first_at)).slice(0, MAX_TRENDS),
    };
  });
}
