import { withPinnedVersion } from "./api-version.ts";
import { isOAuth, type OAuthClientSettings, type ProviderManifest } from "./manifest.ts";

// A provider's configuration comes from the environment variables its manifest names (client id and secret,
// endpoint overrides), so adding a provider needs no edit of the config package; `.env.example` lists them.

export type ProviderEnv = Readonly<Record<string, string | undefined>>;

export const baseUrlOf = (m: ProviderManifest, env: ProviderEnv): string => env[m.baseUrl.env] || m.baseUrl.default;

/** The OAuth client settings, or the names of the variables still to set. */
export function oauthClientOf(m: ProviderManifest, env: ProviderEnv): { client: OAuthClientSettings } | { missing: string[] } {
  if (!isOAuth(m)) return { missing: [] };
  const a = m.auth;
  const clientId = env[a.env.clientId];
  const clientSecret = env[a.env.clientSecret];
  const missing = [!clientId && a.env.clientId, !clientSecret && a.env.clientSecret].filter((x): x is string => !!x);
  if (missing.length) return { missing };
  return {
    client: {
      clientId: clientId!, clientSecret: clientSecret!,
      // A default URL naming the API version follows the provider's one version setting (Meta: /v27.0/dialog/oauth,
      // TikTok: /open_api/v1.3/oauth2/...).
      authorizationUrl: (a.env.authorizationUrl && env[a.env.authorizationUrl]) || withPinnedVersion(a.authorizationUrl, m, env),
      tokenUrl: (a.env.tokenUrl && env[a.env.tokenUrl]) || withPinnedVersion(a.tokenUrl, m, env),
      revocationUrl: (a.env.revocationUrl && env[a.env.revocationUrl]) || (a.revocationUrl && withPinnedVersion(a.revocationUrl, m, env)),
      baseUrl: baseUrlOf(m, env),
      env,
    },
  };
}
