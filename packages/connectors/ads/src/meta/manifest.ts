import type { ProviderManifest } from "@trendgate/connector-core";
import { metaAdsOAuthHooks } from "./hooks.ts";

// Meta (Facebook/Instagram) ads through the Marketing API. Browser OAuth
// with comma-separated scopes and no PKCE; the code is exchanged with a GET and the short-lived user token swapped at
// once for a long-lived one (~60 days, `fb_exchange_token`): Meta has no refresh token, so the connection lapses to
// needs_reauth when that token expires. The version is pinned in the path (Meta retires a Marketing API version
// about a year after release).
export const env = {
  apiVersion: "META_ADS_API_VERSION",
} as const;

export const manifest: ProviderManifest<"ads"> = {
  id: "meta_ads",
  displayName: "Meta Ads",
  kind: "ads",
  operationName: "MetaAds",
  auth: {
    mode: "oauth2",
    // `{apiVersion}` follows META_ADS_API_VERSION, so consent and API calls name the same Graph version.
    authorizationUrl: "https://www.facebook.com/{apiVersion}/dialog/oauth",
    tokenUrl: "https://graph.facebook.com/{apiVersion}/oauth/access_token",
    scopes: ["ads_management", "ads_read", "business_management"],
    scopeSeparator: ",",
    pkce: false,
    clientAuth: "client_secret_post",
    env: { clientId: "META_ADS_CLIENT_ID", clientSecret: "META_ADS_CLIENT_SECRET", authorizationUrl: "META_ADS_AUTHORIZE_URL", tokenUrl: "META_ADS_TOKEN_URL" },
    hooks: metaAdsOAuthHooks,
  },
  baseUrl: { default: "https://graph.facebook.com", env: "META_ADS_API_URL" },
  // The sunset is the Marketing API's (the ads calls here), not the Graph API's longer one: Meta's table says
  // "TBD" for v27.0 (released 2026-11-04) until a later version ships, so this is 12 months after release: each of
  // v22.0-v25.0 was served at least that long (v25.0: 2026-02-18 to 2027-02-23). Replace it once Meta dates v27.0.
  apiVersion: { env: env.apiVersion, default: "v27.0", pattern: /^v\d+\.\d+$/, sunset: "2027-11-04", source: "https://developers.facebook.com/documentation/ads-commerce/marketing-api/marketing-api-changelog/versions" },
  schemas: {},
  env,
};
