import { googleAds, linkedinAds, metaAds, microsoftAds, pinterestAds, snapAds, tiktokAds, type AdsConnector } from "@trendgate/connector-ads";
import type { ConnectorKind, ProviderManifest } from "@trendgate/connector-core";
import { slack, teams, type ChatConnector } from "@trendgate/connector-chat";
import { redditAds, type ConversionsConnector } from "@trendgate/connector-conversions";
import { googleTrends, reddit, x, youtube, type SocialConnector } from "@trendgate/connector-social";
import { n8n, type WorkflowConnector } from "@trendgate/connector-workflow";

// The registry: every provider, one line each. Routes, the OpenAPI document, provider lists and worker dispatch
// are generated from the registry a gateway or worker is given (this one by default, a test's own otherwise), so
// no `if (provider === ...)` sits outside a provider's folder. Adding a provider: add its folder under
// packages/connectors/<kind>/src/<provider>/, export it from its kind's index, and add it here.

export type Connector = SocialConnector | ChatConnector | ConversionsConnector | WorkflowConnector | AdsConnector;

export const CONNECTORS: readonly Connector[] = [
  x,
  reddit,
  youtube,
  googleTrends,
  slack,
  teams,
  n8n,
  redditAds,
  googleAds,
  metaAds,
  tiktokAds,
  linkedinAds,
  microsoftAds,
  snapAds,
  pinterestAds,
];

export interface ConnectorsByKind {
  social: SocialConnector;
  chat: ChatConnector;
  workflow: WorkflowConnector;
  conversions: ConversionsConnector;
  ads: AdsConnector;
}

export class ConnectorRegistry {
  private readonly byId = new Map<string, Connector>();

  constructor(readonly all: readonly Connector[] = CONNECTORS) {
    for (const c of all) {
      if (!/^[a-z][a-z0-9_]*$/.test(c.manifest.id)) throw new Error(`connector id ${c.manifest.id}: lowercase letters, digits and _ only`);
      if (this.byId.has(c.manifest.id)) throw new Error(`connector ${c.manifest.id} is registered twice`);
      this.byId.set(c.manifest.id, c);
    }
  }

  get(id: string): Connector | undefined {
    return this.byId.get(id);
  }

  /** The provider `id` when it is one of `kind` (a stored row names its provider; a removed one is undefined). */
  find<K extends ConnectorKind>(kind: K, id: string): ConnectorsByKind[K] | undefined {
    const c = this.byId.get(id);
    return c?.manifest.kind === kind ? (c as ConnectorsByKind[K]) : undefined;
  }

  ofKind<K extends ConnectorKind>(kind: K): ConnectorsByKind[K][] {
    return this.all.filter((c) => c.manifest.kind === kind) as ConnectorsByKind[K][];
  }

  /** The one provider of a kind whose spec paths carry no provider segment (chat: /api/integrations/chat/...). */
  single<K extends ConnectorKind>(kind: K): ConnectorsByKind[K] {
    const list = this.ofKind(kind);
    if (list.length !== 1) throw new Error(`kind ${kind} must have exactly one provider in the registry (has ${list.length})`);
    return list[0];
  }

  manifests(): ProviderManifest[] {
    return this.all.map((c) => c.manifest);
  }
}

export const registry = new ConnectorRegistry();
