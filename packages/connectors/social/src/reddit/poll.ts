import type { PollOutcome, SocialConnectionState, SocialContext } from "../kind.ts";
import { pauseBefore, rotation, spentUntil } from "../pacing.ts";
import { quotaJson } from "../quota-json.ts";
import { ProviderError, type Observation, type QuotaState } from "../types.ts";
import { appToken, forgetAppToken } from "./app-token.ts";
import { RedditClient, type RedditSearchParams } from "./client.ts";
import { REDDIT_AUTH_URL } from "./manifest.ts";
import type { RedditOptions } from "./schemas.ts";

/** Per `r/{subreddit}:{term}`. */
type RedditCursor = Record<string, SearchCursor>;
/**
 * Per search: the newest post time counted. While more new posts than max_pages pages arrived between two polls are
 * being read, `after` is the listing position to read on from and `pending_newest` the newest of them: the next
 * polls read on (older pages) until they reach `newest_at`, which then moves to `pending_newest`.
 */
type SearchCursor = { newest_at?: string; after?: string; pending_newest?: string };

/**
 * How late a post may reach Reddit's search index after it was created. Each search reads again from this long
 * before the newest post it saw (signals are deduplicated on the post id, so a post read twice counts once).
 */
export const INDEX_LAG_MS = 10 * 60_000;

/** A subreddit's own refusal (private, banned, gone): its searches are skipped, the others run. */
const aboutTheSubreddit = (e: ProviderError) => e.kind === "bad_request" || e.kind === "not_found";

/**
 * An app-only token, then each term in each subreddit, newest first, until a post already seen; round-robin from
 * where the last poll stopped. One subreddit that refuses does not stop the others: the poll reports it as a warning
 * (the connection stays active) unless every subreddit refused.
 */
export async function pollReddit(ctx: SocialContext, conn: SocialConnectionState): Promise<PollOutcome> {
  const options = conn.options as RedditOptions;
  const authBaseUrl = options.auth_base_url ?? (ctx.env[REDDIT_AUTH_URL.env] || REDDIT_AUTH_URL.default);
  const reddit = new RedditClient(ctx, { authBaseUrl, userAgent: options.user_agent });
  const { resume_at: _legacy, ...seen } = conn.cursor as RedditCursor & { resume_at?: unknown }; // kept here before pacing.ts
  const cursor: RedditCursor = { ...seen };
  const observations: Observation[] = [];
  const refused = new Map<string, ProviderError>();
  let last: QuotaState | undefined;
  const out = (error?: ProviderError): PollOutcome => ({
    observations, cursor, error, quota: last ? { last: quotaJson(last) } : conn.quota, notBefore: last && spentUntil(last),
    ...(refused.size && !error ? { warning: [...refused].map(([sub, e]) => `r/${sub} skipped: ${e.message}`).join("; ") } : {}),
  });
  // Searches: terms x subreddits, round-robin from where the last poll stopped (pacing.ts).
  const searches = conn.terms.flatMap((term) => options.subreddits.map((subreddit: string) => ({ subreddit, term })));
  const order = rotation(searches.length, conn.resumeAt);
  let at = order[0] ?? 0;
  try {
    const { client_id: clientId, client_secret: secret } = conn.credentials;
    let token = await appToken(reddit, authBaseUrl, clientId, secret);
    const search = async (params: RedditSearchParams) => {
      try {
        return await reddit.searchSubreddit(params, token.accessToken);
      } catch (e) {
        // A held token Reddit refused before its time (revoked): once more with a new one.
        if (!token.cached || !(e instanceof ProviderError) || e.kind !== "unauthorized") throw e;
        forgetAppToken(authBaseUrl, clientId, secret);
        token = await appToken(reddit, authBaseUrl, clientId, secret);
        return reddit.searchSubreddit(params, token.accessToken);
      }
    };
    for (const i of order) {
      at = i;
      const { subreddit, term } = searches[at];
      if (refused.has(subreddit)) continue;
      // Paced by Reddit's own window: stop before a search it cannot pay for; resume here once the window resets.
      const pause = pauseBefore(last, options.max_pages ?? 2);
      if (pause) return { ...out(), notBefore: pause, resumeAt: at };
      const key = `r/${subreddit}:${term}`;
      const c: SearchCursor = cursor[key] ?? {};
      const seenUntil = c.newest_at ? Date.parse(c.newest_at) : 0;
      // Re-read the last INDEX_LAG_MS before it: posts reach Reddit's search index late, after newer ones were seen.
      const from = seenUntil > 0 ? seenUntil - INDEX_LAG_MS : 0;
      let newest = c.pending_newest ? Date.parse(c.pending_newest) : seenUntil;
      let after = c.after;
      let more = false;
      try {
        for (let p = 0; p < (options.max_pages ?? 2); p++) {
          const page = await search({ subreddit, query: term, topic: term, sort: "new", t: "day", after });
          last = page.quota;
          const fresh = page.items.filter((o) => o.observedAt.getTime() > from);
          observations.push(...fresh);
          for (const o of fresh) newest = Math.max(newest, o.observedAt.getTime());
          more = fresh.length === page.items.length && !!page.next;
          if (!more) break;
          after = page.next!;
        }
      } catch (e) {
        if (!(e instanceof ProviderError) || !aboutTheSubreddit(e)) throw e;
        refused.set(subreddit, e);
        more = false;
      }
      // Pages left that are all new (a burst bigger than max_pages pages, and not a first poll): read on next time.
      if (more && seenUntil > 0) cursor[key] = { newest_at: c.newest_at, after, pending_newest: new Date(newest).toISOString() };
      else if (newest > 0) cursor[key] = { newest_at: new Date(newest).toISOString() };
    }
  } catch (e) {
    if (!(e instanceof ProviderError)) throw e;
    return { ...out(e), resumeAt: at };
  }
  if (refused.size === options.subreddits.length) return out(refused.values().next().value);
  return out();
}
