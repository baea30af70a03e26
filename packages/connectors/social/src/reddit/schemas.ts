import { z } from "zod";
import { storableText, text } from "@trendgate/contracts";
import { category, ProviderUrl, secret, terms } from "../connection-fields.ts";

// Reddit's connection body (PUT …/reddit/connection).

/** `<platform>:<app id>:<version> (by /u/<username>)`, as Reddit's API rules ask of every client. */
export const REDDIT_USER_AGENT = /^[^\s:]+:[^\s:]+:[^\s:]+ \(by \/?u\/[A-Za-z0-9_-]{3,20}\)$/;

export const SubredditName = z.string().check(storableText).regex(/^[A-Za-z0-9_]{2,21}$/, "a subreddit name: 2-21 letters, digits or _");
export const RedditConnectionBody = z
  .object({
    credentials: z.object({ client_id: secret, client_secret: secret }).strict().meta({ description: "An OAuth app's id and secret: app-only (client credentials) tokens for reads" }),
    terms: terms(1),
    options: z.object({
      subreddits: z.array(SubredditName).min(1).max(20).meta({ description: "Subreddits searched for each term" }),
      user_agent: text({ min: 10, max: 300, trim: true })
        // Reddit throttles or blocks (403, an HTML page) agents not in its documented form; refused here, when it can still be fixed.
        .regex(REDDIT_USER_AGENT, "must be Reddit's form `<platform>:<app id>:<version> (by /u/<reddit user>)`, e.g. `web:trendgate:1.0 (by /u/acme_bot)`")
        .meta({ description: "Reddit's required form: `<platform>:<app id>:<version> (by /u/<user>)`" }),
      category,
      max_pages: z.number().int().min(1).max(10).default(2),
    }).strict(),
    base_url: ProviderUrl.nullable().optional(),
    auth_base_url: ProviderUrl.nullable().optional().meta({ description: "Overrides Reddit's token host (https://www.reddit.com)" }),
  })
  .strict()
  .meta({ id: "RedditConnectionBody" });

export interface RedditOptions { subreddits: string[]; user_agent: string; max_pages?: number; auth_base_url?: string }
