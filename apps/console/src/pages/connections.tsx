import { useEffect, useState } from "preact/hooks";
import { api, ApiError, get } from "../api.ts";
import { useConfirm } from "../components/Dialog.tsx";
import { EmptyState, Loading } from "../components/EmptyState.tsx";
import { ErrorBanner, Notice } from "../components/ErrorBanner.tsx";
import { PageHeader } from "../components/Layout.tsx";
import { StatusBadge } from "../components/StatusBadge.tsx";
import { Table } from "../components/Table.tsx";
import { Time } from "../components/Time.tsx";
import { loadConnections, type ConnectionRow } from "../connections-data.ts";
import { useAction, useLoad, useTitle } from "../hooks.ts";
import type { AuthorizationStart, Disconnected } from "../types.ts";

const CONNECTED = new Set(["connected", "active", "needs_reauth", "error", "rate_limited", "quota_exhausted"]);

// What the gateway's OAuth callback appends to the return_url (contracts/connections.ts CALLBACK_ERRORS).
const CALLBACK_ERRORS: Record<string, string> = {
  invalid_state: "the authorization link is unknown or was already used; start again",
  expired_state: "the authorization took too long; start again",
  access_denied: "access was declined at the provider, so nothing was connected",
  provider_error: "the provider answered with an error",
  exchange_failed: "exchanging the provider's code for tokens failed",
  provider_not_configured: "the provider's OAuth client is not configured on this server",
  invalid_request: "the provider sent back neither a code nor an error",
};
const OAUTH_PARAMS = ["connection", "status", "error"];

/** Where the provider's consent sends the browser back: this console, on this page (the gateway allows its own origin). */
function returnUrl(): string {
  const u = new URL(location.href);
  for (const k of [...u.searchParams.keys()]) if (k !== "s") u.searchParams.delete(k);
  u.hash = "#/connections";
  return u.href;
}

/** The outcome of an OAuth flow that returned here (`?connection=…&status=…`), read once; removed from the URL on leaving. */
function useOAuthOutcome() {
  const [outcome] = useState(() => {
    const q = new URLSearchParams(location.search);
    const status = q.get("status");
    if (!q.has("connection") || !status) return null;
    return { provider: q.get("connection") ?? "", ok: status === "connected", error: q.get("error") };
  });
  useEffect(() => () => {
    const u = new URL(location.href);
    if (!OAUTH_PARAMS.some((k) => u.searchParams.has(k))) return;
    for (const k of OAUTH_PARAMS) u.searchParams.delete(k);
    history.replaceState(history.state, "", u.href);
  }, []);
  return outcome;
}

export function ConnectionsPage() {
  useTitle("Connections");
  const conns = useLoad(loadConnections, []);
  const action = useAction();
  const [dialog, confirm] = useConfirm();

  const oauth = useOAuthOutcome();
  const authorize = (r: ConnectionRow) => action.run(`auth:${r.key}`, async () => {
    // Back to this page after the provider's consent (the gateway's callback redirects to its own origin).
    let start: AuthorizationStart;
    try {
      start = await get<AuthorizationStart>(r.authPath!, { return_url: returnUrl() });
    } catch (err) {
      // Served from another origin than the gateway's PUBLIC_BASE_URL: the callback then shows its own page instead.
      if (!(err instanceof ApiError && err.status === 422 && "return_url" in err.fields)) throw err;
      start = await get<AuthorizationStart>(r.authPath!);
    }
    // Consent pages refuse to be framed: inside a customer's iframe, the provider opens in a new tab.
    if (window.top !== window.self) window.open(start.authorization_url, "_blank", "noopener");
    else window.location.assign(start.authorization_url);
  });
  const disconnect = async (r: ConnectionRow) => {
    const ok = await confirm({
      title: `Disconnect ${r.name}?`, confirmLabel: "Disconnect", danger: true,
      message: "Its credentials are deleted here (and revoked at the provider where it allows), and what waits to be sent through it is cancelled.",
    });
    if (!ok) return;
    await action.run(`disconnect:${r.key}`, () => api<Disconnected | undefined>(r.disconnectPath, { method: "DELETE" }), (d) => {
      void conns.reload(true);
      return d?.revocation === "failed"
        ? `${r.name} disconnected here, but revoking at the provider failed: ${d.revocation_error ?? "no reason given"}.`
        : `${r.name} disconnected.`;
    });
  };

  const actions = (r: ConnectionRow) => {
    const connected = CONNECTED.has(r.status);
    return (
      <div class="row-actions">
        {r.authPath && (
          <button type="button" class="btn btn-small" disabled={action.busy === `auth:${r.key}`} onClick={() => void authorize(r)}>
            {connected ? "Reconnect" : "Connect"}<span class="visually-hidden"> {r.name}</span>
          </button>
        )}
        {connected && r.disconnectPath && (
          <button type="button" class="btn btn-small btn-danger" disabled={action.busy === `disconnect:${r.key}`} onClick={() => void disconnect(r)}>
            Disconnect<span class="visually-hidden"> {r.name}</span>
          </button>
        )}
        {!r.authPath && !connected && r.notConfigured && <span class="muted small">Not configured on this server</span>}
        {!r.authPath && !connected && !r.notConfigured && r.connectHint && <span class="muted small">{r.connectHint}</span>}
      </div>
    );
  };

  return (
    <>
      <PageHeader title="Connections">The providers Trendgate reads signals from and delivers to.</PageHeader>
      {dialog}
      {oauth && (oauth.ok
        ? <p class="banner banner-ok" role="status">Connected: {oauth.provider}.</p>
        : <div class="banner banner-error" role="alert"><p class="banner-title">Connecting {oauth.provider || "the provider"} did not complete: {CALLBACK_ERRORS[oauth.error ?? ""] ?? oauth.error ?? "unknown error"}.</p></div>)}
      <ErrorBanner error={action.error} onDismiss={() => action.setError(null)} />
      <Notice message={action.notice} />
      <section class="card" aria-labelledby="conn-title" aria-busy={conns.loading}>
        <h2 id="conn-title">Providers</h2>
        <ErrorBanner error={conns.error} />
        {conns.loading && !conns.data ? <Loading /> : conns.data && (conns.data.length === 0
          ? <EmptyState title="No providers are available on this server." />
          : <Table caption="Providers and their connections" captionHidden rows={conns.data} rowKey={(r) => r.key} columns={[
            { label: "Provider", cell: (r) => <><strong>{r.name}</strong><span class="cell-sub">{r.kind}</span></> },
            { label: "Status", cell: (r) => (r.loadError ? <StatusBadge status="error" label="could not load" /> : <StatusBadge status={r.status} />) },
            { label: "Scopes", class: "cell-scopes", cell: (r) => (r.scopes.length ? r.scopes.map((s) => <code key={s} class="tag">{s}</code>) : <span class="muted">—</span>) },
            { label: "Token expires", cell: (r) => <Time iso={r.tokenExpiresAt} empty={r.status === "not_connected" || r.kind === "Social" || r.loadError ? "—" : "Does not expire"} /> },
            { label: "Last error", class: "cell-text", cell: (r) => (r.loadError
              ? <span class="error-text">{r.loadError.message}</span>
              : r.lastError ? <><span class="error-text">{r.lastError}</span>{r.lastErrorAt && <span class="cell-sub"><Time iso={r.lastErrorAt} relative /></span>}</> : <span class="muted">—</span>) },
            { label: "Account", class: "cell-text", cell: (r) => r.facts ?? <span class="muted">—</span> },
            { label: "Actions", class: "cell-text", cell: actions },
          ]} />)}
      </section>
    </>
  );
}
