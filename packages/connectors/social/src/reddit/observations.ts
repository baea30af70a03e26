import Sentiment from "sentiment";
import type { Observation } from "../types.ts";

/** The fields of a Reddit link (kind t3) we read. */
export interface RedditLink {
  id: string;
  name: string; // fullname, "t3_<id>"
  title: string;
  selftext?: string;
  score: number;
  num_comments: number;
  created_utc: number; // epoch seconds
  permalink: string; // "/r/<sub>/comments/<id>/<slug>/"
  subreddit: string;
}

export interface RedditListing<T> {
  kind: "Listing";
  data: { children: { kind: string; data: T }[]; after: string | null; before: string | null };
}

const analyzer = new Sentiment();

/**
 * AFINN-based score of the text, in -1..1. `comparative` is the summed word scores per token; AFINN words score
 * -5..+5, so comparative lies in -5..5 and comparative / 5 maps it onto -1..1 (clamped in case of rounding). Long
 * texts are dominated by neutral words and score near 0, which is the honest answer for them.
 */
export function sentimentOf(text: string): number {
  const { comparative } = analyzer.analyze(text);
  return Math.max(-1, Math.min(1, comparative / 5));
}

// Removed or deleted posts keep their title but their body is a placeholder that says nothing about the topic.
const PLACEHOLDERS = new Set(["[removed]", "[deleted]"]);

/**
 * count = 1 + score + num_comments: the post is one mention, its net votes and comments are people engaging with
 * it. A post voted below zero still counts as one mention (the sum is floored at 1), since a count is never negative.
 */
export function toObservation(post: RedditLink, topic: string): Observation {
  const body = post.selftext && !PLACEHOLDERS.has(post.selftext.trim()) ? post.selftext : "";
  const text = body ? `${post.title}\n\n${body}` : post.title;
  return {
    externalId: post.name,
    topic,
    count: Math.max(1, 1 + post.score + post.num_comments),
    sentiment: sentimentOf(text),
    observedAt: new Date(post.created_utc * 1000),
    link: `https://www.reddit.com${post.permalink}`,
    text: post.title,
  };
}

export function toObservations(listing: RedditListing<RedditLink>, topic: string): Observation[] {
  return listing.data.children.filter((c) => c.kind === "t3").map((c) => toObservation(c.data, topic));
}
