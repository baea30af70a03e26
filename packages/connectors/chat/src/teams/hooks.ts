import { ProviderError, tokenSetOf, type OAuthClientSettings, type OAuthHooks, type TokenSet } from "@trendgate/connector-core";
import { PROVIDER, teamsError } from "./errors.ts";
import { http } from "./http.ts";

// The tenant's authorization on the Microsoft identity platform. The token answer holds no tenant id (and we do not
// read access tokens: Microsoft says they are opaque to clients), so after the exchange Graph's GET /organization
// names the tenant: `tenant_id` is what an interaction's tenant is checked against (interactions.ts). The refresh
// names the scopes again, as the v2.0 endpoint documents, and returns a new refresh token each time (rotation).
// Errors: only the AADSTS code and the description's first line go into messages (errors.ts); the requests carry
// the client secret, the code and the refresh token.

const TIMEOUT_MS = 15_000;
/** `offline_access` is what makes the identity platform issue a refresh token. */
export const SCOPES = ["offline_access", "User.Read", "Team.ReadBasic.All", "Channel.ReadBasic.All", "TeamsAppInstallation.ReadForTeam"];

async function grant(what: string, client: OAuthClientSettings, form: Record<string, string>): Promise<TokenSet> {
  const res = await http.fetch(what, client.tokenUrl, {
    env: client.env, method: "POST", timeoutMs: TIMEOUT_MS,
    form: new URLSearchParams({ client_id: client.clientId, client_secret: client.clientSecret, scope: SCOPES.join(" "), ...form }),
  });
  if (res.status === 200 && typeof res.body?.access_token === "string") return tokenSetOf(res.body);
  if (res.status === 200) throw new ProviderError(PROVIDER, "unavailable", `${what}: the answer holds no access token`, { status: 200, providerCode: "no_access_token" });
  throw teamsError(res, what, "token");
}

/** The signed-in user's tenant, from Graph (GET /organization lists exactly that one). */
async function tenantOf(tokens: TokenSet, client: OAuthClientSettings): Promise<Record<string, string | null>> {
  const res = await http.fetch("GET organization", new URL("organization?$select=id,displayName", client.baseUrl), {
    env: client.env, method: "GET", timeoutMs: TIMEOUT_MS, headers: { authorization: `Bearer ${tokens.accessToken}` },
  });
  if (res.status !== 200) throw teamsError(res, "GET organization", "graph");
  const org = Array.isArray(res.body?.value) ? res.body.value[0] : undefined;
  if (typeof org?.id !== "string" || !org.id) throw new ProviderError(PROVIDER, "bad_request", "GET organization: no tenant (is this a personal Microsoft account? Teams needs a work account)", { status: 200, providerCode: "no_tenant" });
  return { tenant_id: org.id, tenant_name: typeof org.displayName === "string" ? org.displayName : null };
}

export const teamsOAuthHooks: OAuthHooks = {
  async exchangeCode({ code, redirectUri, codeVerifier, client }) {
    const tokens = await grant("code exchange", client, {
      grant_type: "authorization_code", code, redirect_uri: redirectUri, ...(codeVerifier ? { code_verifier: codeVerifier } : {}),
    });
    return { ...tokens, account: await tenantOf(tokens, client) };
  },

  refresh: ({ refreshToken, client }) => grant("token refresh", client, { grant_type: "refresh_token", refresh_token: refreshToken }),

  // The identity platform has no revocation endpoint for these tokens (no RFC 7009): disconnecting forgets them here;
  // an admin removes the grant in Entra ID (Enterprise applications) if wanted.
};
