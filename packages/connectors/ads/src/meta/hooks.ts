import { ProviderError, type OAuthHooks, type ProviderEnv, type TokenSet } from "@trendgate/connector-core";
import { http } from "./http.ts";
import { callError, graphErrorOf, graphMessage, PROVIDER } from "./errors.ts";

// Meta's OAuth deviates from RFC 6749 in two ways: the code is exchanged with a GET on the token endpoint (client id
// and secret as query parameters), and what comes back is a short-lived user token (hours). It is swapped at once,
// on the same endpoint, for a long-lived one (`grant_type=fb_exchange_token`, ~60 days). There is no refresh token:
// the stored expiry is the long-lived token's, and the user signs in again when it lapses.

const TIMEOUT_MS = 15_000;

async function tokenGet(tokenUrl: string, params: Record<string, string>, what: string, env: ProviderEnv | undefined): Promise<{ access_token: string; expires_in?: number; token_type?: string }> {
  const url = new URL(tokenUrl);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  const res = await http.fetch(what, url, { env, method: "GET", timeoutMs: TIMEOUT_MS });
  const body = res.body;
  if (res.status !== 200 || typeof body?.access_token !== "string") {
    // The URL carries the client secret and the code: only Graph's error fields go into the message.
    const err = callError(res.status, body, res.headers, what, body?.error?.fbtrace_id ?? res.headers.get("x-fb-trace-id"));
    // The token endpoint answers a wrong app id (101) or secret (code 1, elsewhere Graph's "unknown error") for good.
    const e = graphErrorOf(body);
    if ((e?.code === 1 || e?.code === 101) && !e.is_transient && res.status < 500) {
      throw new ProviderError(PROVIDER, "bad_request", `${what}: ${graphMessage(e, res.status)} (check META_ADS_CLIENT_ID and META_ADS_CLIENT_SECRET)`, err.detail);
    }
    throw err;
  }
  return body;
}

export const metaAdsOAuthHooks: OAuthHooks = {
  async exchangeCode({ code, redirectUri, client }): Promise<TokenSet> {
    const app = { client_id: client.clientId, client_secret: client.clientSecret };
    const short = await tokenGet(client.tokenUrl, { ...app, redirect_uri: redirectUri, code }, "code exchange", client.env);
    const long = await tokenGet(client.tokenUrl, { ...app, grant_type: "fb_exchange_token", fb_exchange_token: short.access_token }, "long-lived token exchange", client.env);
    return {
      accessToken: long.access_token,
      // Without expires_in Meta issued a token that does not expire (e.g. a system user's).
      expiresAt: typeof long.expires_in === "number" ? new Date(Date.now() + long.expires_in * 1000) : undefined,
      tokenType: long.token_type ?? "bearer",
      account: {},
    };
  },
};
