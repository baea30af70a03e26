import { useState } from "preact/hooks";
import { OPERATIONAL_EVENT_TYPES } from "@trendgate/contracts/vocabulary";
import { EmptyState, Loading, LoadMore } from "../components/EmptyState.tsx";
import { ErrorBanner } from "../components/ErrorBanner.tsx";
import { Field } from "../components/Field.tsx";
import { PageHeader } from "../components/Layout.tsx";
import { Table } from "../components/Table.tsx";
import { Time } from "../components/Time.tsx";
import { useAction, usePagedList, useTitle } from "../hooks.ts";
import type { AccountEvent } from "../types.ts";

const str = (v: unknown) => (typeof v === "string" || typeof v === "number" ? String(v) : v === undefined || v === null ? "" : JSON.stringify(v));

/** One line about an account event, from its type and data (contracts/vocabulary.ts OPERATIONAL_EVENTS). */
export function summarize(e: AccountEvent) {
  const d = e.data;
  const hook = d.webhook_id ? <a href={`#/webhooks/${encodeURIComponent(str(d.webhook_id))}`}><code>{str(d.webhook_id)}</code></a> : null;
  switch (e.type) {
    case "webhook.disabled": return <>Subscription {hook} was disabled{d.reason ? `: ${str(d.reason)}` : ""}.</>;
    case "webhook.delivery_failed": return <>A delivery to {hook} exhausted its retries{d.error ? `: ${str(d.error)}` : ""}.</>;
    case "connection.needs_reauth": return <>{str(d.provider)} needs to be authorised again{d.reason ? `: ${str(d.reason)}` : ""}. <a href="#/connections">Reconnect</a></>;
    case "connection.connected": return <>{str(d.provider)} was connected.</>;
    case "connector.needs_reauth": return <>{str(d.provider)} refused its credentials{d.reason ? `: ${str(d.reason)}` : ""}.</>;
    case "connector.recovered": return <>{str(d.provider)} is polling again.</>;
    case "connector.delivery_failing": return <>Workflow pushes to {str(d.provider)} are failing{d.error ? `: ${str(d.error)}` : ""}.</>;
    case "report.export_ready": return <>Export <code>{str(d.export_id)}</code> is ready ({str(d.rows)} rows). <a href="#/reports">Reports</a></>;
    default: {
      const parts = Object.entries(d).slice(0, 4).map(([k, v]) => `${k}: ${str(v)}`);
      return parts.length ? parts.join(", ") : <span class="muted">—</span>;
    }
  }
}

export function ActivityPage() {
  useTitle("Activity");
  const [type, setType] = useState("");
  const [applied, setApplied] = useState("");
  const action = useAction();
  const { list, rows, cursor, loadMore } = usePagedList<AccountEvent>("/api/events", { limit: 50, type: applied || undefined }, [applied], action.run);

  return (
    <>
      <PageHeader title="Activity">What the service told your account about, newest first.</PageHeader>
      <form class="filters card" role="search" aria-label="Filter the activity" onSubmit={(e) => { e.preventDefault(); setApplied(type.trim()); }}>
        <Field id="act-type" label="Event type" hint="e.g. webhook.disabled; empty for every type">
          {(a) => <input {...a} type="text" list="act-types" autoComplete="off" value={type} onInput={(e) => setType(e.currentTarget.value)} />}
        </Field>
        <datalist id="act-types">{OPERATIONAL_EVENT_TYPES.map((t) => <option key={t} value={t} />)}</datalist>
        <div class="actions">
          <button type="submit" class="btn">Filter</button>
          {applied && <button type="button" class="btn btn-quiet" onClick={() => { setType(""); setApplied(""); }}>Show all</button>}
        </div>
      </form>
      <ErrorBanner error={action.error ?? list.error} />
      <section class="card" aria-labelledby="events-title" aria-busy={list.loading}>
        <h2 id="events-title">Events</h2>
        {list.loading && !list.data ? <Loading /> : list.data && (rows.length === 0
          ? <EmptyState title={applied ? `No ${applied} events.` : "Nothing has happened yet."}>
            {applied ? "Clear the filter to see every event." : "Events such as a disabled subscription or a connection needing re-authorisation appear here."}
          </EmptyState>
          : <Table caption="Account events, newest first" captionHidden rows={rows} rowKey={(e) => e.id} columns={[
            { label: "Time", cell: (e) => <Time iso={e.created_at} /> },
            { label: "Type", cell: (e) => <code>{e.type}</code> },
            { label: "Summary", cell: summarize },
          ]} />)}
        <LoadMore cursor={cursor} busy={action.busy === "more"} onMore={loadMore} />
      </section>
    </>
  );
}
