import { useEffect, useRef } from "preact/hooks";
import { EXECUTION_OUTCOMES } from "@trendgate/contracts/vocabulary";
import { get } from "../api.ts";
import { PageHeader } from "../components/Layout.tsx";
import { EmptyState, Loading } from "../components/EmptyState.tsx";
import { ErrorBanner } from "../components/ErrorBanner.tsx";
import { StatusBadge } from "../components/StatusBadge.tsx";
import { Table } from "../components/Table.tsx";
import { Time } from "../components/Time.tsx";
import { loadConnections, needsAttention } from "../connections-data.ts";
import { formatNumber } from "../format.ts";
import { useLoad, useTitle } from "../hooks.ts";
import { accessToken } from "../session.ts";
import type { ExecutionOutcome, TrendList, Webhook, WebhookExecutionList, WebhookList } from "../types.ts";

const WEBHOOKS = "/api/integrations/webhooks";

/** Opens the trend stream and calls `onEvent` (debounced 1 s) for each message; closed on unmount; failures ignored. */
function useTrendStream(onEvent: () => void) {
  const cb = useRef(onEvent);
  cb.current = onEvent;
  useEffect(() => {
    const token = accessToken();
    if (!token || typeof WebSocket === "undefined") return;
    let ws: WebSocket | null = null;
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const proto = location.protocol === "https:" ? "wss:" : "ws:";
      ws = new WebSocket(`${proto}//${location.host}/api/stream?access_token=${encodeURIComponent(token)}`);
      ws.onmessage = (m) => {
        try {
          const msg = JSON.parse(String(m.data)) as { id?: string; event?: { type?: string } };
          if (!msg.event?.type) return;
        } catch { return; }
        clearTimeout(timer);
        timer = setTimeout(() => cb.current(), 1000);
      };
      ws.onerror = () => { /* live updates are a nicety: the page works without them */ };
    } catch { /* ignore */ }
    return () => { clearTimeout(timer); ws?.close(); };
  }, []);
}

function TrendsNow() {
  const trends = useLoad((signal) => get<TrendList>("/api/trends", { status: "active", sort: "velocity", limit: 20 }, signal), []);
  useTrendStream(() => void trends.reload(true));
  return (
    <section class="card" aria-labelledby="trends-title" aria-busy={trends.loading}>
      <h2 id="trends-title">Trends now</h2>
      <ErrorBanner error={trends.error} />
      {trends.loading && !trends.data ? <Loading /> : trends.data && (trends.data.data.length === 0
        ? <EmptyState title="No active trends.">Trends appear here as soon as your signals show one; send signals or connect a social provider.</EmptyState>
        : <Table caption="Active trends, fastest first" captionHidden rows={trends.data.data} rowKey={(t) => t.id} columns={[
          { label: "Topic", cell: (t) => <><strong>{t.name}</strong><span class="cell-sub">{t.summary}</span></> },
          { label: "Category", cell: (t) => <code>{t.category}</code> },
          { label: "Severity", cell: (t) => <StatusBadge status={t.severity} /> },
          { label: "Stage", cell: (t) => <StatusBadge status={t.stage} /> },
          { label: "Score", numeric: true, cell: (t) => formatNumber(t.anomaly_score) },
          { label: "Velocity (/h)", numeric: true, cell: (t) => formatNumber(t.velocity) },
          { label: "Detected", cell: (t) => <Time iso={t.detected_at} relative /> },
        ]} />)}
    </section>
  );
}

interface DeliveryCounts { webhook: Webhook; counts: Record<ExecutionOutcome, number>; capped: boolean }

function useWebhookHealth() {
  return useLoad(async (signal) => {
    const hooks = await get<WebhookList>(WEBHOOKS, { limit: 200 }, signal);
    const since = new Date(Date.now() - 86_400_000).toISOString();
    const counts = await Promise.all(hooks.data.map(async (w): Promise<DeliveryCounts> => {
      const page = await get<WebhookExecutionList>(`${WEBHOOKS}/${encodeURIComponent(w.id)}/executions`, { since, limit: 100 }, signal);
      const c = Object.fromEntries(EXECUTION_OUTCOMES.map((o) => [o, 0])) as Record<ExecutionOutcome, number>;
      // `since` is applied by the server; the filter here keeps the count right should an older server ignore it.
      for (const e of page.data) if (Date.parse(e.created_at) >= Date.parse(since)) c[e.outcome] = (c[e.outcome] ?? 0) + 1;
      return { webhook: w, counts: c, capped: page.next_cursor !== null };
    }));
    return { hooks: hooks.data, counts };
  }, []);
}
type Health = ReturnType<typeof useWebhookHealth>;
const hookLabel = (w: Webhook) => w.description || w.url;

function WebhooksFailing({ data }: { data: Health }) {
  const failing = data.data?.hooks.filter((w) => w.failing_since || w.status === "disabled") ?? [];
  return (
    <section class="card" aria-labelledby="failing-title" aria-busy={data.loading}>
      <h2 id="failing-title">Webhooks failing</h2>
      <ErrorBanner error={data.error} />
      {data.loading && !data.data ? <Loading /> : data.data && (failing.length === 0
        ? <EmptyState title={data.data.hooks.length ? "Every subscription is delivering." : "No webhook subscriptions yet."}>
          {data.data.hooks.length ? null : <>Create one on the <a href="#/webhooks">Webhooks</a> page.</>}
        </EmptyState>
        : <ul class="list">
          {failing.map((w) => (
            <li key={w.id}>
              <a href={`#/webhooks/${encodeURIComponent(w.id)}`} class="break">{hookLabel(w)}</a>{" "}
              <StatusBadge status={w.status === "disabled" ? "disabled" : "failed"} label={w.status === "disabled" ? "disabled" : "failing"} />
              <span class="cell-sub">
                {w.failing_since && <>Failing since <Time iso={w.failing_since} /> (<Time iso={w.failing_since} relative />). </>}
                {w.disabled_reason && <>Disabled: {w.disabled_reason}</>}
              </span>
            </li>
          ))}
        </ul>)}
    </section>
  );
}

function Deliveries({ data }: { data: Health }) {
  const totals = Object.fromEntries(EXECUTION_OUTCOMES.map((o) => [o, data.data?.counts.reduce((n, c) => n + c.counts[o], 0) ?? 0])) as Record<ExecutionOutcome, number>;
  return (
    <section class="card" aria-labelledby="deliveries-title" aria-busy={data.loading}>
      <h2 id="deliveries-title">Deliveries in the last 24 hours</h2>
      {data.loading && !data.data ? <Loading /> : data.data && (data.data.counts.length === 0
        ? <EmptyState title="No deliveries to count.">Deliveries are counted per subscription once you have one.</EmptyState>
        : <>
          <ul class="stats" aria-label="All subscriptions, by outcome">
            {EXECUTION_OUTCOMES.map((o) => <li key={o}><span class="stat-value">{totals[o]}</span> <StatusBadge status={o} /></li>)}
          </ul>
          <Table caption="Deliveries per subscription in the last 24 hours, by outcome" captionHidden rows={data.data.counts} rowKey={(c) => c.webhook.id} columns={[
            { label: "Subscription", cell: (c) => <>
              <a href={`#/webhooks/${encodeURIComponent(c.webhook.id)}`} class="break">{hookLabel(c.webhook)}</a>
              {c.capped && <span class="cell-sub">The latest 100 deliveries are counted.</span>}
            </> },
            ...EXECUTION_OUTCOMES.map((o) => ({ label: o[0].toUpperCase() + o.slice(1), numeric: true, cell: (c: DeliveryCounts) => `${c.counts[o]}` })),
          ]} />
        </>)}
    </section>
  );
}

function ConnectionsAttention() {
  const conns = useLoad(loadConnections, []);
  const rows = conns.data?.filter(needsAttention) ?? [];
  return (
    <section class="card" aria-labelledby="attention-title" aria-busy={conns.loading}>
      <h2 id="attention-title">Connections needing attention</h2>
      <ErrorBanner error={conns.error} />
      {conns.loading && !conns.data ? <Loading /> : conns.data && (rows.length === 0
        ? <EmptyState title="All connections are healthy.">Manage them on the <a href="#/connections">Connections</a> page.</EmptyState>
        : <ul class="list">
          {rows.map((r) => (
            <li key={r.key}>
              <strong>{r.name}</strong> <span class="muted">({r.kind})</span>{" "}
              {r.loadError ? <StatusBadge status="error" label="could not load" /> : <StatusBadge status={r.status} />}
              <span class="cell-sub">{r.loadError?.message ?? r.lastError ?? ""} <a href="#/connections">Fix on the Connections page</a></span>
            </li>
          ))}
        </ul>)}
    </section>
  );
}

export function OverviewPage() {
  useTitle("Overview");
  const health = useWebhookHealth();
  return (
    <>
      <PageHeader title="Overview">What is trending now, and whether everything that delivers it is working.</PageHeader>
      <TrendsNow />
      <div class="grid-2">
        <WebhooksFailing data={health} />
        <ConnectionsAttention />
      </div>
      <Deliveries data={health} />
    </>
  );
}
