import type { ProviderManifest } from "@trendgate/connector-core";
import { slackOAuthHooks } from "./hooks.ts";
import { ChatSaveChannelBody, ChatSettingsBody } from "./schemas.ts";

// Slack as the team-chat provider. Bot scopes: list public (channels:read) and private
// (groups:read) channels, post and update cards (chat:write), join a public channel when it is chosen
// (channels:join). Slack rejects PKCE on this flow and authenticates the client in the form body; the exchange and
// refresh are hooks because oauth.v2.access answers failures with HTTP 200 and `ok:false`.
export const manifest: ProviderManifest<"chat"> = {
  id: "slack",
  displayName: "Slack",
  kind: "chat",
  operationName: "Slack",
  primary: true,
  auth: {
    mode: "oauth2",
    authorizationUrl: "https://slack.com/oauth/v2/authorize",
    tokenUrl: "https://slack.com/api/oauth.v2.access",
    scopes: ["channels:read", "groups:read", "chat:write", "channels:join"],
    scopeSeparator: ",",
    pkce: false,
    clientAuth: "client_secret_post",
    env: { clientId: "SLACK_CLIENT_ID", clientSecret: "SLACK_CLIENT_SECRET", authorizationUrl: "SLACK_AUTHORIZE_URL" },
    hooks: slackOAuthHooks,
  },
  baseUrl: { default: "https://slack.com/api/", env: "SLACK_API_URL" },
  rateLimit: { retryAfterHeader: "retry-after" },
  // No apiVersion: Slack's Web API is not versioned as a whole (a method names its own, e.g. oauth.v2.access).
  schemas: { selection: ChatSaveChannelBody, settings: ChatSettingsBody },
};
