import type { ProviderManifest } from "@trendgate/connector-core";

// LinkedIn Marketing API as the professional-network ads provider. Browser
// OAuth (no PKCE: LinkedIn takes it only for native apps) with r_ads + rw_ads; the app needs the Advertising API
// product and the member a campaign-manager role on the ad account (VIEWER is read-only). Access tokens last 60 days;
// approved partners also get a refresh token valid 365 days from first consent (refreshing does not extend it), used
// through the framework's standard refresh_token grant (form body, client secret in the body). Every API call names
// its monthly version (`Linkedin-Version: YYYYMM`, pinned here because LinkedIn sunsets each after ~12 months with
// 426). LinkedIn sends no rate-limit headers, so there are no rate-limit rules.
export const env = {
  apiVersion: "LINKEDIN_ADS_API_VERSION",
} as const;

export const manifest: ProviderManifest<"ads"> = {
  id: "linkedin_ads",
  displayName: "LinkedIn Ads",
  kind: "ads",
  operationName: "LinkedinAds",
  auth: {
    mode: "oauth2",
    authorizationUrl: "https://www.linkedin.com/oauth/v2/authorization",
    tokenUrl: "https://www.linkedin.com/oauth/v2/accessToken",
    // r_ads and rw_ads: plans read and write campaign targeting; r_ads_reporting: the reporting catalog (report.ts).
    scopes: ["r_ads", "rw_ads", "r_ads_reporting"],
    scopeSeparator: " ",
    pkce: false,
    clientAuth: "client_secret_post",
    env: { clientId: "LINKEDIN_ADS_CLIENT_ID", clientSecret: "LINKEDIN_ADS_CLIENT_SECRET", authorizationUrl: "LINKEDIN_ADS_AUTHORIZE_URL", tokenUrl: "LINKEDIN_ADS_TOKEN_URL" },
  },
  baseUrl: { default: "https://api.linkedin.com", env: "LINKEDIN_ADS_API_URL" },
  // 202608 is a published version (LinkedIn skips months: an unpublished one is a 426). LinkedIn's migrations table
  // dates each version's sunset about 12 months on, mid-month (202508: 2026-08-17); 202608's day is taken as the
  // first of August 2027 (approximate).
  apiVersion: { env: env.apiVersion, default: "202608", pattern: /^20\d{2}(0[1-9]|1[0-2])$/, sunset: "2027-08-01", source: "https://learn.microsoft.com/en-us/linkedin/marketing/integrations/migrations" },
  schemas: {},
  env,
};
