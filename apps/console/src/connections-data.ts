import { ApiError, asApiError, get, isAbort } from "./api.ts";
import type { ConnectionList, ConnectionStatus, SocialConnectionStatus, SocialProviderList } from "./types.ts";

// Every connection of the account in one list: social and search connectors, the chat providers, the workflow tool,
// community ads and the ads providers. Which providers there are, and where their routes are, is read from the API's
// lists (the connector registry), never named here: the social providers, and every other provider with the
// account's connection to it (GET /api/integrations/connections). Only a connected social connector's status is
// asked for, so a provider not connected costs no 404.

export interface ConnectionRow {
  key: string;
  kind: string;
  name: string;
  /** The provider's status word, or "not_connected". */
  status: string;
  scopes: string[];
  tokenExpiresAt: string | null;
  lastError: string | null;
  lastErrorAt: string | null;
  /** Facts about the connected account, or a social connector's terms. */
  facts: string | null;
  /** GET here for the authorization URL (browser OAuth providers this server can connect). */
  authPath: string | null;
  /** An OAuth provider this server has no client for. */
  notConfigured: boolean;
  /** DELETE here to disconnect. */
  disconnectPath: string;
  /** How to connect a provider without browser OAuth (a credentials provider's manifest says, through the API's list). */
  connectHint: string | null;
  loadError: ApiError | null;
}

const ATTENTION = new Set(["needs_reauth", "error", "rate_limited", "quota_exhausted"]);
export const needsAttention = (r: ConnectionRow) => !!r.loadError || ATTENTION.has(r.status);

// Kinds as the page names them.
const KIND_LABEL: Record<string, string> = { chat: "Chat", workflow: "Workflow", conversions: "Community ads", ads: "Ads" };

/** The connection at `path`: the value, null when not connected (404), "absent" when the route does not exist here. */
async function connection<T>(path: string, signal: AbortSignal): Promise<T | null | "absent"> {
  try {
    return await get<T>(path, undefined, signal);
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return err.code === "route_not_found" ? "absent" : null;
    throw err;
  }
}

function oauthRow(key: string, kind: string, name: string, base: string, c: ConnectionStatus | null, opts: { oauth: boolean; configured?: boolean; connectHint?: string | null }): ConnectionRow {
  const facts = c ? Object.entries(c.account).filter(([, v]) => v).map(([k, v]) => `${k.replaceAll("_", " ")}: ${v}`).join(", ") : "";
  return {
    key, kind, name, status: c?.status ?? "not_connected", scopes: c?.scopes ?? [], tokenExpiresAt: c?.token_expires_at ?? null,
    lastError: c?.last_error ?? null, lastErrorAt: c?.last_error_at ?? null, facts: facts || null,
    authPath: opts.oauth && opts.configured !== false ? `${base}/auth` : null, notConfigured: opts.oauth && opts.configured === false,
    disconnectPath: `${base}/connection`, connectHint: opts.connectHint ?? null, loadError: null,
  };
}

const failedRow = (key: string, kind: string, name: string, disconnectPath: string, err: unknown): ConnectionRow => ({
  key, kind, name, status: "unknown", scopes: [], tokenExpiresAt: null, lastError: null, lastErrorAt: null, facts: null,
  authPath: null, notConfigured: false, disconnectPath, connectHint: null, loadError: asApiError(err),
});

/** Loads every connection; one that fails to load is a row with its error, not a failed page. */
export async function loadConnections(signal: AbortSignal): Promise<ConnectionRow[]> {
  const rows: Promise<ConnectionRow | null>[] = [];
  const guard = (key: string, kind: string, name: string, path: string, p: () => Promise<ConnectionRow | null>) =>
    p().catch((err) => { if (isAbort(err)) throw err; return failedRow(key, kind, name, path, err); });
  // A provider list that fails to load is one row with its error; the other lists still show. A list this server
  // does not serve (a kind it has no provider of) is an empty one.
  const list = <T extends { data: unknown[] }>(path: string) => get<T>(path, undefined, signal).catch((err) => {
    if (isAbort(err)) throw err;
    return err instanceof ApiError && err.code === "route_not_found" ? ({ data: [] } as unknown as T) : asApiError(err);
  });

  const [social, others] = await Promise.all([
    list<SocialProviderList>("/api/integrations/social/providers"),
    list<ConnectionList>("/api/integrations/connections"),
  ]);

  if (social instanceof ApiError) rows.push(Promise.resolve(failedRow("social", "Social", "Social and search providers", "", social)));
  else {
    for (const p of social.data) {
      const base = p.connection_path.replace(/\/connection$/, "");
      rows.push(guard(`social:${p.id}`, "Social", p.display_name, p.connection_path, async () => {
        // Only a connected provider has a status to ask; asking the others would log a 404 each in the browser.
        const s = p.connected ? await connection<SocialConnectionStatus>(`${base}/status`, signal) : null;
        if (s === "absent") return null;
        return {
          key: `social:${p.id}`, kind: "Social", name: p.display_name, status: s?.status ?? "not_connected", scopes: [], tokenExpiresAt: null,
          lastError: s?.last_error ?? null, lastErrorAt: null, facts: s?.terms.length ? `terms: ${s.terms.join(", ")}` : null,
          authPath: null, notConfigured: false, disconnectPath: p.connection_path,
          connectHint: `Connect with the API: PUT ${p.connection_path} with the provider's credentials.`, loadError: null,
        };
      }));
    }
  }

  if (others instanceof ApiError) rows.push(Promise.resolve(failedRow("connections", "Connections", "Chat, workflow and ads providers", "", others)));
  else {
    for (const p of others.data) {
      rows.push(Promise.resolve(oauthRow(`${p.kind}:${p.provider}`, KIND_LABEL[p.kind] ?? p.kind, p.display_name, p.base_path, p.connection as ConnectionStatus | null,
        { oauth: p.oauth, configured: p.configured, connectHint: p.connect_hint })));
    }
  }

  return (await Promise.all(rows)).filter((r): r is ConnectionRow => r !== null);
}
