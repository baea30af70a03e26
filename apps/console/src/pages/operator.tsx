import { useState } from "preact/hooks";
import { OPERATOR_TRANSITIONS, SEVERITIES, SNOOZE_MINUTES } from "@trendgate/contracts/vocabulary";
import { api, ApiError, get, post } from "../api.ts";
import { EmptyState, Loading, LoadMore } from "../components/EmptyState.tsx";
import { ErrorBanner, Notice } from "../components/ErrorBanner.tsx";
import { Field } from "../components/Field.tsx";
import { PageHeader } from "../components/Layout.tsx";
import { StatusBadge } from "../components/StatusBadge.tsx";
import { Table } from "../components/Table.tsx";
import { Time } from "../components/Time.tsx";
import { formatNumber } from "../format.ts";
import { useAction, useLoad, usePagedList, useTitle } from "../hooks.ts";
import type { CreateFeedbackBody, FeedbackResult, FeedbackVerdict, OperatorActionBody, OperatorActionName, OperatorItem, OperatorItemWithHistory } from "../types.ts";

const BASE = "/api/operator/items";
const itemPath = (id: string, ...rest: string[]) => [BASE, encodeURIComponent(id), ...rest].join("/");

const DONE: Record<OperatorActionName, string> = { acknowledge: "acknowledged", resolve: "resolved", snooze: "snoozed", reopen: "reopened", mute: "resolved, and its topic muted for 24 hours" };

const SNOOZES = [
  { minutes: 15, label: "15 minutes" }, { minutes: 60, label: "1 hour" }, { minutes: 240, label: "4 hours" },
  { minutes: 1440, label: "1 day" }, { minutes: 4320, label: "3 days" }, { minutes: 10_080, label: "1 week" },
].filter((s) => s.minutes >= SNOOZE_MINUTES.min && s.minutes <= SNOOZE_MINUTES.max);

function History({ id, version }: { id: string; version: number }) {
  const item = useLoad((signal) => get<OperatorItemWithHistory>(itemPath(id), undefined, signal), [id, version]);
  if (item.loading && !item.data) return <Loading label="Loading history…" />;
  if (item.error) return <ErrorBanner error={item.error} />;
  const h = item.data?.history ?? [];
  if (h.length === 0) return <EmptyState title="No history yet." />;
  return (
    <Table caption="History, oldest first" rows={h} rowKey={(e) => e.id} columns={[
      { label: "Time", cell: (e) => <Time iso={e.created_at} /> },
      { label: "Change", cell: (e) => e.action.replaceAll("_", " ") },
      { label: "State", cell: (e) => <>{e.from_state ? `${e.from_state} → ` : ""}{e.to_state}</> },
      // A console session's label (or a chat user's name) where the history has one; the actor id otherwise.
      { label: "By", cell: (e) => (typeof e.data.actor_name === "string" ? <span title={e.actor}>{e.data.actor_name}</span> : <code>{e.actor}</code>) },
      { label: "Note", cell: (e) => (typeof e.data.note === "string" ? e.data.note : typeof e.data.error === "string" ? e.data.error : "") },
    ]} />
  );
}

const feedbackPath = (trendId: string, ...rest: string[]) => ["/api/trends", encodeURIComponent(trendId), "feedback", ...rest].join("/");
const VERDICTS: Record<FeedbackVerdict, string> = { not_a_trend: "Not a trend", useful: "Useful" };

/** "Not a trend" / "Useful" on the item's trend: the detector raises (or lowers) the topic's evidence bar; Undo deletes it. */
function TrendFeedback({ trendId, title }: { trendId: string; title: string }) {
  const action = useAction();
  const [recorded, setRecorded] = useState<FeedbackResult | null>(null);
  const send = (verdict: FeedbackVerdict) => action.run(verdict, () => post<FeedbackResult>(feedbackPath(trendId), { verdict } satisfies CreateFeedbackBody), (r) => {
    setRecorded(r);
    const bar = formatNumber(r.evidence_bar);
    return `Recorded: ${VERDICTS[verdict].toLowerCase()}. This topic's evidence bar is now ${bar}${r.evidence_bar > 1 ? ` (its trends need ${bar}× the usual score to alert)` : " (the usual score)"}.`;
  });
  const undo = (r: FeedbackResult) => action.run("undo", () => api<void>(feedbackPath(trendId, r.feedback.id), { method: "DELETE" }),
    () => { setRecorded(null); return "Feedback removed; the evidence bar is recomputed without it."; });
  return (
    <div class="feedback">
      <div class="toolbar" role="group" aria-label={`Feedback on ${title}`}>
        <span class="muted small">Was this a real trend?</span>
        {(Object.keys(VERDICTS) as FeedbackVerdict[]).map((v) => (
          <button key={v} type="button" class="btn btn-small" disabled={action.busy !== null} aria-busy={action.busy === v} onClick={() => void send(v)}>{VERDICTS[v]}</button>
        ))}
        {recorded && <button type="button" class="btn btn-quiet btn-small" disabled={action.busy !== null} onClick={() => void undo(recorded)}>Undo</button>}
      </div>
      <ErrorBanner error={action.error} onDismiss={() => action.setError(null)} />
      <p role="status" class={action.notice ? "small feedback-status" : "visually-hidden"}>{action.notice ?? ""}</p>
    </div>
  );
}

function ItemCard({ item, busy, onAct }: { item: OperatorItem; busy: boolean; onAct: (item: OperatorItem, a: OperatorActionName, snooze?: number) => void }) {
  const [open, setOpen] = useState(false);
  const [snooze, setSnooze] = useState<number>(SNOOZE_MINUTES.default);
  const can = (a: OperatorActionName) => OPERATOR_TRANSITIONS[item.state][a] !== undefined;
  const headingId = `item-${item.id}-title`;
  return (
    <li class="item card" aria-labelledby={headingId}>
      <div class="item-head">
        <h3 id={headingId}>{item.title}</h3>
        <div class="badges">
          <StatusBadge status={item.severity} label={`${item.severity} severity`} />
          <StatusBadge status={item.state} />
        </div>
      </div>
      <p>{item.summary}</p>
      <dl class="facts facts-inline">
        <dt>Category</dt><dd><code>{item.category}</code></dd>
        <dt>Velocity</dt><dd>{formatNumber(item.velocity)}/h</dd>
        <dt>Events</dt><dd>{item.occurrences}</dd>
        <dt>Opened</dt><dd><Time iso={item.created_at} relative /></dd>
        {item.state === "snoozed" && <><dt>Snoozed until</dt><dd><Time iso={item.snoozed_until} /></dd></>}
        {item.acknowledged_by && <><dt>Acknowledged by</dt><dd><code>{item.acknowledged_by}</code> <Time iso={item.acknowledged_at} relative /></dd></>}
        {item.resolved_by && <><dt>Resolved by</dt><dd><code>{item.resolved_by}</code> <Time iso={item.resolved_at} relative /></dd></>}
      </dl>
      {item.chat.delivery_error && <p class="error-text">Chat message not delivered: {item.chat.delivery_error}</p>}
      {item.briefing_url && <p><a href={item.briefing_url} target="_blank" rel="noopener noreferrer">Open the briefing<span class="visually-hidden"> for {item.title}</span></a></p>}
      <div class="toolbar" role="group" aria-label={`Actions for ${item.title}`}>
        {can("acknowledge") && <button type="button" class="btn btn-primary btn-small" disabled={busy} onClick={() => onAct(item, "acknowledge")}>Acknowledge</button>}
        {can("resolve") && <button type="button" class="btn btn-small" disabled={busy} onClick={() => onAct(item, "resolve")}>Resolve</button>}
        {can("snooze") && (
          <span class="snooze">
            <label for={`snooze-${item.id}`}>Snooze for</label>
            <select id={`snooze-${item.id}`} value={snooze} onChange={(e) => setSnooze(Number(e.currentTarget.value))}>
              {SNOOZES.map((s) => <option key={s.minutes} value={s.minutes}>{s.label}</option>)}
            </select>
            <button type="button" class="btn btn-small" disabled={busy} onClick={() => onAct(item, "snooze", snooze)}>Snooze</button>
          </span>
        )}
        {can("reopen") && <button type="button" class="btn btn-small" disabled={busy} onClick={() => onAct(item, "reopen")}>Reopen</button>}
        {can("mute") && <button type="button" class="btn btn-small" disabled={busy} onClick={() => onAct(item, "mute")}>Mute topic 24 h</button>}
        <button type="button" class="btn btn-quiet btn-small" aria-expanded={open} aria-controls={`history-${item.id}`} onClick={() => setOpen((v) => !v)}>
          History
        </button>
      </div>
      {item.trend_id && <TrendFeedback trendId={item.trend_id} title={item.title} />}
      <div id={`history-${item.id}`} hidden={!open}>{open && <History id={item.id} version={item.version} />}</div>
    </li>
  );
}

export function OperatorPage() {
  useTitle("Operator queue");
  const [showResolved, setShowResolved] = useState(false);
  const [severity, setSeverity] = useState("");
  const action = useAction();
  const { list, rows, cursor, loadMore, loadingMore, mapRows, resetMore } = usePagedList<OperatorItem>(BASE,
    { limit: 50, state: showResolved ? undefined : "open,acknowledged,snoozed", severity: severity || undefined }, [showResolved, severity], action.run);

  const act = async (item: OperatorItem, a: OperatorActionName, snoozeMinutes?: number) => {
    const body: OperatorActionBody = { action: a, version: item.version, ...(a === "snooze" ? { snooze_minutes: snoozeMinutes ?? SNOOZE_MINUTES.default } : {}) };
    action.setError(null);
    const r = await action.run(item.id, async () => {
      try {
        return await post<OperatorItem>(itemPath(item.id, "actions"), body);
      } catch (err) {
        if (err instanceof ApiError && err.status === 409 && err.code !== "idempotency_request_in_progress") return "conflict" as const;
        throw err;
      }
    }, (u) => (u === "conflict" ? "This item changed; reloaded." : `“${u.title}” ${DONE[a]}.`));
    if (r === "conflict") { resetMore(); await list.reload(true); return; }
    if (r) mapRows((x) => (x.id === r.id ? r : x));
  };

  return (
    <>
      <PageHeader title="Operator queue">High-priority trends routed to people: acknowledge, snooze or resolve them here or in chat.</PageHeader>
      <div class="filters card" role="group" aria-label="Filter the queue">
        <label class="check">
          <input type="checkbox" checked={showResolved} onChange={(e) => setShowResolved(e.currentTarget.checked)} />
          Show resolved items
        </label>
        <Field id="op-severity" label="Severity">
          {(a) => (
            <select {...a} value={severity} onChange={(e) => setSeverity(e.currentTarget.value)}>
              <option value="">All severities</option>
              {SEVERITIES.map((s) => <option key={s} value={s}>{s}</option>)}
            </select>
          )}
        </Field>
      </div>
      <ErrorBanner error={action.error} onDismiss={() => action.setError(null)} />
      <Notice message={action.notice} />
      <section aria-labelledby="items-title" aria-busy={list.loading}>
        <h2 id="items-title" class="visually-hidden">Items</h2>
        <ErrorBanner error={list.error} />
        {list.loading && !list.data ? <Loading /> : list.data && (rows.length === 0
          ? <EmptyState title={showResolved ? "The queue is empty." : "Nothing needs attention."}>
            {showResolved ? "Items appear when a high-priority trend reaches the account's chat connection." : "Tick “Show resolved items” to see what was handled."}
          </EmptyState>
          : <ul class="items">{rows.map((i) => <ItemCard key={i.id} item={i} busy={action.busy === i.id} onAct={(it, a, m) => void act(it, a, m)} />)}</ul>)}
        <LoadMore cursor={cursor} busy={loadingMore} onMore={loadMore} />
      </section>
    </>
  );
}
