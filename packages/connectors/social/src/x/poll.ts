import type { PollOutcome, SocialConnectionState, SocialContext } from "../kind.ts";
import { pauseBefore, rotation, spentUntil } from "../pacing.ts";
import { quotaJson } from "../quota-json.ts";
import { ProviderError, type Observation, type QuotaState } from "../types.ts";
import { XClient } from "./client.ts";
import { X_DEFAULT_DAILY_POSTS, type XOptions } from "./schemas.ts";

/**
 * Per term: the newest post id counted so far (since_id). While a burst is read over several polls (more posts than
 * max_pages x page_size arrived between two polls), `until_id` is the oldest post read of it and `newest` the newest:
 * the next poll reads on between since_id and until_id, and since_id moves to `newest` once that gap is empty.
 */
type TermCursor = { since_id?: string; until_id?: string; newest?: string };
type XCursor = Record<string, TermCursor>;
/** Posts read on one UTC day, kept in the status' `quota.spend`: the daily spend cap counts them. */
type Spend = { day: string; posts: number };

const newer = (a: string, b: string | undefined) => b === undefined || BigInt(a) > BigInt(b);
const older = (a: string, b: string | undefined) => b === undefined || BigInt(a) < BigInt(b);

/**
 * Recent search per term from the newest post seen (since_id), up to max_pages pages of page_size per poll. A burst
 * larger than that is not cut off: the rest is read by the next polls (oldest last), so every post counts, late.
 */
export async function pollX(ctx: SocialContext, conn: SocialConnectionState): Promise<PollOutcome> {
  const x = new XClient(ctx);
  const options = conn.options as XOptions;
  const cursor: XCursor = { ...conn.cursor };
  const today = ctx.now.toISOString().slice(0, 10);
  const kept = (conn.quota as { spend?: Spend }).spend;
  const spend: Spend = kept?.day === today ? { ...kept } : { day: today, posts: 0 };
  const cap = options.max_posts_per_day ?? X_DEFAULT_DAILY_POSTS;
  const observations: Observation[] = [];
  let last: QuotaState | undefined;
  const out = (error?: ProviderError): PollOutcome => ({
    observations, cursor, error, quota: { last: last ? quotaJson(last) : (conn.quota.last ?? null), spend: { ...spend, cap } }, notBefore: last && spentUntil(last),
  });
  // Round-robin from where the last poll stopped, paced by X's window (pacing.ts): a limit part way never starves
  // the later terms, and a search the window cannot pay for waits for its reset instead of drawing a 429.
  for (const i of rotation(conn.terms.length, conn.resumeAt)) {
    const term = conn.terms[i];
    const at: TermCursor = cursor[term] ?? {};
    const left = cap - spend.posts;
    if (left < 10) { // X's smallest page
      const midnight = new Date(`${today}T00:00:00Z`);
      midnight.setUTCDate(midnight.getUTCDate() + 1);
      return { resumeAt: i, ...out(new ProviderError("x", "quota_exhausted", `the daily read cap of ${cap} posts (options.max_posts_per_day) is reached; reading resumes at ${midnight.toISOString()}`, {
        status: null, resetAt: midnight, providerCode: "daily_read_cap",
      })) };
    }
    const pageSize = Math.min(options.page_size ?? 100, left);
    const maxPages = Math.max(1, Math.min(options.max_pages ?? 3, Math.floor(left / pageSize)));
    const pause = pauseBefore(last, maxPages);
    if (pause) return { ...out(), notBefore: pause, resumeAt: i };
    let res;
    try {
      res = await x.searchAll({ query: term, topic: term, sinceId: at.since_id, untilId: at.until_id, maxResults: pageSize, maxPages }, conn.credentials.bearer_token);
    } catch (e) {
      if (e instanceof ProviderError) return { ...out(e), resumeAt: i };
      throw e;
    }
    observations.push(...res.items);
    spend.posts += res.items.length;
    last = res.quota;
    let [newest, oldest] = [at.newest, at.until_id];
    for (const o of res.items) {
      if (newer(o.externalId, newest)) newest = o.externalId;
      if (older(o.externalId, oldest)) oldest = o.externalId;
    }
    if ((res.next || res.interrupted) && at.since_id !== undefined && oldest !== undefined) {
      // Posts remain between since_id and the oldest read (pages left, or paging stopped by an error): read on later.
      cursor[term] = { since_id: at.since_id, until_id: oldest, newest };
    } else if (!res.interrupted && newest !== undefined) {
      // Everything since since_id has been read: X returns only newer posts, so `newest` is past it. (A first poll
      // reads only its pages: the 7 days before it are not backfilled; one that stopped part way reads them again.)
      cursor[term] = { since_id: newest };
    }
    if (res.interrupted) return { ...out(res.interrupted), resumeAt: i };
  }
  return out();
}
