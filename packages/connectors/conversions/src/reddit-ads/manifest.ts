import type { ProviderManifest } from "@trendgate/connector-core";
import { redditAdsOAuthHooks } from "./hooks.ts";
import { RATE_LIMIT } from "./http.ts";
import { CommunityAdsSelectionBody, CommunityAdsTokenBody } from "./schemas.ts";

// Reddit Ads as the community-ads (conversions) provider. Browser OAuth with
// the `adsconversions` scope and `duration=permanent` (a refresh token); the token endpoint takes HTTP Basic client
// auth and a form body, so the standard flow needs no hooks. A conversion access token from Events Manager can be
// stored instead (PUT /api/integrations/community-ads/token).
/**
 * Reddit Ads' own configuration variables, read from PROVIDER_ENV (./config.ts) and documented in .env.example:
 * REDDIT_ADS_TEST_ID_PLACEMENT: where a test event's `test_id` goes, `body` (`data.test_id`, as v3 clients send it;
 * the default) or `query` (`?test_id=`, as one integrator's account needed).
 */
export const env = { testIdPlacement: "REDDIT_ADS_TEST_ID_PLACEMENT" } as const;

export const manifest: ProviderManifest<"conversions"> = {
  id: "reddit_ads",
  displayName: "Reddit Ads",
  kind: "conversions",
  operationName: "RedditAds",
  auth: {
    mode: "oauth2",
    authorizationUrl: "https://www.reddit.com/api/v1/authorize",
    tokenUrl: "https://www.reddit.com/api/v1/access_token",
    scopes: ["adsconversions"],
    scopeSeparator: " ",
    pkce: false,
    clientAuth: "client_secret_basic",
    authorizationParams: { duration: "permanent" },
    env: { clientId: "REDDIT_ADS_CLIENT_ID", clientSecret: "REDDIT_ADS_CLIENT_SECRET", authorizationUrl: "REDDIT_ADS_AUTHORIZE_URL", tokenUrl: "REDDIT_ADS_TOKEN_URL" },
    hooks: redditAdsOAuthHooks,
  },
  baseUrl: { default: "https://ads-api.reddit.com", env: "REDDIT_ADS_API_URL" },
  rateLimit: RATE_LIMIT,
  schemas: { selection: CommunityAdsSelectionBody, connection: CommunityAdsTokenBody },
  env,
};
