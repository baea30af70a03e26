import type { ProviderManifest, RateLimitRules } from "@trendgate/connector-core";
import { XConnectionBody } from "./schemas.ts";

/** X reports the endpoint's 15-minute (or 24-hour) window; the reset is epoch seconds. */
export const X_RATE_LIMIT = {
  limitHeader: "x-rate-limit-limit",
  remainingHeader: "x-rate-limit-remaining",
  resetHeader: "x-rate-limit-reset",
  resetUnit: "epoch_seconds",
} as const satisfies RateLimitRules;

export const xManifest: ProviderManifest<"social"> = {
  id: "x",
  displayName: "X",
  kind: "social",
  operationName: "X",
  auth: { mode: "credentials" },
  baseUrl: { default: "https://api.x.com/2", env: "SOCIAL_X_BASE_URL" },
  rateLimit: X_RATE_LIMIT,
  schemas: { connection: XConnectionBody },
};
