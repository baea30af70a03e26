import type { ProviderManifest, RateLimitRules } from "@trendgate/connector-core";
import { RedditConnectionBody } from "./schemas.ts";

/** Reddit sends the requests left in its 10-minute window and the seconds until it resets (and `x-ratelimit-used`). */
export const REDDIT_RATE_LIMIT = {
  remainingHeader: "x-ratelimit-remaining",
  resetHeader: "x-ratelimit-reset",
  resetUnit: "seconds",
} as const satisfies RateLimitRules;
/** Reddit sends no limit header: the limit is used + remaining. */
export const REDDIT_USED_HEADER = "x-ratelimit-used";

/** Tokens come from another host than the API; a connection's `auth_base_url` overrides it. */
export const REDDIT_AUTH_URL = { default: "https://www.reddit.com", env: "SOCIAL_REDDIT_AUTH_URL" };

export const redditManifest: ProviderManifest<"social"> = {
  id: "reddit",
  displayName: "Reddit",
  kind: "social",
  operationName: "Reddit",
  auth: { mode: "credentials" },
  baseUrl: { default: "https://oauth.reddit.com", env: "SOCIAL_REDDIT_BASE_URL" },
  rateLimit: REDDIT_RATE_LIMIT,
  schemas: { connection: RedditConnectionBody },
};
