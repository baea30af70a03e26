import { ProviderError, type OAuthHooks, type ProviderEnv, type TokenSet } from "@trendgate/connector-core";
import { http } from "./http.ts";

// Reddit's token endpoint (https://www.reddit.com/api/v1/access_token) takes HTTP Basic client auth built from the raw
// `client_id:client_secret` (as PRAW and Reddit's own examples do). The standard client (oauth4webapi) form-urlencodes
// both first, as RFC 6749 §2.3.1 says, which turns the `-` and `_` that Reddit client ids contain into %2D / %5F:
// Reddit compares them raw, so the exchange and the refresh are hooks that send them unencoded. Reddit answers some
// failures with HTTP 200 and `{error}`, refresh answers carry no new refresh token (the old one stays valid), and
// scopes come back space-separated. A descriptive User-Agent is required.

const PROVIDER = "reddit_ads";
const USER_AGENT = "trendgate/0.1 (conversions connector)";
const TIMEOUT_MS = 15_000;

async function tokenRequest(url: string, clientId: string, clientSecret: string, form: Record<string, string>, what: string, env: ProviderEnv | undefined): Promise<TokenSet> {
  const res = await http.fetch(what, url, {
    env, method: "POST", timeoutMs: TIMEOUT_MS, form: new URLSearchParams(form),
    headers: { authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString("base64")}`, "user-agent": USER_AGENT },
  });
  const body: Record<string, unknown> = res.body ?? {};
  const error = typeof body.error === "string" ? body.error : typeof body.error === "number" ? `http_${body.error}` : null;
  if (!(res.status >= 200 && res.status < 300) || error || typeof body.access_token !== "string") {
    const code = error ?? `http_${res.status}`;
    const kind = res.status >= 500 ? "unavailable" : res.status === 429 ? "rate_limited" : code === "invalid_grant" ? "unauthorized" : res.status === 401 ? "bad_request" : "bad_request";
    const hint = res.status === 401 ? " (the client id or secret is wrong)" : "";
    throw new ProviderError(PROVIDER, kind, `${what}: ${code}${hint}`, { status: res.status, providerCode: code });
  }
  return {
    accessToken: body.access_token,
    refreshToken: typeof body.refresh_token === "string" ? body.refresh_token : undefined,
    expiresAt: typeof body.expires_in === "number" ? new Date(Date.now() + body.expires_in * 1000) : undefined,
    scopes: typeof body.scope === "string" ? body.scope.split(/[ ,]+/).filter(Boolean) : undefined,
    tokenType: typeof body.token_type === "string" ? body.token_type : "bearer",
    account: {},
  };
}

export const redditAdsOAuthHooks: OAuthHooks = {
  exchangeCode: ({ code, redirectUri, client }) =>
    tokenRequest(client.tokenUrl, client.clientId, client.clientSecret, { grant_type: "authorization_code", code, redirect_uri: redirectUri }, "code exchange", client.env),
  refresh: ({ refreshToken, client }) =>
    tokenRequest(client.tokenUrl, client.clientId, client.clientSecret, { grant_type: "refresh_token", refresh_token: refreshToken }, "refresh", client.env),
};
