import * as oauth from "oauth4webapi";
import { ProviderHttp } from "../http/provider-http.ts";
import type { OAuth2Auth, OAuthClientSettings, ProviderManifest } from "../manifest.ts";
import type { TokenSet } from "../tokens.ts";
import { oauthFailure } from "./errors.ts";
import { tokenSetOf, tolerantTokenFetch } from "./tokens.ts";

// The generic OAuth 2.0 client (RFC 6749 authorization code, RFC 7636 PKCE S256, RFC 7009 revocation) on
// oauth4webapi. A provider's manifest says how it differs (scope separator, PKCE, client authentication, extra
// authorization parameters); a deviation that is code (Slack's `ok:false` with HTTP 200, TikTok's JSON body, Meta's
// GET exchange) is a named hook in the provider's folder, called instead of the standard request.

export type OAuthManifest = ProviderManifest & { auth: OAuth2Auth };

export interface OAuthClientOptions {
  /** Per request to the token and revocation endpoints. */
  timeoutMs?: number;
}

export type RevokeResult = "revoked" | "not_supported";

export class OAuth2Client {
  private readonly as: oauth.AuthorizationServer;
  private readonly client: oauth.Client;
  private readonly clientAuth: oauth.ClientAuth;
  private readonly path: ProviderHttp;

  constructor(readonly manifest: OAuthManifest, readonly settings: OAuthClientSettings, private readonly opts: OAuthClientOptions = {}) {
    // No discovery: endpoints come from the manifest and configuration. The issuer only matters for ID tokens, which
    // we neither request nor keep (tolerantTokenFetch drops them).
    this.as = { issuer: new URL(settings.tokenUrl).origin, token_endpoint: settings.tokenUrl, revocation_endpoint: settings.revocationUrl };
    this.client = { client_id: settings.clientId };
    this.path = new ProviderHttp(manifest.id, manifest.rateLimit);
    this.clientAuth = manifest.auth.clientAuth === "client_secret_post"
      ? oauth.ClientSecretPost(settings.clientSecret)
      : oauth.ClientSecretBasic(settings.clientSecret);
  }

  /** A new PKCE code verifier when the provider takes PKCE, else undefined. */
  newCodeVerifier(): string | undefined {
    return this.manifest.auth.pkce ? oauth.generateRandomCodeVerifier() : undefined;
  }

  /** The consent page's URL: the browser goes there, the provider comes back to `redirectUri` with `code` and `state`. */
  async authorizationUrl(p: { redirectUri: string; state: string; codeVerifier?: string }): Promise<string> {
    const a = this.manifest.auth;
    const url = new URL(this.settings.authorizationUrl);
    for (const [k, v] of Object.entries(a.authorizationParams ?? {})) url.searchParams.set(k, v);
    url.searchParams.set("response_type", "code");
    url.searchParams.set(a.paramNames?.clientId ?? "client_id", this.settings.clientId);
    url.searchParams.set("redirect_uri", p.redirectUri);
    if (a.scopes.length) url.searchParams.set("scope", a.scopes.join(a.scopeSeparator));
    url.searchParams.set("state", p.state);
    if (a.pkce) {
      if (!p.codeVerifier) throw new Error(`${this.manifest.id}: PKCE is on for this provider; pass a code verifier`);
      url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(p.codeVerifier));
      url.searchParams.set("code_challenge_method", "S256");
    }
    return url.href;
  }

  /** Exchanges an authorization code for tokens. Throws ProviderError. */
  async exchangeCode(p: { code: string; redirectUri: string; codeVerifier?: string }): Promise<TokenSet> {
    try {
      const hook = this.manifest.auth.hooks?.exchangeCode;
      if (hook) return await hook({ ...p, client: this.settings });
      // validateAuthResponse only brands the parameters for the grant request: the state has been checked against
      // our own store already, and `iss` (RFC 9207) is left out since manifests do not name an issuer.
      const params = oauth.validateAuthResponse(this.as, this.client, new URLSearchParams({ code: p.code }), oauth.expectNoState);
      const res = await oauth.authorizationCodeGrantRequest(this.as, this.client, this.clientAuth, params, p.redirectUri,
        p.codeVerifier ?? oauth.nopkce, this.http(this.settings.tokenUrl, "code exchange"));
      return tokenSetOf(await oauth.processAuthorizationCodeResponse(this.as, this.client, res));
    } catch (err) {
      throw oauthFailure(this.manifest.id, "exchange", err);
    }
  }

  /** The refresh_token grant. Keeps the given refresh token when the provider does not rotate it. Throws ProviderError. */
  async refresh(refreshToken: string): Promise<TokenSet> {
    let next: TokenSet;
    try {
      const hook = this.manifest.auth.hooks?.refresh;
      if (hook) next = await hook({ refreshToken, client: this.settings });
      else {
        const res = await oauth.refreshTokenGrantRequest(this.as, this.client, this.clientAuth, refreshToken, this.http(this.settings.tokenUrl, "token refresh"));
        next = tokenSetOf(await oauth.processRefreshTokenResponse(this.as, this.client, res));
      }
    } catch (err) {
      throw oauthFailure(this.manifest.id, "refresh", err);
    }
    return { ...next, refreshToken: next.refreshToken ?? refreshToken };
  }

  /**
   * Revokes at the provider: its hook, or RFC 7009 when it has a revocation endpoint (the refresh token first, which
   * ends the grant, then the access token for servers that keep it alive). Throws ProviderError.
   */
  async revoke(tokens: TokenSet): Promise<RevokeResult> {
    try {
      const hook = this.manifest.auth.hooks?.revoke;
      if (hook) { await hook({ tokens, client: this.settings }); return "revoked"; }
      if (!this.settings.revocationUrl) return "not_supported";
      const all: [string | undefined, string][] = [[tokens.refreshToken, "refresh_token"], [tokens.accessToken, "access_token"]];
      for (const [token, hint] of all) {
        if (!token) continue;
        const res = await oauth.revocationRequest(this.as, this.client, this.clientAuth, token,
          { ...this.http(this.settings.revocationUrl, "revocation"), additionalParameters: { token_type_hint: hint } });
        await oauth.processRevocationResponse(res);
      }
      return "revoked";
    } catch (err) {
      throw oauthFailure(this.manifest.id, "revoke", err);
    }
  }

  private http(endpoint: string, what: string): oauth.TokenEndpointRequestOptions & oauth.RevocationRequestOptions {
    return {
      [oauth.customFetch]: tolerantTokenFetch(this.path, what, this.opts.timeoutMs ?? 15_000, this.settings.env),
      // oauth4webapi refuses http:// unless told; only a configured http:// endpoint (local tests) gets it.
      [oauth.allowInsecureRequests]: new URL(endpoint).protocol === "http:",
    };
  }
}
