import type { PollOutcome, SocialConnectionState, SocialContext } from "../kind.ts";
import { quotaJson } from "../quota-json.ts";
import { ProviderError, type Observation, type QuotaState } from "../types.ts";
import { YouTubeClient } from "./client.ts";
import { QuotaLedger, type QuotaSnapshot } from "./quota.ts";
import type { YouTubeConnectionOptions } from "./schemas.ts";

/** Per term: each followed video's last engagement total, the hour (UTC) of its last signal, and when it was last seen. */
type YouTubeCursor = Record<string, { videos?: Record<string, { total: number; hour: string | null; seen: string }> }>;

/** What the connections of one Cloud project share: the day's ledger, and how many terms each polls (for pacing). */
interface ProjectQuota { ledger?: QuotaSnapshot; pollers?: Record<string, { terms: number; seen: string }> }
/** A connection that has not polled the project for this long (deleted, moved to another key) no longer paces it. */
const POLLER_TTL_MS = 86_400_000;

/**
 * When the next poll may run so that the day's search calls last until they reset (midnight Pacific): the polls the
 * calls left allow (one search per term each, `terms` counting every connection on the project), spread evenly over
 * the time left. Without it a 5-minute interval spends a term's 100 daily searches in about 8 hours and the topic goes
 * dark until midnight.
 */
export function pacedUntil(ledger: QuotaLedger, terms: number, now: Date): Date {
  const s = ledger.state("search.list", 0);
  const polls = Math.floor(s.remaining! / Math.max(1, terms));
  return polls <= 0 ? s.resetAt! : new Date(now.getTime() + (s.resetAt!.getTime() - now.getTime()) / polls);
}

const hourOf = (d: Date) => new Date(Math.floor(d.getTime() / 3_600_000) * 3_600_000).toISOString().slice(0, 16) + "Z";

/**
 * One search page per term (videos published in the last published_within_days days) plus their statistics.
 * A video's engagement is a running total, so the signal is the increase since the last reading kept in the cursor,
 * with id `${videoId}@${hour}` (the hour it was measured, UTC): at most one signal per video and hour. A video seen
 * for the first time counts its whole total (it is recent). A poll within an hour that already has a signal for the
 * video emits nothing and keeps the old reading, so the next hour carries the whole increase. Units are counted by a
 * QuotaLedger kept per Cloud project (`sharedQuota`, see youtubeQuotaProject), so the count survives restarts and is
 * shared by every connection on the project; the connection's `quota.ledger` shows it as of its last poll.
 */
export async function pollYouTube(ctx: SocialContext, conn: SocialConnectionState): Promise<PollOutcome> {
  const now = ctx.now;
  const options = conn.options as YouTubeConnectionOptions;
  const ledger = new QuotaLedger({ now: () => now }); // one clock for the day, the reset and the pacing
  const shared = (conn.sharedQuota ?? {}) as ProjectQuota;
  // The connection's own ledger seeds a project that has none yet (ledgers were kept per connection before).
  const saved = shared.ledger ?? (conn.quota as { ledger?: QuotaSnapshot }).ledger;
  if (saved) ledger.restore(saved);
  const pollers = Object.fromEntries(Object.entries(shared.pollers ?? {})
    .filter(([id, p]) => id !== conn.id && Math.abs(now.getTime() - Date.parse(p.seen)) < POLLER_TTL_MS));
  pollers[conn.id] = { terms: conn.terms.length, seen: now.toISOString() };
  const projectTerms = Object.values(pollers).reduce((n, p) => n + p.terms, 0);
  const yt = new YouTubeClient(ctx, { apiKey: conn.credentials.api_key, ledger, now: () => now });
  const cursor: YouTubeCursor = { ...conn.cursor };
  const observations: Observation[] = [];
  let last: { search: QuotaState; videos: QuotaState } | undefined;
  const out = (error?: ProviderError): PollOutcome => ({
    observations, cursor, error, notBefore: pacedUntil(ledger, projectTerms, now),
    quota: { ledger: ledger.snapshot(), last: last ? { search: quotaJson(last.search), videos: quotaJson(last.videos) } : (conn.quota.last ?? null) },
    sharedQuota: { ledger: ledger.snapshot(), pollers } satisfies ProjectQuota,
  });
  const days = options.published_within_days ?? 2;
  const hour = hourOf(now);
  for (const term of conn.terms) {
    let page;
    try {
      page = await yt.topicMomentum({ q: term, publishedAfter: new Date(now.getTime() - days * 86_400_000), regionCode: options.region_code, observedAt: now });
    } catch (e) {
      if (e instanceof ProviderError) return out(e);
      throw e;
    }
    last = page.quota;
    const videos = { ...cursor[term]?.videos };
    for (const o of page.items) {
      const prev = videos[o.externalId];
      const delta = prev ? o.count - prev.total : o.count;
      if (prev && prev.hour === hour) { prev.seen = now.toISOString(); continue; }
      if (delta > 0) {
        observations.push({ ...o, externalId: `${o.externalId}@${hour}`, count: delta });
        videos[o.externalId] = { total: o.count, hour, seen: now.toISOString() };
      } else {
        videos[o.externalId] = { total: o.count, hour: prev?.hour ?? null, seen: now.toISOString() };
      }
    }
    // Forget videos not seen for longer than they can still be found.
    for (const [id, v] of Object.entries(videos)) if (Date.parse(v.seen) < now.getTime() - (days + 1) * 86_400_000) delete videos[id];
    cursor[term] = { videos };
  }
  return out();
}
