import { ProviderError, type OAuthClientSettings, type OAuthHooks, type TokenSet } from "@trendgate/connector-core";
import { http } from "./http.ts";
import { errorOf, kindOf, PROVIDER, providerCodeOf } from "./errors.ts";

// Pinterest's token endpoint (`POST /v5/oauth/token`) takes the client's credentials as HTTP Basic only and answers
// failures with its own `{code, message}` (not RFC 6749's `error`), so exchange and refresh are hooks over one form
// POST. The code exchange asks for continuous refresh (`continuous_refresh=true`: apps created before 25 Sep 2025
// otherwise get a legacy refresh token Pinterest no longer supports; newer apps have it by default). Each refresh then
// returns a new refresh token (~60 days), which replaces the old one: the framework keeps whichever comes back.

const TIMEOUT_MS = 15_000;
type Op = "code exchange" | "token refresh";

/** RFC 6749 §2.3.1: client id and secret form-encoded, then Basic. */
const basic = (c: OAuthClientSettings) =>
  `Basic ${Buffer.from(`${encodeURIComponent(c.clientId)}:${encodeURIComponent(c.clientSecret)}`).toString("base64")}`;

async function tokenPost(client: OAuthClientSettings, form: Record<string, string>, op: Op): Promise<TokenSet> {
  const res = await http.fetch(op, client.tokenUrl, { env: client.env, method: "POST", timeoutMs: TIMEOUT_MS, form: new URLSearchParams(form), headers: { authorization: basic(client) } });
  const body = res.body;
  const rid = res.headers.get("x-pinterest-rid");
  if (res.status !== 200 || typeof body?.access_token !== "string") {
    // Only Pinterest's error fields go into the message: the request carried the code or refresh token.
    const e = errorOf(body);
    let kind = kindOf(res.status, e, res.headers);
    // A refused refresh (revoked or expired grant) will not succeed by retrying: the connection needs a person.
    if (op === "token refresh" && (res.status === 400 || res.status === 401)) kind = "unauthorized";
    // A refused client (wrong id or secret) at the code exchange is our configuration, not the user's consent.
    const hint = op === "code exchange" && res.status === 401 ? " (check PINTEREST_ADS_CLIENT_ID and PINTEREST_ADS_CLIENT_SECRET)" : "";
    if (op === "code exchange" && res.status === 401) kind = "bad_request";
    throw new ProviderError(PROVIDER, kind, `${op}: ${e?.message ?? `HTTP ${res.status}`}${hint}${rid ? ` (x-pinterest-rid ${rid})` : ""}`, { status: res.status, providerCode: providerCodeOf(e, res.status) });
  }
  return {
    accessToken: body.access_token,
    refreshToken: typeof body.refresh_token === "string" ? body.refresh_token : undefined,
    expiresAt: typeof body.expires_in === "number" && body.expires_in > 0 ? new Date(Date.now() + body.expires_in * 1000) : undefined,
    scopes: typeof body.scope === "string" ? body.scope.split(/[\s,]+/).filter(Boolean) : undefined,
    tokenType: typeof body.token_type === "string" ? body.token_type : "bearer",
  };
}

export const pinterestAdsOAuthHooks: OAuthHooks = {
  exchangeCode: ({ code, redirectUri, client }) =>
    tokenPost(client, { grant_type: "authorization_code", code, redirect_uri: redirectUri, continuous_refresh: "true" }, "code exchange"),
  refresh: ({ refreshToken, client }) => tokenPost(client, { grant_type: "refresh_token", refresh_token: refreshToken }, "token refresh"),
};
