import { ProviderError, tokenSetOf, type OAuthHooks, type TokenSet } from "@trendgate/connector-core";
import { http } from "./http.ts";
import { PROVIDER } from "./errors.ts";

// The Microsoft identity platform's refresh_token grant wants `scope` again (documented as required on the v2.0
// endpoint: the same scopes as the consent, or fewer), which the standard grant does not send. Each refresh also
// returns a new refresh token (rotation): the framework keeps whichever came last. Errors are AADSTS JSON
// (`{error, error_description, error_codes, trace_id, correlation_id}`); only `error` and the description's first
// line (the AADSTS code and sentence) go into messages: the request carried the client secret and refresh token.

const TIMEOUT_MS = 15_000;
/** `offline_access` is what makes the identity platform issue a refresh token. */
export const SCOPES = ["https://ads.microsoft.com/msads.manage", "offline_access"];

export const microsoftAdsOAuthHooks: OAuthHooks = {
  async refresh({ refreshToken, client }): Promise<TokenSet> {
    const res = await http.fetch("token refresh", client.tokenUrl, {
      env: client.env, method: "POST", timeoutMs: TIMEOUT_MS,
      form: new URLSearchParams({ client_id: client.clientId, client_secret: client.clientSecret, grant_type: "refresh_token", refresh_token: refreshToken, scope: SCOPES.join(" ") }),
    });
    const body = res.body;
    if (res.status === 200 && typeof body?.access_token === "string") return tokenSetOf(body);
    const code = typeof body?.error === "string" ? body.error : undefined;
    const said = `token refresh: ${code ?? `HTTP ${res.status}`}${typeof body?.error_description === "string" ? `: ${body.error_description.split(/\r?\n/)[0].slice(0, 200)}` : ""}`;
    const detail = { status: res.status, providerCode: code };
    if (res.status === 429) throw new ProviderError(PROVIDER, "rate_limited", said, { ...detail, retryAfterMs: res.waitMs });
    if (res.status >= 500 || res.status === 200) throw new ProviderError(PROVIDER, "unavailable", said, detail);
    // invalid_grant (revoked, expired after 90 days unused, password changed), invalid_client: a person must act.
    throw new ProviderError(PROVIDER, "unauthorized", said, detail);
  },
};
