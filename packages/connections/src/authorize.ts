import crypto from "node:crypto";
import { oauthRedirectUrl } from "@trendgate/config";
import type { ProviderError } from "@trendgate/connector-core";
import type { AuthorizationStart, CallbackError } from "@trendgate/contracts";
import { consumeOAuthState, createOAuthState, purgeOAuthStates, saveAuthorizedConnection } from "@trendgate/db";
import { tell, type ConnectionsDeps } from "./context.ts";
import { sealTokens } from "./credentials.ts";
import { ConnectionsError } from "./errors.ts";
import { oauthClient, oauthManifest } from "./providers.ts";

// The browser flow. `start` stores a one-time state (only its hash) with the PKCE verifier, bound to the account,
// provider and redirect URI; `complete` takes that state out of the store in the same transaction that writes the
// connection, so either both happen (after a successful exchange) or only the state is consumed: nothing is ever
// half-stored, and a state works once.

/** Expired states are kept this long so a late callback is told "expired" rather than "unknown". */
const KEEP_EXPIRED_MS = 24 * 3600_000;

export const hashState = (state: string) => crypto.createHash("sha256").update(state).digest("hex");

export interface CallbackQuery {
  state?: string;
  code?: string;
  error?: string;
  error_description?: string;
  /** Other parameters (a provider's own name for the code). */
  [name: string]: string | undefined;
}

interface OutcomeBase {
  /** Provider id and display name, when the state named one. */
  provider: string | null;
  displayName: string | null;
  accountId: string | null;
  /** The return_url given at `auth` time, when the state was found. */
  returnUrl: string | null;
}
export type CallbackOutcome = OutcomeBase & ({ ok: true; account: Record<string, string | null> } | { ok: false; error: CallbackError; message: string });

/** The return_url is ours to redirect to only when its origin is configured (no open redirect). */
export function checkReturnUrl(returnUrl: string, allowedOrigins: readonly string[]): string {
  let u: URL;
  try { u = new URL(returnUrl); } catch { throw new ConnectionsError("return_url_not_allowed", "return_url must be an absolute http:// or https:// URL"); }
  if (u.protocol !== "https:" && u.protocol !== "http:") throw new ConnectionsError("return_url_not_allowed", "return_url must be an http:// or https:// URL");
  if (u.username || u.password) throw new ConnectionsError("return_url_not_allowed", "return_url must not contain credentials");
  const allowed = new Set(allowedOrigins.map((o) => URL.parse(o)?.origin).filter(Boolean));
  if (!allowed.has(u.origin)) {
    throw new ConnectionsError("return_url_not_allowed", allowed.size
      ? `return_url's origin ${u.origin} is not one of OAUTH_RETURN_ORIGINS`
      : "return_url is not accepted: no origins are configured in OAUTH_RETURN_ORIGINS");
  }
  return u.href;
}

export async function startAuthorization(deps: ConnectionsDeps, accountId: string, providerId: string, opts: { returnUrl?: string } = {}): Promise<AuthorizationStart> {
  const { config } = deps;
  const client = oauthClient(deps.providers, providerId, config.PROVIDER_ENV, config.OUTBOUND_TIMEOUT_MS);
  // The gateway's own origin is always allowed: the web console it serves returns there.
  const returnUrl = opts.returnUrl ? checkReturnUrl(opts.returnUrl, [...config.OAUTH_RETURN_ORIGINS, config.PUBLIC_BASE_URL]) : null;
  const state = crypto.randomBytes(32).toString("base64url");
  const codeVerifier = client.newCodeVerifier();
  const redirectUri = oauthRedirectUrl(config);
  const expiresAt = new Date(Date.now() + config.OAUTH_STATE_TTL_SECONDS * 1000);
  const authorizationUrl = await client.authorizationUrl({ redirectUri, state, codeVerifier });
  await createOAuthState(deps.db, {
    stateHash: hashState(state), accountId, provider: providerId, codeVerifierSealed: codeVerifier ? deps.secrets.seal(codeVerifier) : null,
    redirectUri, returnUrl, expiresAt,
  });
  await purgeOAuthStates(deps.db, new Date(Date.now() - KEEP_EXPIRED_MS)).catch((err) =>
    deps.logger.warn({ err: String(err) }, "purging old OAuth states failed"));
  return { authorization_url: authorizationUrl, state, expires_at: expiresAt.toISOString() };
}

const MESSAGES: Record<Exclude<CallbackError, "exchange_failed" | "provider_error">, string> = {
  invalid_state: "This authorization link is unknown or was already used. Start again from the app.",
  expired_state: "This authorization link has expired. Start again from the app.",
  access_denied: "Access was declined at the provider, so nothing was connected.",
  provider_not_configured: "The provider's OAuth client is no longer configured on this server.",
  invalid_request: "The provider sent back neither a code nor an error.",
};

export async function completeAuthorization(deps: ConnectionsDeps, q: CallbackQuery): Promise<CallbackOutcome> {
  const none = { provider: null, displayName: null, accountId: null, returnUrl: null };
  if (!q.state) return { ...none, ok: false, error: "invalid_state", message: MESSAGES.invalid_state };

  // The exchange runs inside the transaction: the state row stays locked (a replay waits, then finds nothing) and
  // is deleted with the connection's write, or alone when the flow failed. Bounded by the exchange's own timeout.
  const outcome = await deps.db.$transaction(async (tx): Promise<CallbackOutcome & { failure?: ProviderError }> => {
    const st = await consumeOAuthState(tx, hashState(q.state!));
    if (!st) return { ...none, ok: false, error: "invalid_state", message: MESSAGES.invalid_state };
    const manifest = deps.providers.get(st.provider)?.manifest;
    const base = { provider: st.provider, displayName: manifest?.displayName ?? st.provider, accountId: st.accountId, returnUrl: st.returnUrl };
    const fail = (error: CallbackError, message: string, failure?: ProviderError) => ({ ...base, ok: false as const, error, message, failure });
    if (st.expiresAt.getTime() <= Date.now()) return fail("expired_state", MESSAGES.expired_state);
    if (q.error === "access_denied") return fail("access_denied", MESSAGES.access_denied);
    if (q.error) return fail("provider_error", `The provider answered ${q.error}${q.error_description ? `: ${q.error_description.slice(0, 300)}` : ""}.`);
    const code = q.code ?? q[(manifest?.auth.mode === "oauth2" && manifest.auth.paramNames?.code) || "code"];
    if (!code) return fail("invalid_request", MESSAGES.invalid_request);

    let client;
    try {
      client = oauthClient(deps.providers, st.provider, deps.config.PROVIDER_ENV, deps.config.OUTBOUND_TIMEOUT_MS);
    } catch (err) {
      if (err instanceof ConnectionsError) return fail("provider_not_configured", err.message);
      throw err;
    }
    let tokens;
    try {
      tokens = await client.exchangeCode({
        code, redirectUri: st.redirectUri, codeVerifier: st.codeVerifierSealed ? deps.secrets.open(st.codeVerifierSealed) : undefined,
      });
    } catch (err) {
      const e = err as ProviderError;
      return fail("exchange_failed", `Exchanging the authorization code failed: ${e.message}`, e);
    }
    await saveAuthorizedConnection(tx, {
      accountId: st.accountId, provider: st.provider, kind: oauthManifest(deps.providers, st.provider).kind,
      credentialsSealed: sealTokens(deps.secrets, tokens), tokenExpiresAt: tokens.expiresAt ?? null,
      scopes: tokens.scopes ?? [], externalAccount: tokens.account ?? {},
    });
    return { ...base, ok: true, account: tokens.account ?? {} };
  }, { timeout: deps.config.OUTBOUND_TIMEOUT_MS + 10_000, maxWait: 5000 });

  const log = { provider: outcome.provider, account_id: outcome.accountId };
  if (outcome.ok) {
    deps.logger.info(log, "connection authorized");
    await tell(deps, outcome.accountId!, "connection.connected", { provider: outcome.provider!, account: outcome.account });
  } else {
    deps.logger.info({ ...log, outcome: outcome.error, ...(outcome.failure ? { kind: outcome.failure.kind, status: outcome.failure.detail.status } : {}) }, "connection authorization failed");
    // The state names the account and the provider together (both null when it was not found).
    if (outcome.accountId && outcome.provider) await tell(deps, outcome.accountId, "connection.failed", { provider: outcome.provider, reason: outcome.error, message: outcome.message });
  }
  const { failure: _f, ...rest } = outcome as CallbackOutcome & { failure?: ProviderError };
  return rest as CallbackOutcome;
}
