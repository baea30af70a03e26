import type { SocialConnectionState, SocialContext } from "../kind.ts";
import { refreshGrant } from "../refresh-grant.ts";
import { ProviderError } from "../types.ts";
import { PROVIDER } from "./http.ts";

// X's user-context tokens (replies) last two hours. With a refresh token and its OAuth client, a reply past that gets
// a new token first (POST /2/oauth2/token). X rotates refresh tokens: the one used stops working at once, so the new
// pair is stored before anything else happens (ctx.saveCredentials); jobs of one connection run one at a time, so two
// replies never spend the same refresh token.

/** Refreshed this long before X's stated expiry, so a reply never starts with a token about to lapse. */
const EARLY_MS = 60_000;

export const canRefresh = (creds: Record<string, string>) => !!creds.user_refresh_token && !!creds.client_id;

/** The user token to post with: the stored one while it is valid, else a new one (stored with the rotated refresh token). */
export async function userToken(ctx: SocialContext, conn: SocialConnectionState, opts: { refused?: boolean } = {}): Promise<string> {
  const creds = conn.credentials;
  const expiresAt = creds.user_token_expires_at ? Date.parse(creds.user_token_expires_at) : NaN;
  const lapsing = Number.isFinite(expiresAt) && expiresAt - EARLY_MS <= ctx.now.getTime();
  if (creds.user_token && !opts.refused && !lapsing) return creds.user_token;
  if (!canRefresh(creds)) {
    if (creds.user_token) return creds.user_token; // X decides; a refused token fails the action with a clear error
    throw new ProviderError(PROVIDER, "unauthorized", "reply: the connection has no user_token");
  }
  const root = ctx.baseUrl.replace(/\/+$/, "").replace(/\/2$/, "");
  const t = await refreshGrant(ctx, {
    provider: PROVIDER, tokenUrl: `${root}/2/oauth2/token`, refreshToken: creds.user_refresh_token, clientId: creds.client_id,
    ...(creds.client_secret ? { clientSecret: creds.client_secret, clientAuth: "client_secret_basic" as const } : {}),
  });
  const next: Record<string, string> = { ...creds, user_token: t.accessToken, user_refresh_token: t.refreshToken ?? creds.user_refresh_token };
  if (t.expiresAt) next.user_token_expires_at = t.expiresAt.toISOString();
  else delete next.user_token_expires_at;
  if (!(await ctx.saveCredentials(next))) {
    throw new ProviderError(PROVIDER, "unavailable", "reply: the connection's credentials were replaced (PUT) while a new user token was fetched; nothing was posted: draft the reply again");
  }
  conn.credentials = next;
  return t.accessToken;
}
