import { api, get } from "../api.ts";
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

export function ConnectionsPage() {
  useTitle("Connections");
  const conns = useLoad(loadConnections, []);
  const action = useAction();
  const [dialog, confirm] = useConfirm();

  const authorize = (r: ConnectionRow) => action.run(`auth:${r.key}`, async () => {
    // Back to this page after the provider's consent (the gateway's callback redirects to its own origin).
    const back = `${location.origin}${location.pathname}${location.search}#/connections`;
    const start = await get<AuthorizationStart>(`${r.authPath!}?return_url=${encodeURIComponent(back)}`);
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
            { label: "Scopes", cell: (r) => (r.scopes.length ? r.scopes.map((s) => <code key={s} class="tag">{s}</code>) : <span class="muted">—</span>) },
            { label: "Token expires", cell: (r) => <Time iso={r.tokenExpiresAt} empty={r.status === "not_connected" || r.kind === "Social" || r.loadError ? "—" : "Does not expire"} /> },
            { label: "Last error", cell: (r) => (r.loadError
              ? <span class="error-text">{r.loadError.message}</span>
              : r.lastError ? <><span class="error-text">{r.lastError}</span>{r.lastErrorAt && <span class="cell-sub"><Time iso={r.lastErrorAt} relative /></span>}</> : <span class="muted">—</span>) },
            { label: "Account", cell: (r) => r.facts ?? <span class="muted">—</span> },
            { label: "Actions", cell: actions },
          ]} />)}
      </section>
    </>
  );
}
