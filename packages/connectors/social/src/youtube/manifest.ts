import type { ProviderManifest, RateLimitRules } from "@trendgate/connector-core";
import { YouTubeConnectionBody } from "./schemas.ts";

/** YouTube counts daily units (quota.ts keeps the ledger); a 429 may say when to come back. */
export const YOUTUBE_RATE_LIMIT = { retryAfterHeader: "retry-after" } as const satisfies RateLimitRules;

export const youtubeManifest: ProviderManifest<"social"> = {
  id: "youtube",
  displayName: "YouTube",
  kind: "social",
  operationName: "YouTube",
  auth: { mode: "credentials" },
  baseUrl: { default: "https://www.googleapis.com/youtube/v3", env: "SOCIAL_YOUTUBE_BASE_URL" },
  rateLimit: YOUTUBE_RATE_LIMIT,
  schemas: { connection: YouTubeConnectionBody },
};
