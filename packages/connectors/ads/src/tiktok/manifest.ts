import type { ProviderManifest } from "@trendgate/connector-core";
import { tiktokAdsOAuthHooks } from "./hooks.ts";

// TikTok API for Business (Marketing API) as the short-video ads provider.
// Advertiser authorization: the user approves the app at the portal, which comes back with `auth_code`; the code is
// exchanged with a JSON POST `{app_id, secret, auth_code}` (hooks.ts) for a long-term token that does not expire
// (revoked through /oauth2/revoke_token/ only), so there is no refresh. Scopes are the permission groups chosen when
// the app was created: none go in the URL. API calls send the token in `Access-Token`, not `Authorization`. A
// sandbox exists: point TIKTOK_ADS_API_URL at https://sandbox-ads.tiktok.com with a sandbox token.
export const env = {
  apiVersion: "TIKTOK_ADS_API_VERSION",
} as const;
/** The app's id and secret: the OAuth client, and what listing a token's advertisers asks for too. */
export const appEnv = { clientId: "TIKTOK_ADS_CLIENT_ID", clientSecret: "TIKTOK_ADS_CLIENT_SECRET" } as const;

export const manifest: ProviderManifest<"ads"> = {
  id: "tiktok_ads",
  displayName: "TikTok Ads",
  kind: "ads",
  operationName: "TikTokAds",
  auth: {
    mode: "oauth2",
    authorizationUrl: "https://business-api.tiktok.com/portal/auth",
    // `{apiVersion}` follows TIKTOK_ADS_API_VERSION: token calls name the version the API calls do.
    tokenUrl: "https://business-api.tiktok.com/open_api/{apiVersion}/oauth2/access_token/",
    revocationUrl: "https://business-api.tiktok.com/open_api/{apiVersion}/oauth2/revoke_token/",
    scopes: [],
    scopeSeparator: ",",
    pkce: false,
    clientAuth: "client_secret_post",
    // The client id is TikTok's app id, the secret the app's secret; the portal names them app_id and auth_code.
    paramNames: { clientId: "app_id", code: "auth_code" },
    env: { ...appEnv, authorizationUrl: "TIKTOK_ADS_AUTHORIZE_URL", tokenUrl: "TIKTOK_ADS_TOKEN_URL", revocationUrl: "TIKTOK_ADS_REVOKE_URL" },
    hooks: tiktokAdsOAuthHooks,
  },
  baseUrl: { default: "https://business-api.tiktok.com", env: "TIKTOK_ADS_API_URL" },
  // TikTok publishes no sunset for v1.3 (it announces a retirement in its changelog).
  apiVersion: { env: env.apiVersion, default: "v1.3", pattern: /^v\d+\.\d+$/, sunset: null, source: "https://business-api.tiktok.com/portal/docs?id=1740579480076290" },
  schemas: {},
  env,
};
