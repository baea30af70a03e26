import type { ProviderManifest } from "@trendgate/connector-core";
import { SCOPES, teamsOAuthHooks } from "./hooks.ts";
import { TeamsSaveChannelBody, TeamsSettingsBody } from "./schemas.ts";

// Microsoft Teams as the team-chat provider. Two identities: the customer's tenant authorizes us through the browser
// (delegated Graph permissions, on the Microsoft identity platform's `/organizations` endpoint: work accounts only,
// PKCE as Microsoft supports it) so we can list its teams and channels and see where our app is installed; cards are
// posted by our bot (the Azure bot registration, TEAMS_APP_ID / TEAMS_APP_PASSWORD / TEAMS_BOT_TENANT_ID) through the Bot Framework
// Connector, with its own client-credentials token (bot.ts). The exchange is a hook only to learn the tenant id.
export const env = {
  /** The bot's Microsoft App ID: bot token client id, audience of interaction JWTs, the app looked for in teams. */
  appId: "TEAMS_APP_ID",
  /** The bot's client secret. */
  appPassword: "TEAMS_APP_PASSWORD",
  /**
   * The Entra tenant of the bot's app registration: its token comes from that tenant's endpoint (DEFAULTS.botTokenUrl).
   * `botframework.com` for a multi-tenant bot (Azure has created none since 2025-07-31).
   */
  botTenantId: "TEAMS_BOT_TENANT_ID",
  /** Token endpoint of the bot's client-credentials grant, in full (overrides the one TEAMS_BOT_TENANT_ID names). */
  botTokenUrl: "TEAMS_BOT_TOKEN_URL",
  /** The Bot Framework Connector's base URL for Teams (default SERVICE_URL). */
  serviceUrl: "TEAMS_SERVICE_URL",
  /** OpenID metadata naming the keys interaction JWTs are signed with (default OPENID_METADATA_URL). */
  openIdMetadataUrl: "TEAMS_OPENID_METADATA_URL",
} as const;

export const DEFAULTS = {
  /** `{tenant}` is TEAMS_BOT_TENANT_ID. */
  botTokenUrl: "https://login.microsoftonline.com/{tenant}/oauth2/v2.0/token",
  serviceUrl: "https://smba.trafficmanager.net/teams/",
  openIdMetadataUrl: "https://login.botframework.com/v1/.well-known/openidconfiguration",
} as const;

export const manifest: ProviderManifest<"chat"> = {
  id: "teams",
  displayName: "Microsoft Teams",
  kind: "chat",
  operationName: "Teams",
  auth: {
    mode: "oauth2",
    authorizationUrl: "https://login.microsoftonline.com/organizations/oauth2/v2.0/authorize",
    tokenUrl: "https://login.microsoftonline.com/organizations/oauth2/v2.0/token",
    scopes: SCOPES,
    scopeSeparator: " ",
    pkce: true,
    clientAuth: "client_secret_post",
    env: { clientId: "TEAMS_CLIENT_ID", clientSecret: "TEAMS_CLIENT_SECRET", authorizationUrl: "TEAMS_AUTHORIZE_URL", tokenUrl: "TEAMS_TOKEN_URL" },
    hooks: teamsOAuthHooks,
  },
  baseUrl: { default: "https://graph.microsoft.com/v1.0/", env: "TEAMS_GRAPH_URL" },
  rateLimit: { retryAfterHeader: "retry-after" },
  // No apiVersion pin: Graph's version is the base URL's path (v1.0, not retired), and the Bot Framework Connector's
  // is the /v3/ of its paths, which has no published sunset.
  schemas: { selection: TeamsSaveChannelBody, settings: TeamsSettingsBody },
  env,
};
