import type { SocialConnector } from "../kind.ts";
import { googleTrendsManifest } from "./manifest.ts";
import { validateAction } from "./validate.ts";

/** Not polled: it validates terms on demand. */
export const googleTrends: SocialConnector = {
  manifest: googleTrendsManifest,
  connectionNote: "Google Trends is not polled: it validates terms on demand (official Trends API, alpha, open to approved testers). " +
    "Credentials: an access token (one hour), or a refresh token with its OAuth client so validations keep working after that hour.",
  extraUrlFields: ["token_url"],
  actions: [validateAction],
};
