import type { ProviderManifest } from "@trendgate/connector-core";
import { pinterestAdsOAuthHooks } from "./hooks.ts";
import { RATE_LIMIT } from "./http.ts";

// Pinterest as the image-pinboard ads provider, through API v5 (as Pinterest's published
// description, pinterest/api-description, has it). Browser OAuth with
// comma-separated `ads:read,ads:write`; the token endpoint takes the client's credentials as HTTP Basic only. Access
// tokens last ~30 days; refresh tokens are "continuous" (each refresh returns a new one, ~60 days, refreshable
// indefinitely), so the framework's refresh ahead of expiry keeps a connection alive as long as it is used.
// The sandbox (`https://api-sandbox.pinterest.com`, endpoints marked `x-sandbox: enabled`) is the same API at another
// base URL: point PINTEREST_ADS_API_URL at it (a sandbox needs a sandbox ad account and token).
export const manifest: ProviderManifest<"ads"> = {
  id: "pinterest_ads",
  displayName: "Pinterest Ads",
  kind: "ads",
  operationName: "PinterestAds",
  auth: {
    mode: "oauth2",
    authorizationUrl: "https://www.pinterest.com/oauth/",
    tokenUrl: "https://api.pinterest.com/v5/oauth/token",
    scopes: ["ads:read", "ads:write"],
    scopeSeparator: ",",
    pkce: false,
    clientAuth: "client_secret_basic",
    env: { clientId: "PINTEREST_ADS_CLIENT_ID", clientSecret: "PINTEREST_ADS_CLIENT_SECRET", authorizationUrl: "PINTEREST_ADS_AUTHORIZE_URL", tokenUrl: "PINTEREST_ADS_TOKEN_URL" },
    hooks: pinterestAdsOAuthHooks,
  },
  baseUrl: { default: "https://api.pinterest.com", env: "PINTEREST_ADS_API_URL" },
  // Envoy's rate-limit headers on every answer; the reset is in seconds (hours away for the Trial tier's daily cap).
  rateLimit: RATE_LIMIT,
  // v5 is the only version served; Pinterest publishes no sunset, so it is not configurable.
  apiVersion: { default: "v5", pattern: /^v\d+$/, sunset: null, source: "https://developers.pinterest.com/docs/api/v5/" },
  schemas: {},
  // The first wait before polling an async report (report.ts; doubled up to 15 s).
  env: { reportPollMs: "PINTEREST_ADS_REPORT_POLL_MS" },
};
