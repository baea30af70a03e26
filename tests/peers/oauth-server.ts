import crypto from "node:crypto";
import http from "node:http";
// oidc-provider 9 ships no type declarations; the little used here is typed loosely below.
// @ts-expect-error TS7016: no declaration file
import Provider from "oidc-provider";
import { browse, readConsentForm, sendConsentPage } from "./consent-page.ts";
import { listenLocal } from "./listen.ts";

// A strict OAuth 2.0 authorization server written by others (oidc-provider 9): one-time codes, PKCE required,
// client authentication really checked (one client per method), refresh tokens (rotated by default), RFC 7009
// revocation. Login is automatic (one local user); consent is the shared consent page (consent-page.ts), whose
// Approve / Deny form finishes the interaction through interactionDetails + Grant + interactionFinished. `browse`
// plays the browser between the authorization URL and the redirect back to us, pressing the button `decision`
// names. Endpoint paths can take a provider's shape (`routes`: Google's /o/oauth2/v2/auth, /token, /revoke). It
// counts what our client did: token grants by type, revocations.

export interface OAuthPeerOptions {
  /** Redirect URIs registered for both clients (exact match, as providers do). */
  redirectUris: string[];
  /** Access-token lifetime in seconds. */
  accessTokenTtl?: number;
  /** Issue a new refresh token on every refresh (the old one is then refused); default true. */
  rotateRefreshTokens?: boolean;
  scopes?: string[];
  /** Leave `refresh_token` out of refresh answers (as Google does when it does not rotate). */
  refreshAnswersOmitRefreshToken?: boolean;
  /** A fixed port (the sandbox); default a free one. */
  port?: number;
  /** Endpoint paths; default /auth, /token, /token/revocation. */
  routes?: { authorization?: string; token?: string; revocation?: string };
  /** The two clients' credentials; default fixed test ones. */
  clients?: Partial<{ basic: OAuthPeerClient; post: OAuthPeerClient }>;
  /** Named on the consent page; default "OAuth server". */
  provider?: string;
  /** What the app will reach, listed on the consent page. */
  grants?: () => string[];
  /** Told each access token issued (so an API stand-in can accept it). */
  onAccessToken?: (token: string) => void;
}

export interface OAuthPeerClient {
  id: string;
  secret: string;
}

export interface OAuthPeer {
  /** The issuer; endpoints: authorizationUrl, tokenUrl, revocationUrl (default /auth, /token, /token/revocation). */
  url: string;
  authorizationUrl: string;
  tokenUrl: string;
  revocationUrl: string;
  clients: { basic: OAuthPeerClient; post: OAuthPeerClient };
  /** Successful token grants by grant_type, failed ones by error code, revocations answered 200. */
  counts: { authorization_code: number; refresh_token: number; errors: string[]; revocations: number; revokedHints: string[]; outageAnswers: number };
  /** What the user does at the consent step. */
  decision: "approve" | "deny";
  /** Wait this long before handling each token request (widens race windows; not an assertion). */
  tokenDelayMs: number;
  /** Answer token requests with this HTTP status instead (a provider outage), while set. */
  tokenOutage: number | null;
  /** The same for revocation requests. */
  revocationOutage: number | null;
  /** Plays the browser: from the authorization URL through login and the consent page (pressing `decision`) to the redirect back; returns that URL. */
  browse(authorizationUrl: string): Promise<URL>;
  /** Forgets every grant and refresh token (as when the user revokes the app at the provider). */
  forgetGrants(): void;
  close(): Promise<void>;
}

type Stored = { payload: Record<string, any>; expiresAt?: number };
type Configuration = Record<string, any>;
type KoaContextWithOIDC = any;
type Provider = any;

export async function startOAuthPeer(opts: OAuthPeerOptions): Promise<OAuthPeer> {
  // oidc-provider's storage, kept here so forgetGrants can empty it.
  const stores = new Map<string, Map<string, Stored>>();
  const store = (name: string) => stores.get(name) ?? stores.set(name, new Map()).get(name)!;
  class MemoryAdapter {
    constructor(private readonly name: string) {}
    async upsert(id: string, payload: Record<string, any>, expiresIn?: number) {
      store(this.name).set(id, { payload, expiresAt: expiresIn ? Date.now() + expiresIn * 1000 : undefined });
    }
    async find(id: string) {
      const e = store(this.name).get(id);
      return e && (!e.expiresAt || e.expiresAt > Date.now()) ? e.payload : undefined;
    }
    async findByUid(uid: string) {
      for (const e of store(this.name).values()) if (e.payload.uid === uid) return e.payload;
      return undefined;
    }
    async findByUserCode() { return undefined; }
    async consume(id: string) {
      const e = store(this.name).get(id);
      if (e) e.payload.consumed = Math.floor(Date.now() / 1000);
    }
    async destroy(id: string) { store(this.name).delete(id); }
    async revokeByGrantId(grantId: string) {
      for (const s of stores.values()) for (const [k, e] of s) if (e.payload.grantId === grantId) s.delete(k);
    }
  }

  const routes = { authorization: "/auth", token: "/token", revocation: "/token/revocation", ...opts.routes };
  let provider: Provider | undefined;
  const peer = {} as OAuthPeer;
  const server = http.createServer((req, res) => {
    void (async () => {
      if (req.url?.startsWith("/interaction/")) return interact(req, res);
      const path = req.url?.split("?")[0];
      const outage = req.method !== "POST" ? null : path === routes.revocation ? peer.revocationOutage : path === routes.token ? peer.tokenOutage : null;
      if (req.method === "POST" && path === routes.token && peer.tokenDelayMs) await new Promise((r) => setTimeout(r, peer.tokenDelayMs));
      if (outage) {
        peer.counts.outageAnswers++;
        res.writeHead(outage, { "content-type": "text/html", "retry-after": "7" }).end("<h1>unavailable</h1>");
        return;
      }
      provider!.callback()(req, res);
    })().catch((err) => { res.statusCode = 500; res.end(String(err)); });
  });
  const url = await listenLocal(server, opts.port);

  const clients = {
    basic: opts.clients?.basic ?? { id: "trendgate-basic", secret: "basic-secret-0123456789abcdef0123456789" },
    post: opts.clients?.post ?? { id: "trendgate-post", secret: "post-secret-0123456789abcdef01234567890" },
  };
  const common = { redirect_uris: opts.redirectUris, grant_types: ["authorization_code", "refresh_token"], response_types: ["code"] };
  const rotate = opts.rotateRefreshTokens ?? true;
  const config: Configuration = {
    clients: [
      { ...common, client_id: clients.basic.id, client_secret: clients.basic.secret, token_endpoint_auth_method: "client_secret_basic" },
      { ...common, client_id: clients.post.id, client_secret: clients.post.secret, token_endpoint_auth_method: "client_secret_post" },
    ],
    adapter: MemoryAdapter as any,
    routes,
    scopes: ["openid", "offline_access", ...(opts.scopes ?? ["read", "write"])],
    pkce: { required: () => true },
    features: {
      revocation: { enabled: true, allowedPolicy: async (_ctx: unknown, client: any, token: any) => token.clientId === client.clientId },
      devInteractions: { enabled: false },
    },
    issueRefreshToken: async (_ctx: unknown, client: any) => client.grantTypeAllowed("refresh_token"),
    rotateRefreshToken: () => rotate,
    ttl: {
      AccessToken: () => opts.accessTokenTtl ?? 3600,
      AuthorizationCode: 60,
      RefreshToken: () => 14 * 86_400,
      Grant: () => 14 * 86_400,
      Interaction: () => 600,
      Session: () => 3600,
      IdToken: () => 3600,
      ClientCredentials: () => 600,
      DeviceCode: () => 600,
      BackchannelAuthenticationRequest: () => 600,
    },
    cookies: { keys: ["oauth-peer-cookie-key-0123456789"] },
    jwks: { keys: [{ ...crypto.generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ format: "jwk" }), use: "sig", alg: "RS256" }] as any },
    findAccount: async (_ctx: unknown, sub: string) => ({ accountId: sub, claims: async () => ({ sub }) }),
    renderError: async (ctx: any, out: unknown) => { ctx.type = "json"; ctx.body = out; },
  };
  provider = new Provider(url, config);
  provider.proxy = false;

  const counts: OAuthPeer["counts"] = { authorization_code: 0, refresh_token: 0, errors: [], revocations: 0, revokedHints: [], outageAnswers: 0 };
  provider.on("grant.success", (ctx: KoaContextWithOIDC) => {
    const type = String(ctx.oidc.params?.grant_type);
    if (type === "authorization_code" || type === "refresh_token") counts[type]++;
  });
  provider.on("grant.error", (_ctx: KoaContextWithOIDC, err: { error?: string }) => counts.errors.push(String(err.error)));
  provider.use(async (ctx: any, next: () => Promise<void>) => {
    await next();
    const body = ctx.body as Record<string, unknown> | undefined;
    if (ctx.path === routes.token && ctx.status === 200 && typeof body?.access_token === "string") opts.onAccessToken?.(body.access_token);
    if (opts.refreshAnswersOmitRefreshToken && ctx.path === routes.token && ctx.status === 200 && (ctx as any).oidc?.params?.grant_type === "refresh_token") delete body?.refresh_token;
    if (ctx.path === routes.revocation && ctx.status === 200) {
      counts.revocations++;
      counts.revokedHints.push(String((ctx as any).oidc?.params?.token_type_hint ?? ""));
    }
  });

  // Login is automatic (one local user); the consent prompt shows the consent page, whose form posts back here.
  async function interact(req: http.IncomingMessage, res: http.ServerResponse) {
    const p = provider!;
    const details: any = await p.interactionDetails(req, res);
    if (details.prompt.name === "login") {
      await p.interactionFinished(req, res, { login: { accountId: "peer-user-1" } }, { mergeWithLastSubmission: false });
      return;
    }
    if (req.method !== "POST") {
      return sendConsentPage(res, {
        provider: opts.provider ?? "OAuth server", clientId: String(details.params.client_id), redirectUri: String(details.params.redirect_uri),
        scopes: String(details.params.scope ?? "").split(" ").filter(Boolean), grants: opts.grants?.(), action: `/interaction/${details.uid}`,
      });
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (readConsentForm(Buffer.concat(chunks).toString("utf8")).decision !== "approve") {
      await p.interactionFinished(req, res, { error: "access_denied", error_description: "The user declined" }, { mergeWithLastSubmission: false });
      return;
    }
    const missing = details.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[]; missingResourceScopes?: Record<string, string[]> };
    const grant = details.grantId
      ? (await p.Grant.find(details.grantId))!
      : new p.Grant({ accountId: details.session!.accountId, clientId: String(details.params.client_id) });
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(" "));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.join(" "));
    const grantId = await grant.save();
    await p.interactionFinished(req, res, { consent: details.grantId ? {} : { grantId } }, { mergeWithLastSubmission: true });
  }

  return Object.assign(peer, {
    url,
    authorizationUrl: `${url}${routes.authorization}`,
    tokenUrl: `${url}${routes.token}`,
    revocationUrl: `${url}${routes.revocation}`,
    clients,
    counts,
    decision: "approve" as const,
    tokenDelayMs: 0,
    tokenOutage: null,
    revocationOutage: null,
    browse: (authorizationUrl: string) => browse(authorizationUrl, peer.decision),
    forgetGrants() {
      for (const name of ["Grant", "RefreshToken", "AccessToken", "AuthorizationCode"]) stores.get(name)?.clear();
    },
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  });
}
