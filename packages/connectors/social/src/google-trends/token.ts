import type { SocialContext } from "../kind.ts";
import { refreshGrant } from "../refresh-grant.ts";
import { GOOGLE_TOKEN_URL } from "./manifest.ts";

// Google OAuth access tokens last an hour. A connection that keeps a refresh token (with its OAuth client) gets a
// fresh access token for each validation (Google's token endpoint), so it works past that hour; one with only an
// access token works until the token expires, then says to send new credentials.

export interface TrendsCredentials {
  access_token?: string;
  refresh_token?: string;
  client_id?: string;
  client_secret?: string;
}

/** The access token a call should carry: refreshed when the connection keeps a refresh token, else the one given. */
export async function accessTokenOf(ctx: SocialContext, creds: TrendsCredentials, tokenUrl?: string): Promise<string> {
  if (!creds.refresh_token) return creds.access_token!;
  const { accessToken } = await refreshGrant(ctx, {
    provider: "google-trends", tokenUrl: tokenUrl ?? (ctx.env[GOOGLE_TOKEN_URL.env] || GOOGLE_TOKEN_URL.default),
    refreshToken: creds.refresh_token, clientId: creds.client_id!, clientSecret: creds.client_secret!, clientAuth: "client_secret_post",
  });
  return accessToken;
}
