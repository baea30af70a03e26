import { ProviderError } from "@trendgate/connector-core";
import type { ConnectionRow } from "@trendgate/db";
import { ApiError } from "../../http/api-error.ts";
import type { GatewayDeps } from "../../deps.ts";

/**
 * A provider's failure during a request, as the caller's problem (one mapping for every connector route):
 * credentials refused -> the connection needs re-authorization, 409 `not_connected` saying how to reconnect;
 * rate limited or unavailable -> 503 with Retry-After; any other refusal -> 502 `provider_error`.
 */
export async function providerProblem(deps: GatewayDeps, conn: ConnectionRow, err: unknown, p: { name: string; reconnect: string }): Promise<never> {
  if (!(err instanceof ProviderError)) throw err;
  switch (err.kind) {
    case "unauthorized":
      await deps.connections.markNeedsReauth(conn.id, err.message);
      throw new ApiError("not_connected", `${p.name} refused the connection's credentials (${err.message}): ${p.reconnect}`);
    case "rate_limited":
    case "quota_exhausted":
    case "unavailable": {
      const seconds = Math.max(1, Math.ceil((err.detail.retryAfterMs ?? 5000) / 1000));
      throw new ApiError("service_unavailable", `${p.name} is unavailable right now (${err.message}); retry later`, { headers: { "Retry-After": String(seconds) } });
    }
    default:
      throw new ApiError("provider_error", `${p.name} refused the request: ${err.message}`);
  }
}

/**
 * The account's connection to a provider, or 409 `not_connected` saying how to connect. With `usable`, a connection
 * waiting for re-authorization is refused the same way (routes that call the provider need working credentials).
 */
export async function connectionOrConflict(deps: GatewayDeps, accountId: string, providerId: string, p: { name: string; reconnect: string; usable: boolean }): Promise<ConnectionRow> {
  const conn = await deps.connections.find(accountId, providerId);
  if (!conn) throw new ApiError("not_connected", `${p.name} is not connected: ${p.reconnect}`);
  if (p.usable && conn.status === "needs_reauth")
    throw new ApiError("not_connected", `The ${p.name} connection needs re-authorization (${conn.lastError ?? "credentials refused"}): ${p.reconnect}`);
  return conn;
}
