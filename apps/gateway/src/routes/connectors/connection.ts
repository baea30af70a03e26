import type { ProviderManifest } from "@trendgate/connector-core";
import { ConnectionStatus, Disconnected } from "@trendgate/contracts";
import { notFound } from "../../http/api-error.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { basePathOf } from "./paths.ts";

// The connection of every provider whose connection is one `connections` row per account, however it was made
// (browser OAuth, or credentials such as an n8n API key or a conversion access token), generated under its base path:
//   GET    {base}/connection  the connection's status (never its credentials)
//   DELETE {base}/connection  revoke at the provider where it can, delete the credentials, cancel what waits on them
// Social providers have their own connection routes (./social.ts). The lifecycle itself is @trendgate/connections.

const TAG = "Connections";

/** Whether the provider's connection routes are generated here (every kind but social, which has its own). */
export const hasConnectionRoutes = (m: ProviderManifest): boolean => m.kind !== "social";

export function connectionRoutesOf(m: ProviderManifest): RouteDef[] {
  const base = basePathOf(m);
  const name = m.displayName;
  return [
    defineRoute({
      method: "get", path: `${base}/connection`, operationId: `get${m.operationName}Connection`, tag: TAG, auth: "apiKey",
      summary: `Status of the ${name} connection`,
      description: "`status` is `connected`, `needs_reauth` (authorize or connect again) or `error` (refresh failing, retried); `last_error` says why. 404 when not connected.",
      responses: { 200: { description: "The connection", schema: ConnectionStatus } },
      async handler({ deps, auth }) {
        const status = await deps.connections.status(auth.accountId, m.id);
        if (!status) throw notFound(`${name} connection`);
        return { status: 200, body: status };
      },
    }),
    defineRoute({
      method: "delete", path: `${base}/connection`, operationId: `delete${m.operationName}Connection`, tag: TAG, auth: "apiKey",
      summary: `Disconnect ${name}`,
      description: `Revokes the tokens at ${name} where it has a revocation call, then deletes the credentials here and cancels the connection's ` +
        "queued messages (they could not be sent any more). 204 when revoked (or nothing to revoke at the provider, e.g. an API key); " +
        "200 with `revocation: failed` when revoking failed: the connection is deleted here anyway. 404 when not connected.",
      responses: {
        200: { description: "Disconnected, but revoking at the provider failed", schema: Disconnected },
        204: { description: "Disconnected" },
      },
      async handler({ deps, auth }) {
        const r = await deps.connections.disconnect(auth.accountId, m.id);
        if (!r) throw notFound(`${name} connection`);
        return r.revocation === "failed" ? { status: 200, body: r } : { status: 204 };
      },
    }),
  ];
}
