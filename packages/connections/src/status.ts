import type { ConnectionStatus } from "@trendgate/contracts";
import type { ConnectionRow } from "@trendgate/db";

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** The connection as the API shows it: never its tokens. */
export function toConnectionStatus(r: ConnectionRow): ConnectionStatus {
  return {
    provider: r.provider,
    kind: r.kind,
    status: r.status as ConnectionStatus["status"],
    account: r.externalAccount as Record<string, string | null>,
    scopes: r.scopes,
    token_expires_at: iso(r.tokenExpiresAt),
    last_error: r.lastError,
    last_error_at: iso(r.lastErrorAt),
    connected_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  };
}
