import type { ProviderManifest } from "@trendgate/connector-core";

// Where a provider's routes live. Kinds whose spec paths name no provider (chat, workflow, community ads) have exactly one provider in the
// registry (ConnectorRegistry.single); the others carry the provider id as a path segment.
const BASES: Record<ProviderManifest["kind"], (id: string) => string> = {
  social: (id) => `/api/integrations/social/${id}`,
  chat: () => "/api/integrations/chat",
  workflow: () => "/api/integrations/workflow",
  conversions: () => "/api/integrations/community-ads",
  ads: (id) => `/api/integrations/ads/${id}`,
};

export const basePathOf = (m: ProviderManifest) => BASES[m.kind](m.id);
