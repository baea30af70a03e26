import { z } from "zod";
import { storableText, text } from "@trendgate/contracts";
import { category, ProviderUrl, secret, terms } from "../connection-fields.ts";

// Reddit's connection body (PUT …/reddit/connection).

export const SubredditName = z.string().check(storableText).regex(/^[A-Za-z0-9_]{2,21}$/, "a subreddit name: 2-21 letters, digits or _");
export const RedditConnectionBody = z
  .object({
    credentials: z.object({ client_id: secret, client_secret: secret }).strict().meta({ description: "An OAuth app's id and secret: app-only (client credentials) tokens for reads" }),
    terms: terms(1),
    options: z.object({
      subreddits: z.array(SubredditName).min(1).max(20).meta({ description: "Subreddits searched for each term" }),
      user_agent: text({ min: 10, max: 300, trim: true }).meta({ description: "Reddit throttles generic agents: `<platform>:<app id>:<version> (by /u/<user>)`" }),
      category,
      max_pages: z.number().int().min(1).max(10).default(2),
    }).strict(),
    base_url: ProviderUrl.nullable().optional(),
    auth_base_url: ProviderUrl.nullable().optional().meta({ description: "Overrides Reddit's token host (https://www.reddit.com)" }),
  })
  .strict()
  .meta({ id: "RedditConnectionBody" });

export interface RedditOptions { subreddits: string[]; user_agent: string; max_pages?: number; auth_base_url?: string }
