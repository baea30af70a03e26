import { ProviderError, type Observation, type Page, type ProviderContext, type QuotaState } from "../types.ts";
import { callX, PROVIDER } from "./http.ts";
import { toObservations, type XSearchResponse } from "./observations.ts";

export interface XSearchParams {
  /** X search query (operators allowed, e.g. `solar -is:retweet lang:en`). */
  query: string;
  /** The tracked term the observations count towards; defaults to `query`. */
  topic?: string;
  /** Only posts newer than this id (polling: pass the newest id seen). */
  sinceId?: string;
  /** Only posts older than this id (reading the rest of a burst that did not fit one poll). */
  untilId?: string;
  /** Only posts from this time on; recent search covers the last 7 days. */
  startTime?: Date;
  /** 10..100 per page; X's default is 10. */
  maxResults?: number;
  /** `next` of the previous page; the other parameters must stay the same. */
  nextToken?: string;
}

/** searchAll's result: when a later page fails, the pages already fetched (and paid for) are kept. */
export interface XSearchAllResult extends Page<Observation> {
  /** The error that stopped paging early; `next` is then the token to resume from. */
  interrupted?: ProviderError;
}

/**
 * X API v2. Reads (recent search) take an app-only bearer token; posting needs a user-context OAuth 2.0 token with
 * tweet.write. `baseUrl` is X's host (https://api.x.com); a trailing /2 is accepted too.
 */
export class XClient {
  private readonly root: string;

  constructor(private readonly ctx: ProviderContext) {
    this.root = ctx.baseUrl.replace(/\/+$/, "").replace(/\/2$/, "");
  }

  /** One page of GET /2/tweets/search/recent, newest first. */
  async searchRecent(params: XSearchParams, bearer: string): Promise<Page<Observation>> {
    const q = new URLSearchParams({ query: params.query, "tweet.fields": "created_at,public_metrics,author_id", expansions: "author_id" });
    if (params.maxResults !== undefined) q.set("max_results", String(params.maxResults));
    if (params.sinceId) q.set("since_id", params.sinceId);
    if (params.untilId) q.set("until_id", params.untilId);
    // X wants YYYY-MM-DDTHH:mm:ssZ (RFC 3339 without fractions).
    if (params.startTime) q.set("start_time", params.startTime.toISOString().replace(/\.\d{3}Z$/, "Z"));
    if (params.nextToken) q.set("next_token", params.nextToken);

    const { json, quota } = await callX<XSearchResponse>(this.ctx, "GET", `${this.root}/2/tweets/search/recent?${q}`, bearer, "recent search");
    return { items: toObservations(json, params.topic ?? params.query), next: json.meta?.next_token ?? null, quota };
  }

  /**
   * Follows next_token for up to `maxPages` pages. An error on the first page is thrown; an error on a later page
   * ends paging and returns what was fetched (reads are billed), with `next` set to the failed page's token.
   */
  async searchAll(params: XSearchParams & { maxPages: number }, bearer: string): Promise<XSearchAllResult> {
    const { maxPages, ...first } = params;
    const items: Observation[] = [];
    let page = await this.searchRecent(first, bearer);
    let cost = page.quota.cost;
    items.push(...page.items);
    for (let n = 1; n < maxPages && page.next; n++) {
      try {
        page = await this.searchRecent({ ...first, nextToken: page.next }, bearer);
      } catch (e) {
        if (!(e instanceof ProviderError)) throw e;
        return { items, next: page.next, quota: { ...page.quota, cost }, interrupted: e };
      }
      cost += page.quota.cost;
      items.push(...page.items);
    }
    return { items, next: page.next, quota: { ...page.quota, cost } };
  }

  /** Posts `text` as a reply with a user-context token; returns the new post's id. */
  async reply(params: { inReplyToId: string; text: string }, userToken: string): Promise<{ id: string; quota: QuotaState }> {
    const body = { text: params.text, reply: { in_reply_to_tweet_id: params.inReplyToId } };
    const { json, quota } = await callX<{ data?: { id?: string } }>(this.ctx, "POST", `${this.root}/2/tweets`, userToken, "reply", body);
    const id = json.data?.id;
    if (!id) throw new ProviderError(PROVIDER, "unavailable", "reply: X answered without the new post's id");
    return { id, quota };
  }
}
