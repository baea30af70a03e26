import type { AuthorizationStart, ConnectionStatus, Disconnected } from "@trendgate/contracts";
import { accountConnections, cancelConnectionOutboxMessages, deleteConnection, findConnection, setConnectionNeedsReauth, type ConnectionRow } from "@trendgate/db";
import { completeAuthorization, startAuthorization, type CallbackOutcome, type CallbackQuery } from "./authorize.ts";
import { tell, type ConnectionsDeps } from "./context.ts";
import { openTokens } from "./credentials.ts";
import { ConnectionsError } from "./errors.ts";
import { isOAuthProvider, oauthClient } from "./providers.ts";
import { toConnectionStatus } from "./status.ts";
import { TokenKeeper } from "./token-keeper.ts";

/**
 * The connection lifecycle of every browser-OAuth provider, shared by the gateway (auth, callback, status,
 * disconnect) and the workers (access tokens, needs_reauth). One instance per process: the in-process single
 * flight of refreshes lives in it.
 */
export class Connections {
  private readonly tokens: TokenKeeper;

  constructor(private readonly deps: ConnectionsDeps) {
    this.tokens = new TokenKeeper(deps);
  }

  /** Starts a browser flow: the consent page's URL and its one-time state. Throws ConnectionsError. */
  startAuthorization(accountId: string, providerId: string, opts: { returnUrl?: string } = {}): Promise<AuthorizationStart> {
    return startAuthorization(this.deps, accountId, providerId, opts);
  }

  /** Finishes a browser flow from the callback's query; never throws for a failed flow (see CallbackOutcome). */
  completeAuthorization(query: CallbackQuery): Promise<CallbackOutcome> {
    return completeAuthorization(this.deps, query);
  }

  /** The account's connection to a provider (with sealed credentials: for workers and routes, never for output). */
  find(accountId: string, providerId: string): Promise<ConnectionRow | null> {
    return findConnection(this.deps.db, accountId, providerId);
  }

  /** Every connection of the account by provider, as GET …/connection shows each. */
  async list(accountId: string): Promise<Map<string, ConnectionStatus>> {
    return new Map((await accountConnections(this.deps.db, accountId)).map((r) => [r.provider, toConnectionStatus(r)]));
  }

  async status(accountId: string, providerId: string): Promise<ConnectionStatus | null> {
    const row = await this.find(accountId, providerId);
    return row ? toConnectionStatus(row) : null;
  }

  /**
   * Revokes at the provider where it can (OAuth providers; credentials such as an API key have nothing to revoke:
   * `not_supported`), then deletes the connection (and its credentials) whatever the revocation's outcome: a user who
   * disconnects must not stay connected because the provider is down. In the same transaction its pending outbox
   * messages are cancelled: a later connection is a new row, so they could never be sent. Null when not connected.
   */
  async disconnect(accountId: string, providerId: string): Promise<Disconnected | null> {
    const oauth = isOAuthProvider(this.deps.providers, providerId); // unknown provider: ConnectionsError
    const row = await this.find(accountId, providerId);
    if (!row) return null;
    let revocation: Disconnected["revocation"] = "not_supported";
    let revocationError: string | null = null;
    if (oauth) {
      try {
        const client = oauthClient(this.deps.providers, providerId, this.deps.config.PROVIDER_ENV, this.deps.config.OUTBOUND_TIMEOUT_MS);
        revocation = await client.revoke(openTokens(this.deps.secrets, row.credentialsSealed));
      } catch (err) {
        revocation = "failed";
        revocationError = err instanceof ConnectionsError || err instanceof Error ? err.message : String(err);
        this.deps.logger.warn({ provider: providerId, account_id: accountId, err: revocationError }, "revoking at the provider failed; deleting the tokens anyway");
      }
    }
    await this.deps.db.$transaction(async (tx) => {
      await cancelConnectionOutboxMessages(tx, row.id);
      await deleteConnection(tx, row.id);
    });
    await tell(this.deps, accountId, "connection.disconnected", { provider: providerId, revocation, ...(revocationError ? { revocation_error: revocationError } : {}) });
    return { provider: providerId, revocation, revocation_error: revocationError };
  }

  /**
   * A valid access token for the connection (a row, or its id), refreshed first when it expires within
   * OAUTH_REFRESH_BUFFER_SECONDS. Throws ProviderError: `unauthorized` (needs re-authorization) or `unavailable`
   * (refresh backing off; retry after `detail.retryAfterMs`).
   */
  accessToken(conn: ConnectionRow | string): Promise<string> {
    return this.tokens.accessToken(conn);
  }

  /** For callers whose provider call answered `unauthorized`: the connection needs re-authorization. */
  async markNeedsReauth(connectionId: string, reason: string): Promise<boolean> {
    const row = await setConnectionNeedsReauth(this.deps.db, connectionId, reason);
    if (!row) return false;
    this.deps.logger.warn({ provider: row.provider, connection_id: row.id, err: reason }, "connection needs re-authorization");
    await tell(this.deps, row.accountId, "connection.needs_reauth", { provider: row.provider, connection_id: row.id, reason });
    return true;
  }
}
