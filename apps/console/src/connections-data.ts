import { ApiError, asApiError, get, isAbort } from "./api.ts";
import type { AdsProviderList, ChatProviderList, ConnectionStatus, SocialConnectionStatus, SocialProviderList } from "./types.ts";

// Every connection of the account in one list: social and search connectors, the chat providers, the workflow tool,
// community ads and the ads providers. Which social, chat and ads providers there are, and where their routes are, is
// read from the API's provider lists (the connector registry), never named here. A 404 on a connection means "not
// connected".

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
  /** How to connect a provider without browser OAuth. */
  connectHint: string | null;
  loadError: ApiError | null;
}

const ATTENTION = new Set(["needs_reauth", "error", "rate_limited", "quota_exhausted"]);
export const needsAttention = (r: ConnectionRow) => !!r.loadError || ATTENTION.has(r.status);

/** The connection at `path`: the value, null when not connected (404), "absent" when the route does not exist here. */
async function connection<T>(path: string, signal: AbortSignal): Promise<T | null | "absent"> {
  try {
    return await get<T>(path, undefined, signal);
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return err.code === "route_not_found" ? "absent" : null;
    throw err;
  }
}

function oauthRow(key: string, kind: string, name: string, base: string, c: ConnectionStatus | null, opts: { oauth: boolean; configured?: boolean; connectHint?: string }): ConnectionRow {
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

  const [social, chat, ads] = await Promise.all([
    list<SocialProviderList>("/api/integrations/social/providers"),
    list<ChatProviderList>("/api/integrations/chat/providers"),
    list<AdsProviderList>("/api/integrations/ads/providers"),
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

  /** A browser-OAuth provider from a provider list (chat, ads): its connection at `base_path`. */
  const oauthProvider = (prefix: string, kind: string, p: { id: string; display_name: string; base_path: string; configured: boolean }) =>
    rows.push(guard(`${prefix}:${p.id}`, kind, p.display_name, `${p.base_path}/connection`, async () => {
      const c = await connection<ConnectionStatus>(`${p.base_path}/connection`, signal);
      return c === "absent" ? null : oauthRow(`${prefix}:${p.id}`, kind, p.display_name, p.base_path, c, { oauth: true, configured: p.configured });
    }));

  if (chat instanceof ApiError) rows.push(Promise.resolve(failedRow("chat", "Chat", "Chat providers", "", chat)));
  else for (const p of chat.data) oauthProvider("chat", "Chat", p);

  const single = (key: string, kind: string, name: string, base: string, oauth: boolean, connectHint?: string) =>
    rows.push(guard(key, kind, name, `${base}/connection`, async () => {
      const c = await connection<ConnectionStatus>(`${base}/connection`, signal);
      return c === "absent" ? null : oauthRow(key, kind, name, base, c, { oauth, connectHint });
    }));
  single("workflow", "Workflow", "Workflow tool (n8n)", "/api/integrations/workflow", false,
    "Connect with the API: POST /api/integrations/workflow/connect with the instance's URL and API key.");
  single("community-ads", "Community ads", "Community ads (conversions)", "/api/integrations/community-ads", true);

  if (ads instanceof ApiError) rows.push(Promise.resolve(failedRow("ads", "Ads", "Ads providers", "", ads)));
  else for (const p of ads.data) oauthProvider("ads", "Ads", p);

  return (await Promise.all(rows)).filter((r): r is ConnectionRow => r !== null);
}
