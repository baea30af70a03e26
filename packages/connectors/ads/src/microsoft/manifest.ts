import type { ProviderManifest } from "@trendgate/connector-core";
import { microsoftAdsOAuthHooks, SCOPES } from "./hooks.ts";

// Microsoft Advertising (Bing Ads API v13, REST/JSON) as the software-vendor search ads provider.
// Browser OAuth on the Microsoft identity platform (`/common` takes work and
// personal accounts) with PKCE; `offline_access` is what makes it return a refresh token, and each refresh must name
// the scopes again (hooks.ts). Access tokens last about an hour (`expires_in`). Every API call also carries the
// app's developer token (configuration, never stored per connection) and the CustomerId / CustomerAccountId of the
// selected account (client.ts). The sandbox is a separate host pair: point MICROSOFT_ADS_API_URL at
// https://campaign.api.sandbox.bingads.microsoft.com and the OAuth URLs at login.windows-ppe.net.
export const env = {
  developerToken: "MICROSOFT_ADS_DEVELOPER_TOKEN",
  /** How long to wait after error 117 CallRateExceeded; Microsoft says to resubmit after 60 seconds. */
  throttleWaitSeconds: "MICROSOFT_ADS_THROTTLE_WAIT_SECONDS",
  // Reporting (report.ts): the Reporting and Customer Management hosts (derived from the API URL's campaign.* host
  // unless set), the first wait before polling a submitted report, and how long a report may stay pending.
  reportingUrl: "MICROSOFT_ADS_REPORTING_URL",
  customerUrl: "MICROSOFT_ADS_CUSTOMER_URL",
  reportPollSeconds: "MICROSOFT_ADS_REPORT_POLL_SECONDS",
  reportTimeoutSeconds: "MICROSOFT_ADS_REPORT_TIMEOUT_SECONDS",
} as const;

export const manifest: ProviderManifest<"ads"> = {
  id: "microsoft_ads",
  displayName: "Microsoft Advertising",
  kind: "ads",
  operationName: "MicrosoftAds",
  auth: {
    mode: "oauth2",
    authorizationUrl: "https://login.microsoftonline.com/common/oauth2/v2.0/authorize",
    tokenUrl: "https://login.microsoftonline.com/common/oauth2/v2.0/token",
    scopes: SCOPES,
    scopeSeparator: " ",
    pkce: true,
    clientAuth: "client_secret_post",
    env: { clientId: "MICROSOFT_ADS_CLIENT_ID", clientSecret: "MICROSOFT_ADS_CLIENT_SECRET", authorizationUrl: "MICROSOFT_ADS_AUTHORIZE_URL", tokenUrl: "MICROSOFT_ADS_TOKEN_URL" },
    hooks: microsoftAdsOAuthHooks,
  },
  baseUrl: { default: "https://campaign.api.bingads.microsoft.com", env: "MICROSOFT_ADS_API_URL" },
  // v13 is the only version served (Campaign Management, Customer Management and Reporting alike); no sunset is
  // published for its REST API, which every call here uses (the SOAP API's end on 2027-01-31 is not this pin's), so
  // it is not configurable.
  apiVersion: { default: "v13", pattern: /^v\d+$/, sunset: null, source: "https://learn.microsoft.com/en-us/advertising/guides/migration-guide" },
  schemas: {},
  env,
};
