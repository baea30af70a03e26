import { ProviderError, type OAuth2Client } from "@trendgate/connector-core";
import {
  findConnectionById, isLockTimeout, lockConnection, recordRefreshed, recordRefreshFailure, setConnectionNeedsReauth, setConnectionStatus, type ConnectionRow,
} from "@trendgate/db";
import { tell, type ConnectionsDeps } from "./context.ts";
import { openTokens, sealTokens } from "./credentials.ts";
import { ConnectionsError } from "./errors.ts";
import { oauthClient } from "./providers.ts";

// Valid access tokens for workers and routes. A token expiring within OAUTH_REFRESH_BUFFER_SECONDS is refreshed
// once per connection however many callers want it at that moment:
//   - inside one process, concurrent callers share one promise (single flight);
//   - across processes, the refresh runs while holding the connection's row lock (SELECT ... FOR UPDATE, waiting at
//     most OAUTH_REFRESH_LOCK_TIMEOUT_MS), and whoever gets the lock re-reads the row first: if another process has
//     refreshed meanwhile, its token is used and the provider is not called.
// A refused refresh (invalid_grant, or 400/401 from the token endpoint) marks the connection needs_reauth at once.
// A transient failure backs off (30 s, doubling, at most 1 h) in refresh_not_before; meanwhile the current token is
// used while it is still valid, else callers get `unavailable` with retryAfterMs.

const BACKOFF_BASE_MS = 30_000;
const BACKOFF_MAX_MS = 3600_000;
/** When the lock could not be had and the token has already expired: come back soon, the holder is refreshing. */
const LOCK_BUSY_RETRY_MS = 1000;

export const refreshBackoffMs = (failures: number) => Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, failures - 1));

type Decision = { token: string } | { error: ProviderError; needsReauth?: { accountId: string; reason: string } } | { lockTimedOut: true };

export class TokenKeeper {
  private readonly inflight = new Map<string, Promise<string>>();

  constructor(private readonly deps: ConnectionsDeps) {}

  async accessToken(conn: ConnectionRow | string): Promise<string> {
    const row = typeof conn === "string" ? await findConnectionById(this.deps.db, conn) : conn;
    if (!row) throw new ProviderError("unknown", "unauthorized", `connection ${String(conn)} no longer exists`);
    if (row.status === "needs_reauth") throw this.unauthorized(row.provider, row.lastError);
    if (this.fresh(row)) return openTokens(this.deps.secrets, row.credentialsSealed).accessToken;
    let p = this.inflight.get(row.id);
    if (!p) {
      p = this.refreshUnderLock(row).finally(() => this.inflight.delete(row.id));
      this.inflight.set(row.id, p);
    }
    return p;
  }

  /** Valid for longer than the refresh buffer (or never expires). */
  private fresh(r: ConnectionRow, now = Date.now()) {
    return !r.tokenExpiresAt || r.tokenExpiresAt.getTime() - now > this.deps.config.OAUTH_REFRESH_BUFFER_SECONDS * 1000;
  }

  private unauthorized(provider: string, reason: string | null) {
    return new ProviderError(provider, "unauthorized", `the connection needs to be authorized again${reason ? ` (${reason})` : ""}`);
  }

  /** The provider's OAuth client, or why there is none (its client id or secret is not configured). */
  private clientFor(provider: string): OAuth2Client | ConnectionsError {
    try {
      return oauthClient(this.deps.providers, provider, this.deps.config.PROVIDER_ENV, this.deps.config.OUTBOUND_TIMEOUT_MS);
    } catch (err) {
      if (err instanceof ConnectionsError) return err;
      throw err;
    }
  }

  private async refreshUnderLock(row: ConnectionRow): Promise<string> {
    const { db, config } = this.deps;
    const client = this.clientFor(row.provider);
    if (client instanceof ConnectionsError) {
      // Cannot refresh without the client: the token is still usable until it actually expires.
      if (row.tokenExpiresAt && row.tokenExpiresAt.getTime() > Date.now()) return openTokens(this.deps.secrets, row.credentialsSealed).accessToken;
      throw new ProviderError(row.provider, "unavailable", `cannot refresh the token: ${client.message}`);
    }

    const decision = await db.$transaction(async (tx): Promise<Decision> => {
      let cur: ConnectionRow | null;
      try {
        cur = await lockConnection(tx, row.id, config.OAUTH_REFRESH_LOCK_TIMEOUT_MS);
      } catch (err) {
        if (isLockTimeout(err)) return { lockTimedOut: true };
        throw err;
      }
      if (!cur) return { error: new ProviderError(row.provider, "unauthorized", "the connection was disconnected") };
      if (cur.status === "needs_reauth") return { error: this.unauthorized(cur.provider, cur.lastError) };
      const creds = openTokens(this.deps.secrets, cur.credentialsSealed);
      if (this.fresh(cur)) return { token: creds.accessToken }; // another process refreshed while we waited

      const now = Date.now();
      const usable = !!cur.tokenExpiresAt && cur.tokenExpiresAt.getTime() > now;
      if (cur.refreshNotBefore && cur.refreshNotBefore.getTime() > now) {
        if (usable) return { token: creds.accessToken };
        if (cur.status === "connected") await setConnectionStatus(tx, cur.id, "error"); // expired during the backoff: not usable now
        return { error: new ProviderError(cur.provider, "unavailable", `token refresh is backing off after ${cur.refreshFailures} failure(s): ${cur.lastError ?? "unknown error"}`, { retryAfterMs: cur.refreshNotBefore.getTime() - now }) };
      }
      if (!creds.refreshToken) {
        if (usable) return { token: creds.accessToken };
        const reason = "the access token expired and the provider gave no refresh token";
        await setConnectionNeedsReauth(tx, cur.id, reason);
        return { error: this.unauthorized(cur.provider, reason), needsReauth: { accountId: cur.accountId, reason } };
      }

      try {
        const next = await client.refresh(creds.refreshToken);
        await recordRefreshed(tx, cur.id, { credentialsSealed: sealTokens(this.deps.secrets, next), tokenExpiresAt: next.expiresAt ?? null, scopes: next.scopes });
        return { token: next.accessToken };
      } catch (err) {
        const e = err as ProviderError;
        if (e.kind === "unauthorized") {
          if (cur.status !== "needs_reauth") await setConnectionNeedsReauth(tx, cur.id, e.message);
          return { error: e, needsReauth: { accountId: cur.accountId, reason: e.message } };
        }
        const failures = cur.refreshFailures + 1;
        const waitMs = Math.max(refreshBackoffMs(failures), e.detail.retryAfterMs ?? 0);
        await recordRefreshFailure(tx, cur.id, { failures, notBefore: new Date(now + waitMs), error: e.message, status: usable ? "connected" : "error" });
        this.deps.logger.warn({ provider: cur.provider, connection_id: cur.id, kind: e.kind, failures, retry_in_ms: waitMs, err: e.message }, "token refresh failed; backing off");
        return usable ? { token: creds.accessToken }
          : { error: new ProviderError(cur.provider, "unavailable", `token refresh failed: ${e.message}`, { ...e.detail, retryAfterMs: waitMs }) };
      }
    }, { timeout: config.OAUTH_REFRESH_LOCK_TIMEOUT_MS + config.OUTBOUND_TIMEOUT_MS + 5000, maxWait: 5000 });

    if ("lockTimedOut" in decision) return this.afterLockTimeout(row);
    if ("token" in decision) return decision.token;
    if (decision.needsReauth) {
      this.deps.logger.warn({ provider: row.provider, connection_id: row.id, err: decision.needsReauth.reason }, "token refresh refused; connection needs re-authorization");
      await tell(this.deps, decision.needsReauth.accountId, "connection.needs_reauth", { provider: row.provider, connection_id: row.id, reason: decision.needsReauth.reason });
    }
    throw decision.error;
  }

  /** Another process held the lock for longer than the lock timeout (a slow refresh): use what it left, if usable. */
  private async afterLockTimeout(row: ConnectionRow): Promise<string> {
    const cur = await findConnectionById(this.deps.db, row.id);
    if (!cur) throw new ProviderError(row.provider, "unauthorized", "the connection was disconnected");
    if (cur.status === "needs_reauth") throw this.unauthorized(cur.provider, cur.lastError);
    if (!cur.tokenExpiresAt || cur.tokenExpiresAt.getTime() > Date.now()) return openTokens(this.deps.secrets, cur.credentialsSealed).accessToken;
    throw new ProviderError(cur.provider, "unavailable", "the token is being refreshed by another process", { retryAfterMs: LOCK_BUSY_RETRY_MS });
  }
}
