import { isOAuth, OAuth2Client, oauthClientOf, type OAuthManifest, type ProviderManifest } from "@trendgate/connector-core";
import { ConnectionsError } from "./errors.ts";

/** What Connections needs of the registry (ConnectorRegistry fits); tests pass their own. */
export interface ProviderLookup {
  get(id: string): { manifest: ProviderManifest } | undefined;
}

export function oauthManifest(providers: ProviderLookup, id: string): OAuthManifest {
  const m = providers.get(id)?.manifest;
  if (!m) throw new ConnectionsError("unknown_provider", `No provider ${id} in the registry`);
  if (!isOAuth(m)) throw new ConnectionsError("not_oauth", `${m.displayName} does not connect through OAuth`);
  return m;
}

/** Whether the provider connects through OAuth (else through credentials); ConnectionsError when unknown. */
export function isOAuthProvider(providers: ProviderLookup, id: string): boolean {
  const m = providers.get(id)?.manifest;
  if (!m) throw new ConnectionsError("unknown_provider", `No provider ${id} in the registry`);
  return isOAuth(m);
}

/** The provider's OAuth client built from configuration, or ConnectionsError naming the variables to set. */
export function oauthClient(providers: ProviderLookup, id: string, env: Readonly<Record<string, string | undefined>>, timeoutMs: number): OAuth2Client {
  const m = oauthManifest(providers, id);
  const c = oauthClientOf(m, env);
  if ("missing" in c) {
    throw new ConnectionsError("provider_not_configured",
      `${m.displayName} is not configured on this server: set ${c.missing.join(" and ")} (the OAuth app's client id and secret)`, c.missing);
  }
  return new OAuth2Client(m, c.client, { timeoutMs });
}
