import type { PollOutcome, SocialConnectionState, SocialContext } from "../kind.ts";
import { quotaJson, spentUntil } from "../quota-json.ts";
import { ProviderError, type Observation, type QuotaState } from "../types.ts";
import { RedditClient } from "./client.ts";
import { REDDIT_AUTH_URL } from "./manifest.ts";
import type { RedditOptions } from "./schemas.ts";

/** Per `r/{subreddit}:{term}`: the newest post time seen. */
type RedditCursor = Record<string, { newest_at?: string }>;

/** An app-only token, then each term in each subreddit, newest first, until a post already seen. */
export async function pollReddit(ctx: SocialContext, conn: SocialConnectionState): Promise<PollOutcome> {
  const options = conn.options as RedditOptions;
  const authBaseUrl = options.auth_base_url ?? (ctx.env[REDDIT_AUTH_URL.env] || REDDIT_AUTH_URL.default);
  const reddit = new RedditClient(ctx, { authBaseUrl, userAgent: options.user_agent });
  const cursor: RedditCursor = { ...conn.cursor };
  const observations: Observation[] = [];
  let last: QuotaState | undefined;
  const out = (error?: ProviderError): PollOutcome => ({
    observations, cursor, error, quota: last ? { last: quotaJson(last) } : conn.quota, notBefore: last && spentUntil(last),
  });
  try {
    const { accessToken } = await reddit.clientCredentialsToken(conn.credentials.client_id, conn.credentials.client_secret);
    for (const term of conn.terms) {
      for (const subreddit of options.subreddits) {
        const key = `r/${subreddit}:${term}`;
        const seenUntil = cursor[key]?.newest_at ? Date.parse(cursor[key].newest_at!) : 0;
        let newest = seenUntil;
        let after: string | undefined;
        for (let p = 0; p < (options.max_pages ?? 2); p++) {
          const page = await reddit.searchSubreddit({ subreddit, query: term, topic: term, sort: "new", t: "day", after }, accessToken);
          last = page.quota;
          const fresh = page.items.filter((o) => o.observedAt.getTime() > seenUntil);
          observations.push(...fresh);
          for (const o of fresh) newest = Math.max(newest, o.observedAt.getTime());
          if (fresh.length < page.items.length || !page.next) break;
          after = page.next;
        }
        if (newest > 0) cursor[key] = { newest_at: new Date(newest).toISOString() };
      }
    }
  } catch (e) {
    if (e instanceof ProviderError) return out(e);
    throw e;
  }
  return out();
}
