import type { z } from "zod";
import type { TokenSet } from "./tokens.ts";

// A provider is described once, by a manifest in its own folder (packages/connectors/<kind>/<provider>/manifest.ts),
// after Nango's providers.yaml: data for everything that is data, named hooks for the deviations. The gateway's
// routes, the OpenAPI document, the provider lists and the worker's dispatch are generated from these.

/** Connector kinds; each has one small interface in its package (packages/connectors/<kind>/src/kind.ts). */
export type ConnectorKind = "social" | "chat" | "workflow" | "conversions" | "ads";

/** Client settings resolved from configuration (never from a request). */
export interface OAuthClientSettings {
  clientId: string;
  clientSecret: string;
  authorizationUrl: string;
  tokenUrl: string;
  revocationUrl?: string;
  /** The provider's API base (for hooks that exchange through the provider's own API, e.g. Slack's oauth.v2.access). */
  baseUrl: string;
  /** The configuration's environment: its OUTBOUND_ALLOWLIST decides which private addresses token calls may reach. */
  env?: Readonly<Record<string, string | undefined>>;
}

/** A provider's deviations from RFC 6749, each a named hook in its folder. */
export interface OAuthHooks {
  /** Replaces the standard code exchange (Slack: `ok:false` with HTTP 200; TikTok: JSON body and `auth_code`; Meta: GET). */
  exchangeCode?(input: { code: string; redirectUri: string; codeVerifier?: string; client: OAuthClientSettings }): Promise<TokenSet>;
  /** Replaces the standard refresh_token grant. */
  refresh?(input: { refreshToken: string; client: OAuthClientSettings }): Promise<TokenSet>;
  /** Revokes at the provider (RFC 7009 by default when revocationUrl is set). */
  revoke?(input: { tokens: TokenSet; client: OAuthClientSettings }): Promise<void>;
}

/** OAuth 2.0 authorization-code flow (browser). */
export interface OAuth2Auth {
  mode: "oauth2";
  authorizationUrl: string;
  tokenUrl: string;
  revocationUrl?: string;
  scopes: string[];
  /** How scopes are joined in the authorization URL (Slack and TikTok use ","). */
  scopeSeparator: " " | ",";
  /** Send a PKCE S256 challenge (off for providers that reject it, e.g. Slack, LinkedIn). */
  pkce: boolean;
  /** How the client authenticates at the token endpoint. */
  clientAuth: "client_secret_basic" | "client_secret_post";
  /** Extra authorization parameters (e.g. Google `access_type=offline`, Reddit `duration=permanent`). */
  authorizationParams?: Record<string, string>;
  /**
   * Where a provider renames RFC 6749's parameters: the client id on the consent page (TikTok `app_id`) and the
   * code on the way back to the callback (TikTok `auth_code`).
   */
  paramNames?: { clientId?: string; code?: string };
  /** Configuration variables: client id and secret, and optional endpoint overrides (tests, proxies). */
  env: { clientId: string; clientSecret: string; authorizationUrl?: string; tokenUrl?: string; revocationUrl?: string };
  hooks?: OAuthHooks;
}

/** Credentials sent in the connection body (API keys, bearer tokens): no browser flow. */
export interface CredentialsAuth {
  mode: "credentials";
}

/** How a provider says when to come back: read by its HTTP path (ProviderHttp) into each answer's wait (after Nango's proxy.retry). */
export interface RateLimitRules {
  /** Header with seconds (or an HTTP date) to wait, e.g. `retry-after`. */
  retryAfterHeader?: string;
  /** Header with the window's reset time, and its unit. */
  resetHeader?: string;
  resetUnit?: "epoch_seconds" | "seconds";
  remainingHeader?: string;
  limitHeader?: string;
}

/**
 * The vendor API version a provider's calls name, declared once so every client reads it the same way
 * (`pinnedVersion`, api-version.ts) and tests/connectors/api-versions.test.ts goes red 90 days before its sunset.
 */
export interface ApiVersionPin {
  /** The configuration variable that overrides the default; absent where the version is not configurable. */
  env?: string;
  default: string;
  /** What an override must look like (checked before any call names it). */
  pattern: RegExp;
  /**
   * YYYY-MM-DD the vendor retires `default` for the API the provider calls (not a sibling API's longer date), or its
   * rule, approximated; null when it publishes none.
   */
  sunset: string | null;
  /** The vendor's page dating the version's sunset (its version or sunset table). */
  source: string;
}

export interface ProviderManifest<K extends ConnectorKind = ConnectorKind> {
  /** Stable id: path segment, registry key, `provider` column. Lowercase letters, digits and `_`. */
  id: string;
  displayName: string;
  kind: K;
  /** Used in OpenAPI operation ids (`put${operationName}Connection`). */
  operationName: string;
  /**
   * The provider the kind's spec paths name without a provider segment (chat: Slack at /api/integrations/chat/...).
   * Other providers of the kind live under /api/integrations/<kind path>/<id>/... (Teams: /api/integrations/chat/teams/...).
   */
  primary?: boolean;
  auth: OAuth2Auth | CredentialsAuth;
  /** The provider's API base URL and the configuration variable that overrides it. */
  baseUrl: { default: string; env: string };
  /** The provider's own settings (name -> configuration variable), read from PROVIDER_ENV by its folder's code. */
  env?: Record<string, string>;
  rateLimit?: RateLimitRules;
  /** The vendor API version the provider's calls name; `{apiVersion}` in its OAuth URLs is replaced by it too. */
  apiVersion?: ApiVersionPin;
  /** Request bodies this provider's routes accept (validated, and documented in OpenAPI). */
  schemas: { connection?: z.ZodType; selection?: z.ZodType; settings?: z.ZodType };
  /**
   * How a person connects a provider that has no browser flow (credentials sent to the API), for pages that list
   * connections (`connect_hint` of GET /api/integrations/connections). `{base_path}` stands for where its routes are.
   */
  connectHint?: string;
}

export const isOAuth = (m: ProviderManifest): m is ProviderManifest & { auth: OAuth2Auth } => m.auth.mode === "oauth2";
