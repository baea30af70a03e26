import { ProviderError } from "../types.ts";
import type { SocialContext } from "../kind.ts";
import { GOOGLE_TOKEN_URL } from "./manifest.ts";

// Google OAuth access tokens last an hour. A connection that keeps a refresh token (with its OAuth client) gets a
// fresh access token for each validation (RFC 6749 section 6, Google's token endpoint), so it works past that hour;
// one with only an access token works until the token expires, then says to send new credentials.

export interface TrendsCredentials {
  access_token?: string;
  refresh_token?: string;
  client_id?: string;
  client_secret?: string;
}

/** The access token a call should carry: refreshed when the connection keeps a refresh token, else the one given. */
export async function accessTokenOf(ctx: SocialContext, creds: TrendsCredentials, tokenUrl?: string): Promise<string> {
  if (!creds.refresh_token) return creds.access_token!;
  const url = tokenUrl ?? (ctx.env[GOOGLE_TOKEN_URL.env] || GOOGLE_TOKEN_URL.default);
  const form = new URLSearchParams({ grant_type: "refresh_token", refresh_token: creds.refresh_token, client_id: creds.client_id!, client_secret: creds.client_secret! });
  const r = await ctx.request("POST", url, { body: form.toString(), headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" } });
  if (r.error || r.status === null) throw new ProviderError("google-trends", "unavailable", `token: ${r.error?.code ?? "no answer"}: ${r.error?.message ?? ""}`, { status: null });
  let json: { access_token?: string; error?: string; error_description?: string } = {};
  try { json = JSON.parse(r.body); } catch { /* answered below */ }
  if (r.status >= 200 && r.status < 300 && json.access_token) return json.access_token;
  const why = `token: ${r.status} ${json.error ?? ""}${json.error_description ? `: ${json.error_description}` : ""}`.trim();
  // invalid_grant: the refresh token was revoked or expired; invalid_client: the OAuth client is wrong. Only new credentials help.
  if (r.status === 400 || r.status === 401) throw new ProviderError("google-trends", "unauthorized", `${why} (PUT the connection with new credentials)`, { status: r.status, providerCode: json.error });
  throw new ProviderError("google-trends", r.status === 429 ? "rate_limited" : "unavailable", why, { status: r.status, providerCode: json.error });
}
