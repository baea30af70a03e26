// The generic OAuth 2.0 client (packages/connectors/core/src/oauth) against a strict authorization server written by
// others (oidc-provider): code + PKCE, both client authentication methods, refresh (rotating or not), refused and
// failed refreshes mapped onto the error vocabulary, RFC 7009 revocation.
import net from "node:net";
import { OAuth2Client, ProviderError, type OAuth2Auth, type OAuthManifest } from "@trendgate/connector-core";
import { startOAuthPeer, type OAuthPeer, type OAuthPeerClient } from "../peers/oauth-server.ts";
import { fixtureConnector, REDIRECT_URI } from "./kit.ts";

// The vendor stand-ins listen on loopback; provider calls reach private addresses only where OUTBOUND_ALLOWLIST allows.
process.env.OUTBOUND_ALLOWLIST = "127.0.0.1";

let peer: OAuthPeer;
beforeAll(async () => { peer = await startOAuthPeer({ redirectUris: [REDIRECT_URI] }); });
afterAll(() => peer?.close());
beforeEach(() => { peer.decision = "approve"; peer.tokenOutage = null; });

function clientFor(p: OAuthPeer, c: OAuthPeerClient, auth: Partial<OAuth2Auth> = {}, settings: { revocationUrl?: string; tokenUrl?: string } = {}) {
  const m = fixtureConnector(p, auth).manifest as OAuthManifest;
  return new OAuth2Client(m, {
    clientId: c.id, clientSecret: c.secret, authorizationUrl: p.authorizationUrl, tokenUrl: settings.tokenUrl ?? p.tokenUrl,
    revocationUrl: "revocationUrl" in settings ? settings.revocationUrl : p.revocationUrl, baseUrl: p.url,
  }, { timeoutMs: 5000 });
}

/** Authorization URL -> consent at the server -> the code it sends back. */
async function authorize(client: OAuth2Client, p: OAuthPeer = peer) {
  const codeVerifier = client.newCodeVerifier();
  const url = new URL(await client.authorizationUrl({ redirectUri: REDIRECT_URI, state: "state-1", codeVerifier }));
  const back = await p.browse(url.href);
  return { url, back, code: back.searchParams.get("code"), codeVerifier };
}

const failure = async (p: Promise<unknown>): Promise<ProviderError> => {
  const err = await p.then(() => null, (e) => e);
  expect(err).toBeInstanceOf(ProviderError);
  return err as ProviderError;
};

describe.each([["client_secret_basic", "basic"], ["client_secret_post", "post"]] as const)("%s", (method, which) => {
  test("code + PKCE S256: the code is exchanged once for tokens with expiry and scopes", async () => {
    const client = clientFor(peer, peer.clients[which], { clientAuth: method });
    const before = peer.counts.authorization_code;
    const { url, back, code, codeVerifier } = await authorize(client);
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(url.searchParams.get("scope")).toBe("read write");
    expect(back.searchParams.get("state")).toBe("state-1");
    expect(code).toBeTruthy();

    const tokens = await client.exchangeCode({ code: code!, redirectUri: REDIRECT_URI, codeVerifier });
    expect(tokens.accessToken).toEqual(expect.any(String));
    expect(tokens.refreshToken).toEqual(expect.any(String));
    expect(tokens.scopes).toEqual(["read", "write"]);
    expect(tokens.expiresAt!.getTime()).toBeGreaterThan(Date.now());
    expect(peer.counts.authorization_code).toBe(before + 1);

    // Authorization codes are single-use.
    const again = await failure(client.exchangeCode({ code: code!, redirectUri: REDIRECT_URI, codeVerifier }));
    expect(again.detail.providerCode).toBe("invalid_grant");
  });

  test("client authentication is checked: a wrong secret fails the exchange and the refresh", async () => {
    const good = clientFor(peer, peer.clients[which], { clientAuth: method });
    const { code, codeVerifier } = await authorize(good);
    const wrong = clientFor(peer, { id: peer.clients[which].id, secret: "not-the-secret" }, { clientAuth: method });
    const ex = await failure(wrong.exchangeCode({ code: code!, redirectUri: REDIRECT_URI, codeVerifier }));
    expect(ex.detail.providerCode).toBe("invalid_client");
    expect(ex.kind).toBe("unauthorized");

    const { code: code2, codeVerifier: v2 } = await authorize(good);
    const tokens = await good.exchangeCode({ code: code2!, redirectUri: REDIRECT_URI, codeVerifier: v2 });
    const rf = await failure(wrong.refresh(tokens.refreshToken!));
    expect([rf.kind, rf.detail.providerCode]).toEqual(["unauthorized", "invalid_client"]);
  });
});

test("PKCE is checked: a wrong verifier fails the exchange, and a flow without PKCE is refused at consent", async () => {
  const client = clientFor(peer, peer.clients.basic);
  const { code } = await authorize(client);
  const err = await failure(client.exchangeCode({ code: code!, redirectUri: REDIRECT_URI, codeVerifier: client.newCodeVerifier() }));
  expect([err.kind, err.detail.providerCode]).toEqual(["unauthorized", "invalid_grant"]);

  const noPkce = clientFor(peer, peer.clients.basic, { pkce: false });
  const { back, code: none } = await authorize(noPkce);
  expect(none).toBeNull();
  expect(back.searchParams.get("error")).toBe("invalid_request");
});

test("the user declining comes back as error=access_denied", async () => {
  peer.decision = "deny";
  const { back, code } = await authorize(clientFor(peer, peer.clients.basic));
  expect(code).toBeNull();
  expect(back.searchParams.get("error")).toBe("access_denied");
});

test("refresh: a rotated refresh token replaces the old one, which the server then refuses (unauthorized)", async () => {
  const client = clientFor(peer, peer.clients.basic);
  const { code, codeVerifier } = await authorize(client);
  const first = await client.exchangeCode({ code: code!, redirectUri: REDIRECT_URI, codeVerifier });
  const before = peer.counts.refresh_token;
  const next = await client.refresh(first.refreshToken!);
  expect(peer.counts.refresh_token).toBe(before + 1);
  expect(next.accessToken).not.toBe(first.accessToken);
  expect(next.refreshToken).not.toBe(first.refreshToken);
  const reused = await failure(client.refresh(first.refreshToken!));
  expect([reused.kind, reused.detail.providerCode, reused.retryable]).toEqual(["unauthorized", "invalid_grant", false]);
  expect(reused.message).not.toContain(first.refreshToken!);
});

test("refresh: when the answer holds no refresh token, the old one is kept (and keeps working)", async () => {
  const lazy = await startOAuthPeer({ redirectUris: [REDIRECT_URI], rotateRefreshTokens: false, refreshAnswersOmitRefreshToken: true });
  try {
    const client = clientFor(lazy, lazy.clients.basic);
    const { code, codeVerifier } = await authorize(client, lazy);
    const first = await client.exchangeCode({ code: code!, redirectUri: REDIRECT_URI, codeVerifier });
    const second = await client.refresh(first.refreshToken!);
    expect(second.refreshToken).toBe(first.refreshToken);
    const third = await client.refresh(second.refreshToken!);
    expect(third.accessToken).not.toBe(second.accessToken);
    expect(lazy.counts.refresh_token).toBe(2);
  } finally {
    await lazy.close();
  }
});

test("a refresh token the server no longer knows (grant revoked at the provider) is unauthorized", async () => {
  const client = clientFor(peer, peer.clients.basic);
  const { code, codeVerifier } = await authorize(client);
  const tokens = await client.exchangeCode({ code: code!, redirectUri: REDIRECT_URI, codeVerifier });
  peer.forgetGrants();
  const err = await failure(client.refresh(tokens.refreshToken!));
  expect([err.kind, err.detail.providerCode]).toEqual(["unauthorized", "invalid_grant"]);
});

test("outages are retryable: 5xx is unavailable (with Retry-After), 429 rate_limited, an unreachable server unavailable", async () => {
  const client = clientFor(peer, peer.clients.basic);
  const { code, codeVerifier } = await authorize(client);
  const tokens = await client.exchangeCode({ code: code!, redirectUri: REDIRECT_URI, codeVerifier });
  peer.tokenOutage = 503;
  const down = await failure(client.refresh(tokens.refreshToken!));
  expect([down.kind, down.detail.status, down.detail.retryAfterMs, down.retryable]).toEqual(["unavailable", 503, 7000, true]);
  peer.tokenOutage = 429;
  const limited = await failure(client.refresh(tokens.refreshToken!));
  expect([limited.kind, limited.detail.retryAfterMs]).toEqual(["rate_limited", 7000]);
  peer.tokenOutage = null;

  const port = await new Promise<number>((r) => { const s = net.createServer().listen(0, "127.0.0.1", () => { const p = (s.address() as net.AddressInfo).port; s.close(() => r(p)); }); });
  const gone = clientFor(peer, peer.clients.basic, {}, { tokenUrl: `http://127.0.0.1:${port}/token` });
  const unreachable = await failure(gone.refresh(tokens.refreshToken!));
  expect(unreachable.kind).toBe("unavailable");
  // The refresh token still works: none of these consumed it.
  await expect(client.refresh(tokens.refreshToken!)).resolves.toMatchObject({ accessToken: expect.any(String) });
});

test("revocation (RFC 7009): both tokens are revoked and the grant ends; without a revocation endpoint: not_supported", async () => {
  const client = clientFor(peer, peer.clients.basic);
  const { code, codeVerifier } = await authorize(client);
  const tokens = await client.exchangeCode({ code: code!, redirectUri: REDIRECT_URI, codeVerifier });
  const before = peer.counts.revocations;
  await expect(client.revoke(tokens)).resolves.toBe("revoked");
  expect(peer.counts.revocations).toBe(before + 2);
  expect(peer.counts.revokedHints.slice(-2)).toEqual(["refresh_token", "access_token"]);
  const err = await failure(client.refresh(tokens.refreshToken!));
  expect(err.kind).toBe("unauthorized");

  const noRevoke = clientFor(peer, peer.clients.basic, {}, { revocationUrl: undefined });
  await expect(noRevoke.revoke(tokens)).resolves.toBe("not_supported");
});
