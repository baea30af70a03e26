import { ApiError, asApiError, get, isAbort } from "./api.ts";
import type { AdsProviderList, ConnectionStatus, SocialConnectionStatus, SocialProviderList } from "./types.ts";

// Every connection of the account in one list: social and search connectors, team chat, the workflow tool,
// community ads and the ads providers. A 404 on a connection means "not connected".

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

  const [social, ads] = await Promise.all([
    get<SocialProviderList>("/api/integrations/social/providers", undefined, signal).catch((err) => { if (isAbort(err)) throw err; return err as unknown; }),
    get<AdsProviderList>("/api/integrations/ads/providers", undefined, signal).catch((err) => { if (isAbort(err)) throw err; return err as unknown; }),
  ]);

  if (social && typeof social === "object" && "data" in social) {
    for (const p of (social as SocialProviderList).data) {
      const base = p.connection_path.replace(/\/connection$/, "");
      rows.push(guard(`social:${p.id}`, "Social", p.display_name, p.connection_path, async () => {
        const s = await connection<SocialConnectionStatus>(`${base}/status`, signal);
        if (s === "absent") return null;
        return {
          key: `social:${p.id}`, kind: "Social", name: p.display_name, status: s?.status ?? "not_connected", scopes: [], tokenExpiresAt: null,
          lastError: s?.last_error ?? null, lastErrorAt: null, facts: s?.terms.length ? `terms: ${s.terms.join(", ")}` : null,
          authPath: null, notConfigured: false, disconnectPath: p.connection_path,
          connectHint: `Connect with the API: PUT ${p.connection_path} with the provider's credentials.`, loadError: null,
        };
      }));
    }
  } else rows.push(Promise.resolve(failedRow("social", "Social", "Social and search providers", "", social)));

  const single = (key: string, kind: string, name: string, base: string, oauth: boolean, connectHint?: string) =>
    rows.push(guard(key, kind, name, `${base}/connection`, async () => {
      const c = await connection<ConnectionStatus>(`${base}/connection`, signal);
      return c === "absent" ? null : oauthRow(key, kind, name, base, c, { oauth, connectHint });
    }));
  single("chat", "Chat", "Team chat", "/api/integrations/chat", true);
  single("workflow", "Workflow", "Workflow tool (n8n)", "/api/integrations/workflow", false,
    "Connect with the API: POST /api/integrations/workflow/connect with the instance's URL and API key.");
  single("community-ads", "Community ads", "Community ads (conversions)", "/api/integrations/community-ads", true);

  if (ads && typeof ads === "object" && "data" in ads) {
    for (const p of (ads as AdsProviderList).data) {
      rows.push(guard(`ads:${p.id}`, "Ads", p.display_name, `${p.base_path}/connection`, async () => {
        const c = await connection<ConnectionStatus>(`${p.base_path}/connection`, signal);
        return c === "absent" ? null : oauthRow(`ads:${p.id}`, "Ads", p.display_name, p.base_path, c, { oauth: true, configured: p.configured });
      }));
    }
  } else rows.push(Promise.resolve(failedRow("ads", "Ads", "Ads providers", "", ads)));

  return (await Promise.all(rows)).filter((r): r is ConnectionRow => r !== null);
}
