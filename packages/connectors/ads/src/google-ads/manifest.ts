import type { ProviderManifest } from "@trendgate/connector-core";

// Google Ads as the search-engine ads provider. Browser OAuth with the
// `adwords` scope; `access_type=offline` and `prompt=consent` make Google return a refresh token (access tokens
// last about an hour). The API version is pinned in configuration because Google sunsets versions on a schedule;
// `login-customer-id` is sent when acting through a manager account. Developer tokens were retired (Sep 2026).
export const env = {
  apiVersion: "GOOGLE_ADS_API_VERSION",
  loginCustomerId: "GOOGLE_ADS_LOGIN_CUSTOMER_ID",
} as const;

export const manifest: ProviderManifest<"ads"> = {
  id: "google_ads",
  displayName: "Google Ads",
  kind: "ads",
  operationName: "GoogleAds",
  auth: {
    mode: "oauth2",
    authorizationUrl: "https://accounts.google.com/o/oauth2/v2/auth",
    tokenUrl: "https://oauth2.googleapis.com/token",
    revocationUrl: "https://oauth2.googleapis.com/revoke",
    scopes: ["https://www.googleapis.com/auth/adwords"],
    scopeSeparator: " ",
    pkce: true,
    clientAuth: "client_secret_post",
    authorizationParams: { access_type: "offline", prompt: "consent" },
    env: { clientId: "GOOGLE_ADS_CLIENT_ID", clientSecret: "GOOGLE_ADS_CLIENT_SECRET", authorizationUrl: "GOOGLE_ADS_AUTHORIZE_URL", tokenUrl: "GOOGLE_ADS_TOKEN_URL", revocationUrl: "GOOGLE_ADS_REVOKE_URL" },
  },
  baseUrl: { default: "https://googleads.googleapis.com", env: "GOOGLE_ADS_API_URL" },
  // Google retires each major about a year after its release (v20 2026-06-10, v21 2026-08-05, v22 2026-10-07) and
  // projects v25's for August 2027 without a day yet, so the first of that month is used (approximate).
  apiVersion: { env: env.apiVersion, default: "v25", pattern: /^v\d+$/, sunset: "2027-08-01", source: "https://developers.google.com/google-ads/api/docs/sunset-dates" },
  schemas: {},
  env,
};
