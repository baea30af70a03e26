import { parseJson } from "./http-helpers.ts";
import type { SocialContext } from "./kind.ts";
import { ProviderError } from "./types.ts";

// The OAuth 2.0 refresh_token grant (RFC 6749 section 6) for social providers whose credentials are sent in the
// connection body (Google Trends, X's user context): one request and one reading of its answer for all of them.

export interface RefreshRequest {
  provider: string;
  tokenUrl: string;
  refreshToken: string;
  clientId: string;
  /** Confidential clients authenticate (client_secret_basic, or in the form); public clients (PKCE apps) send only client_id. */
  clientSecret?: string;
  clientAuth?: "client_secret_basic" | "client_secret_post";
}

export interface RefreshedTokens {
  accessToken: string;
  /** A new refresh token when the provider rotates them (X does: the old one stops working at once). */
  refreshToken?: string;
  /** When the access token lapses, when the provider says. */
  expiresAt?: Date;
}

export async function refreshGrant(ctx: SocialContext, r: RefreshRequest): Promise<RefreshedTokens> {
  const form = new URLSearchParams({ grant_type: "refresh_token", refresh_token: r.refreshToken, client_id: r.clientId });
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded", accept: "application/json" };
  if (r.clientSecret && r.clientAuth === "client_secret_basic") {
    headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(r.clientId)}:${encodeURIComponent(r.clientSecret)}`).toString("base64")}`;
  } else if (r.clientSecret) form.set("client_secret", r.clientSecret);
  const res = await ctx.request("POST", r.tokenUrl, { body: form.toString(), headers });
  if (res.error || res.status === null) throw new ProviderError(r.provider, "unavailable", `token: ${res.error?.code ?? "no answer"}: ${res.error?.message ?? ""}`, { status: null });
  const json = (parseJson(res.body) ?? {}) as { access_token?: string; refresh_token?: string; expires_in?: number; error?: string; error_description?: string };
  if (res.status >= 200 && res.status < 300 && json.access_token) {
    return {
      accessToken: json.access_token,
      ...(json.refresh_token ? { refreshToken: json.refresh_token } : {}),
      ...(typeof json.expires_in === "number" ? { expiresAt: new Date(ctx.now.getTime() + json.expires_in * 1000) } : {}),
    };
  }
  const why = `token: ${res.status} ${json.error ?? ""}${json.error_description ? `: ${json.error_description}` : ""}`.trim();
  // invalid_grant (Google), invalid_request (X): the refresh token was revoked, expired or already used;
  // invalid_client: the OAuth client is wrong. Only new credentials help.
  if (res.status === 400 || res.status === 401) throw new ProviderError(r.provider, "unauthorized", `${why} (PUT the connection with new credentials)`, { status: res.status, providerCode: json.error });
  throw new ProviderError(r.provider, res.status === 429 ? "rate_limited" : "unavailable", why, { status: res.status, providerCode: json.error });
}
