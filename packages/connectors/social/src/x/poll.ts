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

/** When a post was created: X's ids are Snowflakes, milliseconds since X's epoch in the bits above the lowest 22. */
const postedAt = (id: string) => Number((BigInt(id) >> 22n) + 1_288_834_974_657n);
/**
 * Recent search refuses (400) a since_id from before its 7-day window. An hour short of 7 days leaves room for
 * clock skew and for the time a poll takes; posts in that last hour before the edge are not read.
 */
const WINDOW_MS = 7 * 24 * 3_600_000 - 3_600_000;

/** A term X refused (a malformed query, one over X's length): only that term's search fails; 400 is X's invalid-request. */
const aboutTheTerm = (e: ProviderError) => e.kind === "bad_request" && e.detail.status === 400;

/**
 * Recent search per term from the newest post seen (since_id), up to max_pages pages of page_size per poll. A burst
 * larger than that is not cut off: the rest is read by the next polls (oldest last), so every post counts, late.
 * A since_id older than X's window (a term quiet for a week, a connection that waited in needs_reauth) is sent as
 * start_time instead. A term X refuses is skipped with the reason as a warning (the others are polled, the connection
 * stays active) unless every term was refused.
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
  const refused = new Map<string, ProviderError>();
  const floor = ctx.now.getTime() - WINDOW_MS;
  let last: QuotaState | undefined;
  const out = (error?: ProviderError): PollOutcome => ({
    observations, cursor, error, quota: { last: last ? quotaJson(last) : (conn.quota.last ?? null), spend: { ...spend, cap } }, notBefore: last && spentUntil(last),
    ...(refused.size && !error ? { warning: [...refused].map(([term, e]) => `term "${term}" skipped: ${e.message}`).join("; ") } : {}),
  });
  // Round-robin from where the last poll stopped, paced by X's window (pacing.ts): a limit part way never starves
  // the later terms, and a search the window cannot pay for waits for its reset instead of drawing a 429.
  for (const i of rotation(conn.terms.length, conn.resumeAt)) {
    const term = conn.terms[i];
    let at: TermCursor = cursor[term] ?? {};
    // The unread rest of a burst fell out of the window: nothing of it can be read any more.
    if (at.until_id && postedAt(at.until_id) < floor) at = cursor[term] = at.newest ? { since_id: at.newest } : {};
    // Kept in the cursor (it still marks what was counted); X is asked from the window's start instead.
    const stale = at.since_id !== undefined && postedAt(at.since_id) < floor;
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
      res = await x.searchAll({
        query: term, topic: term, ...(stale ? { startTime: new Date(floor) } : { sinceId: at.since_id }), untilId: at.until_id, maxResults: pageSize, maxPages,
      }, conn.credentials.bearer_token);
    } catch (e) {
      if (!(e instanceof ProviderError)) throw e;
      if (!aboutTheTerm(e)) return { ...out(e), resumeAt: i };
      refused.set(term, e);
      continue;
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
    if (res.interrupted) {
      if (!aboutTheTerm(res.interrupted)) return { ...out(res.interrupted), resumeAt: i };
      refused.set(term, res.interrupted);
    }
  }
  if (refused.size === conn.terms.length) return out(refused.values().next().value);
  return out();
}
