import { ProviderHttp, type RateLimitRules } from "@trendgate/connector-core";

export const PROVIDER = "reddit_ads";

/** Retry-After on a 429, else the window's reset; the manifest declares the same rules. */
export const RATE_LIMIT = { retryAfterHeader: "retry-after", resetHeader: "x-ratelimit-reset", remainingHeader: "x-ratelimit-remaining" } as const satisfies RateLimitRules;

/** Reddit Ads' one HTTP path (Conversions API and token endpoint). */
export const http = new ProviderHttp(PROVIDER, RATE_LIMIT);
