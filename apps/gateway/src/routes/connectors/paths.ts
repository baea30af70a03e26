import { isOAuth, type ProviderManifest } from "@trendgate/connector-core";

// Where a provider's routes live. Kinds whose spec paths name no provider (workflow, community ads) have exactly one
// provider in the registry (ConnectorRegistry.single); chat's spec paths are its primary provider's (Slack), and a
// second chat provider adds its id (/api/integrations/chat/teams/...); the others carry the provider id as a path segment.
const BASES: Record<ProviderManifest["kind"], (id: string, primary: boolean) => string> = {
  social: (id) => `/api/integrations/social/${id}`,
  chat: (id, primary) => (primary ? "/api/integrations/chat" : `/api/integrations/chat/${id}`),
  workflow: () => "/api/integrations/workflow",
  conversions: () => "/api/integrations/community-ads",
  ads: (id) => `/api/integrations/ads/${id}`,
};

export const basePathOf = (m: ProviderManifest) => BASES[m.kind](m.id, m.primary === true);

/** A credentials provider's connect hint from its manifest, with `{base_path}` filled in; null for OAuth providers or none given. */
export const connectHintOf = (m: ProviderManifest): string | null =>
  (isOAuth(m) ? null : m.connectHint?.replaceAll("{base_path}", basePathOf(m)) ?? null);
