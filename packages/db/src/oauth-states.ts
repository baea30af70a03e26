import type { Db, Tx } from "./client.ts";
import type { OAuthState } from "./generated/client.ts";

// One browser OAuth flow in progress. Only sha256(state) is stored, so reading the table cannot complete a flow; a
// row is deleted by the callback that uses it (single use) and purged a day after it expired.

export type OAuthStateRow = OAuthState;

export interface NewOAuthState {
  stateHash: string;
  accountId: string;
  provider: string;
  codeVerifierSealed: string | null;
  redirectUri: string;
  returnUrl: string | null;
  expiresAt: Date;
}

export async function createOAuthState(db: Db | Tx, s: NewOAuthState): Promise<void> {
  await db.oAuthState.create({ data: s });
}

/**
 * Takes the state out of the store: DELETE ... RETURNING, so of two callbacks carrying the same state exactly one
 * gets the row (the other waits on the row lock, then finds nothing). Expired rows are returned too, so the caller
 * can tell "expired" from "unknown". Run it in the transaction that writes the connection.
 */
export async function consumeOAuthState(tx: Tx, stateHash: string): Promise<OAuthStateRow | null> {
  const rows = await tx.$queryRaw<{ state_hash: string; account_id: string; provider: string; code_verifier_sealed: string | null; redirect_uri: string; return_url: string | null; expires_at: Date; created_at: Date }[]>`
    DELETE FROM oauth_states WHERE state_hash = ${stateHash}
    RETURNING state_hash, account_id, provider, code_verifier_sealed, redirect_uri, return_url,
              expires_at AT TIME ZONE 'UTC' AS expires_at, created_at AT TIME ZONE 'UTC' AS created_at`;
  const r = rows[0];
  return r ? {
    stateHash: r.state_hash, accountId: r.account_id, provider: r.provider, codeVerifierSealed: r.code_verifier_sealed,
    redirectUri: r.redirect_uri, returnUrl: r.return_url, expiresAt: new Date(r.expires_at), createdAt: new Date(r.created_at),
  } : null;
}

/** Deletes states that expired before `before` (kept a while after expiry so a late callback is told "expired"). */
export async function purgeOAuthStates(db: Db, before: Date, limit = 1000): Promise<number> {
  return db.$executeRaw`
    DELETE FROM oauth_states WHERE state_hash IN (SELECT state_hash FROM oauth_states WHERE expires_at < (${before.toISOString()}::timestamptz AT TIME ZONE 'UTC') LIMIT ${limit})`;
}
