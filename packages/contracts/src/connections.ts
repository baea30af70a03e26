import { z } from "zod";
import { documentedEnum, text, Timestamp } from "./common.ts";

// Connections made through a browser OAuth flow (chat now; community ads and ads providers next): the answer of a
// connector's `GET …/auth`, its `GET …/connection` status, `DELETE …/connection`, and the one public callback.
// Tokens are never part of any of these.

/** Where every provider sends the browser back (OAUTH_REDIRECT_URL defaults to PUBLIC_BASE_URL + this path). */
export const OAUTH_CALLBACK_PATH = "/api/integrations/oauth/callback";

export const CONNECTION_STATUSES = {
  connected: "the connection works; its token is refreshed ahead of expiry",
  needs_reauth: "the provider refused the connection's credentials (revoked, or a refresh token refused): authorize again with `GET …/auth`",
  error: "the access token has expired and refreshing it keeps failing for a transient reason (provider down, rate limited); retried with backoff, see `last_error`",
} as const;
export const ConnectionStatusEnum = documentedEnum(CONNECTION_STATUSES);

export const ConnectionStatus = z
  .object({
    provider: z.string().meta({ description: "Provider id from the registry", example: "slack" }),
    kind: z.string().meta({ description: "Connector kind", example: "chat" }),
    status: ConnectionStatusEnum,
    account: z.record(z.string(), z.string().nullable()).meta({ description: "The connected account at the provider (non-secret facts, e.g. Slack `team_id`, `team_name`)" }),
    scopes: z.array(z.string()).meta({ description: "Scopes the provider granted" }),
    token_expires_at: Timestamp.nullable().meta({ description: "When the current access token expires (null: it does not); it is refreshed before then" }),
    last_error: z.string().nullable(),
    last_error_at: Timestamp.nullable(),
    connected_at: Timestamp.meta({ description: "When the account was first connected (kept across re-authorizations)" }),
    updated_at: Timestamp,
  })
  .meta({ id: "ConnectionStatus", description: "A browser-OAuth connection's state; its tokens are never returned" });

export const ConnectableProvider = z
  .object({
    provider: z.string().meta({ description: "Provider id from the registry", example: "slack" }),
    kind: z.string().meta({ description: "Connector kind: `chat`, `workflow`, `conversions`, `ads`", example: "chat" }),
    display_name: z.string(),
    base_path: z.string().meta({ description: "Where its routes are: `{base_path}/connection`, and `{base_path}/auth` for a browser-OAuth provider", example: "/api/integrations/chat" }),
    oauth: z.boolean().meta({ description: "Connected in the browser (GET `{base_path}/auth`); otherwise with credentials sent to the API" }),
    configured: z.boolean().meta({ description: "This server has the provider's OAuth client (false: GET …/auth answers 501); true for credential providers" }),
    connect_hint: z.string().nullable().meta({
      description: "How to connect a provider that has no browser flow (which API call, with what), from its manifest; null for browser-OAuth providers",
      example: "Connect with the API: POST /api/integrations/workflow/connect with the instance's URL and an API key (n8n: Settings › n8n API).",
    }),
    connection: ConnectionStatus.nullable().meta({ description: "The account's connection, as GET `{base_path}/connection` shows it; null when not connected" }),
  })
  .meta({ id: "ConnectableProvider" });

export const ConnectionList = z
  .object({ data: z.array(ConnectableProvider) })
  .meta({ id: "ConnectionList", description: "Every provider this server connects (social connectors aside), in the registry's order, each with the account's connection or null" });

export const AuthorizationStart = z
  .object({
    authorization_url: z.string().meta({ description: "Open this in the user's browser: the provider's consent page" }),
    state: z.string().meta({ description: "The flow's one-time state (also in the URL); valid until `expires_at`" }),
    expires_at: Timestamp,
  })
  .meta({ id: "AuthorizationStart" });

export const AuthorizationQuery = z.object({
  return_url: text({ min: 1, max: 2048, trim: true }).optional().meta({
    description: "Where the browser goes after the callback (`?connection=<provider>&status=connected|error&error=<code>` appended); its origin must be listed in OAUTH_RETURN_ORIGINS or be this server's own (PUBLIC_BASE_URL, where the web console lives). Without it the callback answers a small HTML page.",
    example: "https://app.example.com/settings/integrations",
  }),
});

export const REVOCATIONS = {
  revoked: "the tokens were revoked at the provider",
  not_supported: "the provider has no revocation call; the tokens were deleted here",
  failed: "revoking at the provider failed (see `revocation_error`); the tokens were deleted here anyway",
} as const;

export const Disconnected = z
  .object({
    provider: z.string(),
    revocation: documentedEnum(REVOCATIONS),
    revocation_error: z.string().nullable(),
  })
  .meta({ id: "Disconnected" });

/** What a provider sends back to the callback (RFC 6749 §4.1.2); the rest of the query is ignored. */
export const OAuthCallbackQuery = z.object({
  state: text({ min: 1, max: 512 }).optional(),
  code: text({ min: 1, max: 4096 }).optional(),
  error: text({ min: 1, max: 256 }).optional().meta({ description: "e.g. `access_denied` when the user declined" }),
  error_description: text({ max: 2048 }).optional(),
  // Providers that rename `code` (manifest auth.paramNames.code) send it under their own name.
}).catchall(text({ max: 4096 }));

/** Outcomes of the callback, as `error=<code>` on the return_url redirect. */
export const CALLBACK_ERRORS = {
  invalid_state: "the state is unknown or was already used (each flow's state works once)",
  expired_state: "the flow was started too long ago (OAUTH_STATE_TTL_SECONDS)",
  access_denied: "the user declined at the provider",
  provider_error: "the provider answered with another error",
  exchange_failed: "exchanging the code for tokens failed",
  provider_not_configured: "the provider's client id or secret is no longer configured",
  invalid_request: "the callback carried neither a code nor an error",
} as const;
export type CallbackError = keyof typeof CALLBACK_ERRORS;

export type ConnectionStatus = z.infer<typeof ConnectionStatus>;
export type AuthorizationStart = z.infer<typeof AuthorizationStart>;
export type Disconnected = z.infer<typeof Disconnected>;
