import type { ProviderManifest } from "@trendgate/connector-core";

// Snapchat ads through the Snap Marketing API. Browser OAuth with the one
// scope `snapchat-marketing-api`, no PKCE (Snap's consent page does not take it), client id and secret in the token
// request's body. Access tokens are short-lived (about 30 minutes; `expires_in` is trusted) and come with a refresh
// token that Snap reuses, so the framework's standard refresh_token grant keeps the connection alive: no hooks.
// The API has one version, `/v1/` (no sunset published), so it is declared but not configurable.
export const manifest: ProviderManifest<"ads"> = {
  id: "snap_ads",
  displayName: "Snap Ads",
  kind: "ads",
  operationName: "SnapAds",
  auth: {
    mode: "oauth2",
    authorizationUrl: "https://accounts.snapchat.com/login/oauth2/authorize",
    tokenUrl: "https://accounts.snapchat.com/login/oauth2/access_token",
    scopes: ["snapchat-marketing-api"],
    scopeSeparator: " ",
    pkce: false,
    clientAuth: "client_secret_post",
    env: { clientId: "SNAP_ADS_CLIENT_ID", clientSecret: "SNAP_ADS_CLIENT_SECRET", authorizationUrl: "SNAP_ADS_AUTHORIZE_URL", tokenUrl: "SNAP_ADS_TOKEN_URL" },
  },
  baseUrl: { default: "https://adsapi.snapchat.com", env: "SNAP_ADS_API_URL" },
  apiVersion: { default: "v1", pattern: /^v\d+$/, sunset: null, source: "https://developers.snap.com/api/marketing-api/Ads-API/introduction" },
  schemas: {},
};
