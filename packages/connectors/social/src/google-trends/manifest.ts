import type { ProviderManifest, RateLimitRules } from "@trendgate/connector-core";
import { GoogleTrendsConnectionBody } from "./schemas.ts";

/** Google's OAuth token endpoint (refreshing access tokens) and the variable that overrides it. */
export const GOOGLE_TOKEN_URL = { default: "https://oauth2.googleapis.com/token", env: "SOCIAL_GOOGLE_TRENDS_TOKEN_URL" };

/** The alpha API documents no limits; a 429 may carry Retry-After (or a RetryInfo detail, see errors.ts). */
export const TRENDS_RATE_LIMIT = { retryAfterHeader: "retry-after" } as const satisfies RateLimitRules;

export const googleTrendsManifest: ProviderManifest<"social"> = {
  id: "google_trends",
  displayName: "Google Trends",
  kind: "social",
  operationName: "GoogleTrends",
  auth: { mode: "credentials" },
  baseUrl: { default: "https://searchtrends.googleapis.com", env: "SOCIAL_GOOGLE_TRENDS_BASE_URL" },
  rateLimit: TRENDS_RATE_LIMIT,
  schemas: { connection: GoogleTrendsConnectionBody },
};
