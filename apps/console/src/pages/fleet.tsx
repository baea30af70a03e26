import { useState } from "preact/hooks";
import { ApiError, isAbort } from "../api.ts";
import { EmptyState, Loading } from "../components/EmptyState.tsx";
import { ErrorBanner } from "../components/ErrorBanner.tsx";
import { Field } from "../components/Field.tsx";
import { PageHeader } from "../components/Layout.tsx";
import { StatusBadge } from "../components/StatusBadge.tsx";
import { Table } from "../components/Table.tsx";
import { formatBytes, formatDuration, formatNumber, formatSeconds } from "../format.ts";
import { useInterval, useLoad, useTitle } from "../hooks.ts";
import type { Problem, QueueDepth, StatusCheck, StatusResponse, TableSize } from "../types.ts";

// The operators' view of the whole service (#/fleet): GET /status with the admin token. Not a customer page: no
// console session, no customer navigation. The token lives in this module only (never in storage or the URL), so a
// reload forgets it.

let adminToken: string | null = null;

const REFRESH_MS = 10_000;

type Answer = { kind: "status"; status: StatusResponse; at: number } | { kind: "rejected" };

async function loadStatus(token: string, signal: AbortSignal): Promise<Answer> {
  let res: Response;
  try {
    res = await fetch("/status", { headers: { Authorization: `Bearer ${token}` }, signal, cache: "no-store", credentials: "same-origin" });
  } catch (err) {
    if (isAbort(err)) throw err;
    throw new ApiError(0, null, "The server could not be reached. Check your connection and try again.");
  }
  // 401: a credential that is not the admin token (it counts as a failed login: no auto-refresh after it).
  if (res.status === 401) return { kind: "rejected" };
  let body: unknown = null;
  try { body = await res.json(); } catch { /* not JSON */ }
  // 503 (a dependency down) carries the same body as 200. Without the operators' fields it is the public answer
  // (a token shaped like an API key gets that): the token was not accepted either.
  if ((res.status === 200 || res.status === 503) && body && typeof body === "object" && "checks" in body) {
    const status = body as StatusResponse;
    return status.queues ? { kind: "status", status, at: Date.now() } : { kind: "rejected" };
  }
  const problem = body && typeof body === "object" && "code" in body ? (body as Problem) : null;
  throw new ApiError(res.status, problem, problem?.detail ?? problem?.title ?? `The server answered ${res.status} ${res.statusText}`.trim());
}

const CHECKS: { key: keyof StatusResponse["checks"]; label: string }[] = [{ key: "postgres", label: "Postgres" }, { key: "redis", label: "Redis" }];

function FleetStatus({ s, at }: { s: StatusResponse; at: number }) {
  const checks = CHECKS.map((c) => ({ ...c, check: s.checks[c.key] as StatusCheck }));
  const queues = Object.entries(s.queues ?? {}).sort(([a], [b]) => a.localeCompare(b));
  const tables = s.tables ? Object.entries(s.tables).sort(([, a], [, b]) => b.bytes - a.bytes) : null;
  return (
    <>
      <section class="card">
        <h2>Service</h2>
        <dl class="facts">
          <dt>Status</dt><dd><StatusBadge status={s.status} /></dd>
          <dt>Version</dt><dd><code>{s.version}</code></dd>
          <dt>Uptime</dt><dd>{s.uptime_seconds === undefined ? "—" : formatSeconds(s.uptime_seconds)}</dd>
          <dt>Checked</dt>
          <dd><time dateTime={new Date(at).toISOString()}>{new Date(at).toLocaleTimeString("en-GB")}</time><span class="muted"> · refreshed every 10 s</span></dd>
        </dl>
        <Table caption="Checks" rows={checks} rowKey={(c) => c.key} columns={[
          { label: "Check", cell: (c) => c.label },
          { label: "Status", cell: (c) => <StatusBadge status={c.check.status} /> },
          { label: "Latency", numeric: true, cell: (c) => (typeof c.check.latency_ms === "number" ? formatDuration(c.check.latency_ms) : "—") },
          { label: "Error", cell: (c) => c.check.error ?? <span class="muted">—</span> },
        ]} />
      </section>
      <section class="card">
        <h2>Queues</h2>
        {queues.length === 0
          ? <EmptyState title="No queue depths.">{s.checks.redis.status === "down" ? "Redis is down: the depths are read from it." : "No queue answered in time."}</EmptyState>
          : <Table<[string, QueueDepth]> caption="Queues" captionHidden rows={queues} rowKey={([name]) => name} columns={[
            { label: "Queue", cell: ([name]) => <code>{name}</code> },
            { label: "Waiting", numeric: true, cell: ([, q]) => formatNumber(q.waiting) },
            { label: "Active", numeric: true, cell: ([, q]) => formatNumber(q.active) },
            { label: "Delayed", numeric: true, cell: ([, q]) => formatNumber(q.delayed) },
            { label: "Failed", numeric: true, cell: ([, q]) => (q.failed > 0 ? <StatusBadge status="failed" label={`${formatNumber(q.failed)} failed`} /> : "0") },
          ]} />}
      </section>
      <section class="card">
        <h2>Tables</h2>
        {!tables || tables.length === 0
          ? <EmptyState title="No table sizes.">{s.checks.postgres.status === "down" ? "Postgres is down: the sizes are read from it." : "Postgres did not answer in time."}</EmptyState>
          : <Table<[string, TableSize]> caption="Tables" captionHidden rows={tables} rowKey={([name]) => name} columns={[
            { label: "Table", cell: ([name]) => <code>{name}</code> },
            { label: "Size", numeric: true, cell: ([, t]) => formatBytes(t.bytes) },
            { label: "Rows (estimate)", numeric: true, cell: ([, t]) => (t.rows_estimate < 0 ? <span class="muted">not analysed yet</span> : formatNumber(t.rows_estimate)) },
          ]} />}
      </section>
    </>
  );
}

/** The fleet page, shown instead of the console's session flow (main.tsx). */
export function FleetPage() {
  useTitle("Fleet status");
  const [token, setToken] = useState(adminToken);
  const [draft, setDraft] = useState(adminToken ?? "");
  const [missing, setMissing] = useState(false);
  const status = useLoad(async (signal): Promise<Answer | null> => {
    if (!token) return null;
    const a = await loadStatus(token, signal);
    if (a.kind === "rejected" && adminToken === token) adminToken = null;
    return a;
  }, [token]);
  const answer = status.data;
  // Nothing is sent again after a refusal: each wrong token counts against this address as a failed login.
  const live = token !== null && answer?.kind !== "rejected";
  useInterval(() => void status.reload(true), live ? REFRESH_MS : null);

  const submit = (e: Event) => {
    e.preventDefault();
    const t = draft.trim();
    setMissing(!t);
    if (!t) return;
    adminToken = t;
    if (t === token) void status.reload();
    else setToken(t);
  };
  const forget = () => { adminToken = null; setToken(null); setDraft(""); };

  return (
    <div class="shell">
      <header class="topbar">
        <div class="topbar-inner">
          <span class="brand">Trendgate console</span>
          <p class="session-info">Operator view</p>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        <PageHeader title="Fleet status" actions={live && <>
          <button type="button" class="btn" onClick={() => void status.reload()} disabled={status.loading} aria-busy={status.loading}>Refresh</button>
          <button type="button" class="btn btn-quiet" onClick={forget}>Forget the token</button>
        </>}>
          The whole service's health, queue depths and table sizes, for its operators.
        </PageHeader>
        <form class="card" onSubmit={submit}>
          <Field id="fleet-token" label="Admin token" class="field-narrow" error={missing ? "Enter the admin token." : undefined}
            hint="Kept in this tab's memory only: reloading the page forgets it.">
            {(a) => <input {...a} type="password" autoComplete="off" value={draft} onInput={(e) => setDraft(e.currentTarget.value)} />}
          </Field>
          <div class="actions"><button type="submit" class="btn btn-primary">Show fleet status</button></div>
        </form>
        {answer?.kind === "rejected" && <div class="banner banner-error" role="alert"><p class="banner-title">The admin token was not accepted.</p></div>}
        <ErrorBanner error={status.error} />
        {token && status.loading && !answer && <Loading />}
        {answer?.kind === "status" && <FleetStatus s={answer.status} at={answer.at} />}
        <p class="dashboard-link">
          <a href="/admin/queues" target="_blank" rel="noopener noreferrer" aria-describedby="fleet-dashboard-hint">Open the queue dashboard</a>
        </p>
        <p class="hint" id="fleet-dashboard-hint">Opens in a new tab. It asks for a login: any user name, and the admin token as the password.</p>
      </main>
    </div>
  );
}
