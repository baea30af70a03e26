import type { Observation } from "../types.ts";

// The parts of X's v2 search response we read (we request tweet.fields=created_at,public_metrics,author_id and
// expansions=author_id, so these are present on every post X returns).
export interface XPost {
  id: string;
  text: string;
  author_id?: string;
  created_at?: string;
  public_metrics?: { like_count?: number; retweet_count?: number; reply_count?: number; quote_count?: number };
}

export interface XUser {
  id: string;
  username: string;
  name?: string;
}

export interface XSearchResponse {
  data?: XPost[]; // absent when nothing matched
  includes?: { users?: XUser[] };
  meta?: { result_count?: number; newest_id?: string; oldest_id?: string; next_token?: string };
}

/**
 * count = 1 + likes + retweets + replies + quotes: the post is one mention, and each interaction is someone else
 * engaging with the topic, so engagement stands for reach. Impressions are left out: they are orders of magnitude
 * larger and would drown the mention itself.
 */
export function engagementCount(post: XPost): number {
  const m = post.public_metrics ?? {};
  return 1 + (m.like_count ?? 0) + (m.retweet_count ?? 0) + (m.reply_count ?? 0) + (m.quote_count ?? 0);
}

export function toObservations(res: XSearchResponse, topic: string): Observation[] {
  const usernames = new Map((res.includes?.users ?? []).map((u) => [u.id, u.username]));
  return (res.data ?? []).map((post) => {
    const username = post.author_id ? usernames.get(post.author_id) : undefined;
    return {
      externalId: post.id,
      topic,
      count: engagementCount(post),
      observedAt: post.created_at ? new Date(post.created_at) : new Date(),
      // X omits users it cannot show (suspended, protected); /i/web/status/<id> resolves without the username.
      link: username ? `https://x.com/${username}/status/${post.id}` : `https://x.com/i/web/status/${post.id}`,
      text: post.text,
    };
  });
}
