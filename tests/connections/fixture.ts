import type { ChatConnector } from "@trendgate/connector-chat";
import type { OAuth2Auth } from "@trendgate/connector-core";

// A test-only OAuth provider whose manifest points at the oidc-provider peer (tests/peers/oauth-server.ts),
// registered through the registry given to the gateway or to Connections, so the whole flow runs through the real
// routes and lifecycle. Its kind is chat, so its routes are the spec's /api/integrations/chat/....

export const REDIRECT_URI = "http://localhost:3000/api/integrations/oauth/callback"; // PUBLIC_BASE_URL's default
export const RETURN_ORIGIN = "https://app.example.com";
export const FIXTURE_ENV = { clientId: "FIXTURE_OAUTH_CLIENT_ID", clientSecret: "FIXTURE_OAUTH_CLIENT_SECRET" };

export interface PeerUrls {
  url: string;
  authorizationUrl: string;
  tokenUrl: string;
  revocationUrl: string;
}

export function fixtureConnector(peer: PeerUrls, auth: Partial<OAuth2Auth> = {}): ChatConnector {
  return {
    manifest: {
      id: "fixture", displayName: "Fixture Chat", kind: "chat", operationName: "FixtureChat", primary: true,
      auth: {
        mode: "oauth2", authorizationUrl: peer.authorizationUrl, tokenUrl: peer.tokenUrl, revocationUrl: peer.revocationUrl,
        scopes: ["read", "write"], scopeSeparator: " ", pkce: true, clientAuth: "client_secret_basic", env: FIXTURE_ENV, ...auth,
      },
      baseUrl: { default: peer.url, env: "FIXTURE_API_URL" },
      schemas: {},
    },
    client() { throw new Error("the fixture provider has no API"); },
    parseMention: () => null,
    channelIdHint: "the channel id",
    interactions: { signingSecretEnv: "FIXTURE_SIGNING_SECRET", verify: () => ({ ok: false, reason: "fixture" }), parse: () => null, fromWorkspaceOf: () => false, privateReply: (text) => ({ text }) },
  };
}

