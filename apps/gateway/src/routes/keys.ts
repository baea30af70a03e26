import { ApiKey, ApiKeyList, ApiKeyWithSecret, CreateApiKeyBody, IdParam, pageQuery, RevokeApiKeyQuery, RotateApiKeyBody, RotatedApiKey } from "@trendgate/contracts";
import { countActiveKeysLocked, createApiKey, findAccountApiKey, listApiKeys, revokeApiKey, revokeKeyConsoleSessions, rotateApiKey, type ApiKeyRow } from "@trendgate/db";
import { ApiError, notFound } from "../http/api-error.ts";
import { keysetPage } from "../http/paginate.ts";
import { defineRoute } from "../http/route.ts";

const ListQuery = pageQuery({ limit: 50, max: 200, cursor: { ids: ["key"] } });

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function toApiKey(row: ApiKeyRow, now = new Date()): ApiKey {
  const status = row.revokedAt ? "revoked" : row.expiresAt && row.expiresAt <= now ? "expired" : row.rotatedToId ? "expiring" : "active";
  return {
    id: row.id, name: row.name, prefix: `tg_${row.prefix}`, created_at: row.createdAt.toISOString(),
    last_used_at: iso(row.lastUsedAt), expires_at: iso(row.expiresAt), revoked_at: iso(row.revokedAt), status,
  };
}

export const keyRoutes = [
  defineRoute({
    method: "post", path: "/api/keys", operationId: "createApiKey", tag: "API keys", auth: "apiKey", keyOnly: true, idempotent: "transactional",
    summary: "Create an API key for the caller's account (the key is shown once)",
    description: "An account holds at most MAX_ACTIVE_KEYS_PER_ACCOUNT active keys (default 20; revoked and expired ones do not count): one more is 409 `api_key_limit_reached`. " +
      "The rate limit is per account, shared by all its keys, so more keys never mean more quota.",
    body: CreateApiKeyBody,
    responses: {
      201: { description: "Created; `key` is not retrievable later", schema: ApiKeyWithSecret },
      409: { description: "`api_key_limit_reached`: revoke a key first" },
    },
    async handler({ deps, auth, body, atomically }) {
      return atomically(async (tx) => {
        const max = deps.config.MAX_ACTIVE_KEYS_PER_ACCOUNT;
        if ((await countActiveKeysLocked(tx, auth.accountId)) >= max)
          throw new ApiError("api_key_limit_reached", `The account already has ${max} active API keys (the most it may hold); revoke one first`);
        const { row, key } = await createApiKey(tx, auth.accountId, body.name, body.expires_at ? new Date(body.expires_at) : null);
        return { status: 201, body: { ...toApiKey(row), key }, headers: { Location: `/api/keys/${row.id}`, "Cache-Control": "no-store" } }; // shown once: no cache keeps it
      });
    },
  }),
  defineRoute({
    method: "get", path: "/api/keys", operationId: "listApiKeys", tag: "API keys", auth: "apiKey", keyOnly: true,
    summary: "List the account's API keys, newest first (secrets are never returned)",
    query: ListQuery,
    responses: { 200: { description: "A page of keys", schema: ApiKeyList } },
    async handler({ deps, auth, query }) {
      const body = await keysetPage(query, (p) => listApiKeys(deps.db, auth.accountId, p), (r) => toApiKey(r));
      return { status: 200, body };
    },
  }),
  defineRoute({
    method: "get", path: "/api/keys/{id}", operationId: "getApiKey", tag: "API keys", auth: "apiKey", keyOnly: true,
    summary: "One API key", params: IdParam,
    responses: { 200: { description: "The key", schema: ApiKey } },
    async handler({ deps, auth, params }) {
      const row = await findAccountApiKey(deps.db, auth.accountId, params.id);
      if (!row) throw notFound("API key");
      return { status: 200, body: toApiKey(row) };
    },
  }),
  defineRoute({
    method: "delete", path: "/api/keys/{id}", operationId: "revokeApiKey", tag: "API keys", auth: "apiKey", keyOnly: true,
    summary: "Revoke an API key at once (it answers 401 from now on, on every gateway instance)", params: IdParam, query: RevokeApiKeyQuery,
    description: "Also revokes the web console sessions (and unopened session links) the key created, at once: their next " +
      "request gets 401, as an expired session does. `?end_sessions=false` leaves them to run until they expire. Calling it " +
      "again on a revoked, expired or rotated key ends the sessions it created that are still live. Rotating a key leaves them alone.",
    responses: { 204: { description: "Revoked" } },
    async handler({ deps, auth, params, query }) {
      const row = await findAccountApiKey(deps.db, auth.accountId, params.id);
      if (!row) throw notFound("API key");
      if (!row.revokedAt) await revokeApiKey(deps.db, row.id);
      // A session is a credential the key handed out: whoever withdraws the key usually means to withdraw those too.
      // Done even when the key was already revoked, so a retry (or a key revoked with the opt-out) can still end them.
      const sessions = query.end_sessions ? await revokeKeyConsoleSessions(deps.db, auth.accountId, row.id) : [];
      for (const id of [row.prefix, ...sessions]) await deps.authenticator.invalidate(id);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: "post", path: "/api/keys/{id}/rotate", operationId: "rotateApiKey", tag: "API keys", auth: "apiKey", keyOnly: true, idempotent: "transactional",
    summary: "Rotate a key: returns a new key; the old one keeps working for the grace period you choose",
    params: IdParam, body: RotateApiKeyBody.optional().transform((b) => b ?? RotateApiKeyBody.parse({})),
    responses: { 201: { description: "The new key (shown once) and the old key's new expiry", schema: RotatedApiKey } },
    async handler({ deps, auth, params, body, atomically }) {
      let oldPrefix = "";
      const reply = await atomically(async (tx) => {
        const r = await rotateApiKey(tx, auth.accountId, params.id, body.grace_period_seconds);
        if (!r) throw notFound("Active API key");
        oldPrefix = r.old.prefix;
        return { status: 201, body: { ...toApiKey(r.row), key: r.key, previous_key: toApiKey(r.old) }, headers: { Location: `/api/keys/${r.row.id}`, "Cache-Control": "no-store" } };
      });
      await deps.authenticator.invalidate(oldPrefix);
      return reply;
    },
  }),
];

