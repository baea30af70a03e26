import { ProviderError, type OAuthHooks, type ProviderEnv, type TokenSet } from "@trendgate/connector-core";
import { http } from "./http.ts";
import { callError, envelopeOf, PROVIDER, succeeded, TIKTOK_CODES, tiktokMessage } from "./errors.ts";

// TikTok's advertiser authorization deviates from RFC 6749: the code (TikTok's `auth_code`) is exchanged with a JSON
// body `{app_id, secret, auth_code}` and the answer is TikTok's envelope (`code != 0` with HTTP 200 is a refusal).
// The token is long-term and does not expire: no expiry, no refresh token; it ends when revoked, which is a JSON POST
// `{app_id, secret, access_token}` to /oauth2/revoke_token/. The authorized advertiser ids come back with the token
// and are kept as the connection's (non-secret) account facts.

const TIMEOUT_MS = 15_000;

async function postJson(url: string, body: Record<string, string>, what: string, env: ProviderEnv | undefined): Promise<any> {
  const res = await http.fetch(what, url, { env, method: "POST", timeoutMs: TIMEOUT_MS, json: body });
  const parsed: unknown = res.body;
  if (succeeded(res.status, parsed)) return envelopeOf(parsed)!.data ?? {};
  // The body sent carries the secret and the code: only TikTok's code, message and request_id go into the error.
  const requestId = typeof envelopeOf(parsed)?.request_id === "string" ? (envelopeOf(parsed)!.request_id as string) : null;
  const code = envelopeOf(parsed)?.code;
  if (code === TIKTOK_CODES.badApp) {
    throw new ProviderError(PROVIDER, "bad_request", `${what}: ${tiktokMessage(res.status, parsed)} (check TIKTOK_ADS_CLIENT_ID and TIKTOK_ADS_CLIENT_SECRET: the app id and its secret)`, { status: res.status, providerCode: String(code) });
  }
  if (code === TIKTOK_CODES.badAuthCode) {
    throw new ProviderError(PROVIDER, "bad_request", `${what}: ${tiktokMessage(res.status, parsed)} (the auth_code is valid for about 10 minutes and once: authorize again)`, { status: res.status, providerCode: String(code) });
  }
  throw callError(res.status, parsed, what, requestId);
}

export const tiktokAdsOAuthHooks: OAuthHooks = {
  async exchangeCode({ code, client }): Promise<TokenSet> {
    const data = await postJson(client.tokenUrl, { app_id: client.clientId, secret: client.clientSecret, auth_code: code }, "code exchange", client.env);
    if (typeof data?.access_token !== "string" || !data.access_token) {
      throw new ProviderError(PROVIDER, "unavailable", "code exchange: TikTok answered without an access token", { providerCode: "no_token" });
    }
    const advertisers = Array.isArray(data.advertiser_ids) ? data.advertiser_ids.map(String) : [];
    return {
      accessToken: data.access_token,
      expiresAt: undefined, // long-term: does not expire, revoke only
      scopes: Array.isArray(data.scope) ? data.scope.map(String) : undefined,
      tokenType: "access-token",
      account: { advertiser_ids: advertisers.join(",") || null },
    };
  },
  async revoke({ tokens, client }): Promise<void> {
    // The manifest always names the endpoint (in the configured API version); a settings object without it is a bug.
    if (!client.revocationUrl) throw new ProviderError(PROVIDER, "bad_request", "revocation: no revocation URL configured (TIKTOK_ADS_REVOKE_URL)", {});
    await postJson(client.revocationUrl, { app_id: client.clientId, secret: client.clientSecret, access_token: tokens.accessToken }, "revocation", client.env);
  },
};
