import { oauthClientOf, type ProviderManifest } from "@trendgate/connector-core";
import { connectionStates } from "@trendgate/db";
import type { GatewayDeps } from "../../deps.ts";
import { basePathOf } from "./paths.ts";

/** What every provider list says of a provider (GET /api/integrations/ads/providers, …/chat/providers). */
export interface ProviderState<C> {
  connector: C;
  id: string;
  display_name: string;
  /** The account has a connection that needs no new authorization. */
  connected: boolean;
  /** This server has the provider's OAuth client (without it, GET …/auth answers 501). */
  configured: boolean;
  base_path: string;
}

/** `connectors` in registry order, each with the account's connection state and whether this server can connect it. */
export async function providerStates<C extends { manifest: ProviderManifest }>(deps: GatewayDeps, accountId: string, connectors: C[]): Promise<ProviderState<C>[]> {
  const conns = await connectionStates(deps.db, accountId, { providers: connectors.map((c) => c.manifest.id) });
  return connectors.map((c) => ({
    connector: c, id: c.manifest.id, display_name: c.manifest.displayName,
    connected: conns.some((x) => x.provider === c.manifest.id && x.status !== "needs_reauth"),
    configured: !("missing" in oauthClientOf(c.manifest, deps.config.PROVIDER_ENV)),
    base_path: basePathOf(c.manifest),
  }));
}
