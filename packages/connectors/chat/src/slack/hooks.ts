import type { OauthV2AccessResponse } from "@slack/web-api";
import { ProviderError, type OAuthHooks, type TokenSet } from "@trendgate/connector-core";
import { slackCall, slackError } from "./errors.ts";
import { webClient } from "./web.ts";

// Slack's OAuth v2 deviates from RFC 6749: the token endpoint is a Web API method (oauth.v2.access) that answers
// failures with HTTP 200 and `ok:false`, the scopes come back comma-separated, and the account facts (workspace,
// bot user) ride along in the token response. So exchange, refresh and revoke go through the official client.
// Token rotation (optional per app): the response then carries `expires_in` (12 h) and a `refresh_token`; a refresh
// answers a new refresh token, which replaces the old one.

const tokenSetOf = (r: OauthV2AccessResponse, now = Date.now()): TokenSet => {
  if (!r.access_token) {
    throw new ProviderError("slack", "bad_request", "oauth.v2.access: the answer holds no bot token (was the app installed with bot scopes?)", { status: 200, providerCode: "no_bot_token" });
  }
  return {
    accessToken: r.access_token,
    refreshToken: r.refresh_token || undefined,
    expiresAt: typeof r.expires_in === "number" ? new Date(now + r.expires_in * 1000) : undefined,
    scopes: r.scope ? r.scope.split(",").map((s) => s.trim()).filter(Boolean) : undefined,
    tokenType: r.token_type ?? "bot",
    account: {
      team_id: r.team?.id ?? null,
      team_name: r.team?.name ?? null,
      enterprise_id: r.enterprise?.id ?? null,
      bot_user_id: r.bot_user_id ?? null,
      app_id: r.app_id ?? null,
    },
  };
};

export const slackOAuthHooks: OAuthHooks = {
  async exchangeCode({ code, redirectUri, client }) {
    const r = await slackCall("oauth.v2.access", () =>
      webClient(client.baseUrl, undefined, client.env).oauth.v2.access({ client_id: client.clientId, client_secret: client.clientSecret, code, redirect_uri: redirectUri }));
    return tokenSetOf(r);
  },

  async refresh({ refreshToken, client }) {
    const r = await slackCall("oauth.v2.access (refresh)", () =>
      webClient(client.baseUrl, undefined, client.env).oauth.v2.access({ client_id: client.clientId, client_secret: client.clientSecret, grant_type: "refresh_token", refresh_token: refreshToken }));
    return tokenSetOf(r);
  },

  async revoke({ tokens, client }) {
    try {
      await webClient(client.baseUrl, tokens.accessToken, client.env).auth.revoke();
    } catch (e) {
      const err = slackError(e, "auth.revoke");
      // A token Slack no longer accepts (revoked, expired, app uninstalled) is as good as revoked: disconnecting
      // goes on. Anything else (Slack down, rate limited) is for the caller to decide on.
      if (err.kind === "unauthorized") return;
      throw err;
    }
  },
};
