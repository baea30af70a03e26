import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { DELIVERY_MODES, EXECUTION_OUTCOMES } from "@trendgate/contracts/vocabulary";
import { api, ApiError, asApiError, get, isAbort, post } from "../api.ts";
import { useConfirm } from "../components/Dialog.tsx";
import { EmptyState, Loading, LoadMore } from "../components/EmptyState.tsx";
import { ErrorBanner, Notice } from "../components/ErrorBanner.tsx";
import { Field } from "../components/Field.tsx";
import { PageHeader } from "../components/Layout.tsx";
import { SecretPanel } from "../components/SecretPanel.tsx";
import { StatusBadge } from "../components/StatusBadge.tsx";
import { Table } from "../components/Table.tsx";
import { Time } from "../components/Time.tsx";
import { formatBytes, formatDuration, formatNumber, formatSeconds, fromLocalInput, plural, sentence, toLocalInput } from "../format.ts";
import { useAction, useInterval, useLoad, useSubmit, useTitle } from "../hooks.ts";
import { navigate } from "../router.ts";
import type {
  QueuedDelivery, RecoverResult, RotatedSecret, UpdateWebhookBody, Webhook, WebhookBacktest, WebhookExecution, WebhookExecutionList, WebhookPreviewBody,
} from "../types.ts";
import {
  DaysField, PREVIEW_PATH, PreviewResult, RateLimitField, rateLimitShown, rateLimitText, rateLimitValue, SENSITIVITY_LABELS, sensitivityMeaning,
  TuningFields, tuningBody, tuningOf, windowText,
} from "./webhook-rules.tsx";
import { DELIVERY_MODE_LABELS, TRIGGER_LABELS, webhookPath } from "./webhooks.tsx";

/** Attempts whose delivery may be sent again (the API replays any delivery that is not waiting for a retry). */
const REPLAYABLE = new Set(["succeeded", "failed", "interrupted"]);
const TRIGGERS: Record<WebhookExecution["trigger"], string> = {
  trend_event: "Trend event", account_event: "Account event", test: "Test", replay: "Replay", recovery: "Recovery",
};

// ---- Edit ------------------------------------------------------------------------------------------------------------

function EditForm({ hook, onSaved, onCancel }: { hook: Webhook; onSaved: (w: Webhook) => void; onCancel: () => void }) {
  const [url, setUrl] = useState(hook.url);
  const [description, setDescription] = useState(hook.description ?? "");
  const [threshold, setThreshold] = useState(String(hook.threshold_value));
  const [tuning, setTuning] = useState(() => tuningOf(hook));
  const [rateLimit, setRateLimit] = useState(() => rateLimitText(hook.rate_limit));
  const [days, setDays] = useState(14);
  const [preview, setPreview] = useState<{ body: WebhookPreviewBody; answer: WebhookBacktest } | null>(null);
  const [running, setRunning] = useState<"save" | "preview">("save");
  const { busy, error, fields, submit: run } = useSubmit();
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => first.current?.focus(), []);
  const thresholdValue = hook.trigger_type === "event_types" ? 0 : Number(threshold);
  const tuned = tuningBody(tuning);

  const submit = async (e: Event) => {
    e.preventDefault();
    const body: UpdateWebhookBody = {};
    if (url.trim() !== hook.url) body.url = url.trim();
    if ((description.trim() || null) !== hook.description) body.description = description.trim() || null;
    if (hook.trigger_type !== "event_types" && thresholdValue !== hook.threshold_value) body.threshold_value = thresholdValue;
    if (tuned.sensitivity !== hook.sensitivity) body.sensitivity = tuned.sensitivity;
    if (tuned.trigger_window_minutes !== hook.trigger_window_minutes) body.trigger_window_minutes = tuned.trigger_window_minutes;
    if (tuned.recovery_window_minutes !== hook.recovery_window_minutes) body.recovery_window_minutes = tuned.recovery_window_minutes;
    if (rateLimitValue(rateLimit) !== hook.rate_limit) body.rate_limit = rateLimitValue(rateLimit);
    if (Object.keys(body).length === 0) { onCancel(); return; }
    setRunning("save");
    const saved = await run(() => api<Webhook>(webhookPath(hook.id), { method: "PATCH", body }));
    if (saved) onSaved(saved);
  };
  // The saved rules with this form's changes: what the subscription would receive once saved.
  const rules = (): WebhookPreviewBody => ({
    trigger_type: hook.trigger_type, delivery_mode: hook.delivery_mode, threshold_value: thresholdValue, cooldown_seconds: hook.cooldown_seconds,
    ...(hook.category ? { category: hook.category } : {}),
    ...(hook.trigger_type === "event_types" ? { event_types: hook.event_types } : {}),
    ...(hook.filter ? { filter: hook.filter } : {}),
    ...tuned, days,
  });
  const runPreview = async () => {
    const body = rules();
    setRunning("preview");
    const answer = await run(() => post<WebhookBacktest>(PREVIEW_PATH, body));
    if (answer) setPreview({ body, answer });
  };
  const stale = !!preview && JSON.stringify(rules()) !== JSON.stringify(preview.body);

  return (
    <form class="card form" onSubmit={submit} aria-labelledby="edit-title" noValidate>
      <h2 id="edit-title">Edit subscription</h2>
      <ErrorBanner error={error} />
      <div class="form-grid">
        <Field id="edit-url" label="URL" error={fields.url} class="span-2">
          {(a) => <input {...a} ref={first} type="url" required value={url} onInput={(e) => setUrl(e.currentTarget.value)} />}
        </Field>
        <Field id="edit-description" label="Description" error={fields.description} class="span-2">
          {(a) => <input {...a} type="text" maxLength={500} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />}
        </Field>
        {hook.trigger_type !== "event_types" && (
          <Field id="edit-threshold" label="Threshold" error={fields.threshold_value}>
            {(a) => <input {...a} type="number" min={0} max={1_000_000} step="any" value={threshold} onInput={(e) => setThreshold(e.currentTarget.value)} />}
          </Field>
        )}
        <TuningFields prefix="edit" value={tuning} onChange={setTuning} fields={fields} />
        <RateLimitField prefix="edit" value={rateLimit} onChange={setRateLimit} error={fields.rate_limit} />
      </div>
      <div class="actions actions-split">
        <button type="submit" class="btn btn-primary" disabled={busy} aria-busy={busy && running === "save"}>{busy && running === "save" ? "Saving…" : "Save changes"}</button>
        <button type="button" class="btn" onClick={onCancel}>Cancel</button>
        <div class="inline-form">
          <DaysField prefix="edit" value={days} onChange={setDays} error={fields.days} />
          <button type="button" class="btn" disabled={busy} aria-busy={busy && running === "preview"} onClick={() => void runPreview()}>
            {busy && running === "preview" ? "Replaying…" : "Preview on history"}
          </button>
        </div>
      </div>
      <PreviewResult prefix="edit" result={preview} stale={stale} />
    </form>
  );
}

// ---- Delivery log ----------------------------------------------------------------------------------------------------

function ExecutionDetails({ e }: { e: WebhookExecution }) {
  const headers = Object.entries(e.request.headers);
  return (
    <div class="exec-details">
      <section>
        <h3 class="subhead">Request</h3>
        <dl class="facts">
          <dt>URL</dt><dd class="break"><code>{e.request.url}</code></dd>
          <dt>Body</dt><dd>{formatBytes(e.request.body_bytes)}</dd>
          <dt>Delivery id</dt><dd><code>{e.delivery_id}</code></dd>
        </dl>
        {headers.length > 0 && (
          <pre class="code small"><code>{headers.map(([k, v]) => `${k}: ${v}`).join("\n")}</code></pre>
        )}
      </section>
      <section>
        <h3 class="subhead">Response</h3>
        <dl class="facts">
          <dt>Status</dt><dd>{e.response_status ?? "No response"}</dd>
          <dt>Duration</dt><dd>{formatDuration(e.duration_ms)}</dd>
          {e.error_class && <><dt>Error</dt><dd><code>{e.error_class}</code>{e.error_message && <> — {e.error_message}</>}</dd></>}
          {!e.error_class && e.error_message && <><dt>Note</dt><dd>{e.error_message}</dd></>}
          {e.next_retry_at && <><dt>Next retry</dt><dd><Time iso={e.next_retry_at} /> (<Time iso={e.next_retry_at} relative />)</dd></>}
        </dl>
        {e.response_body !== null && e.response_body !== "" && (
          <>
            <pre class="code small"><code>{e.response_body}</code></pre>
            {e.response_body_truncated && <p class="muted small">Only the first 16 KiB of the body was kept.</p>}
          </>
        )}
      </section>
    </div>
  );
}

function DeliveryLog({ hookId, refreshKey }: { hookId: string; refreshKey: number }) {
  const [outcome, setOutcome] = useState("");
  const [since, setSince] = useState("");
  const [items, setItems] = useState<WebhookExecution[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [loadingMore, setLoadingMore] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const [open, setOpen] = useState<Set<string>>(new Set());
  const action = useAction();
  const inFlight = useRef<AbortController | null>(null);
  const itemsRef = useRef(items);
  itemsRef.current = items;

  const query = useCallback((c?: string) => ({ limit: 20, outcome: outcome || undefined, since: fromLocalInput(since), cursor: c }), [outcome, since]);
  const path = webhookPath(hookId, "executions");

  /** The first page: replaces the list (`reset`), or merges into it (polling keeps pages loaded with "Load more"). */
  const refresh = useCallback(async (reset: boolean) => {
    inFlight.current?.abort();
    const ac = new AbortController();
    inFlight.current = ac;
    if (reset) setLoading(true);
    try {
      const p = await get<WebhookExecutionList>(path, query(), ac.signal);
      if (ac.signal.aborted) return;
      const old = itemsRef.current;
      const fresh = new Set(p.data.map((e) => e.id));
      if (reset || !old || !old.some((e) => fresh.has(e.id)) || old.length <= p.data.length) {
        setItems(p.data);
        setCursor(p.next_cursor);
      } else {
        setItems([...p.data, ...old.filter((e) => !fresh.has(e.id))]);
      }
      setError(null);
    } catch (err) {
      if (!isAbort(err) && !ac.signal.aborted) setError(asApiError(err));
    } finally {
      if (!ac.signal.aborted) setLoading(false);
    }
  }, [path, query]);

  useEffect(() => { void refresh(true); return () => inFlight.current?.abort(); }, [refresh]);
  useEffect(() => { if (refreshKey) void refresh(false); }, [refreshKey]);
  useInterval(() => { if (!loadingMore) void refresh(false); }, 5000);

  const loadMore = async () => {
    if (!cursor) return;
    setLoadingMore(true);
    const p = await action.run("more", () => get<WebhookExecutionList>(path, query(cursor)));
    if (p) {
      setItems((cur) => { const have = new Set((cur ?? []).map((e) => e.id)); return [...(cur ?? []), ...p.data.filter((e) => !have.has(e.id))]; });
      setCursor(p.next_cursor);
    }
    setLoadingMore(false);
  };
  const toggle = (id: string) => setOpen((s) => { const n = new Set(s); if (n.has(id)) n.delete(id); else n.add(id); return n; });
  const replay = (e: WebhookExecution) => action.run(`replay:${e.id}`,
    () => post<QueuedDelivery>(webhookPath(hookId, "executions", e.id, "replay")),
    () => { void refresh(false); return "Delivery queued again; its new attempt appears in the log."; });

  return (
    <section class="card" aria-labelledby="log-title" aria-busy={loading}>
      <h2 id="log-title">Delivery log</h2>
      <p class="muted small">Newest first; refreshed every 5 seconds.</p>
      <div class="filters" role="group" aria-label="Filter the delivery log">
        <Field id="log-outcome" label="Outcome">
          {(a) => (
            <select {...a} value={outcome} onChange={(e) => setOutcome(e.currentTarget.value)}>
              <option value="">All outcomes</option>
              {EXECUTION_OUTCOMES.map((o) => <option key={o} value={o}>{o}</option>)}
            </select>
          )}
        </Field>
        <Field id="log-since" label="Since">
          {(a) => <input {...a} type="datetime-local" value={since} onChange={(e) => setSince(e.currentTarget.value)} />}
        </Field>
        {(outcome || since) && <button type="button" class="btn btn-quiet" onClick={() => { setOutcome(""); setSince(""); }}>Clear filters</button>}
      </div>
      <ErrorBanner error={action.error} onDismiss={() => action.setError(null)} />
      <Notice message={action.notice} />
      <ErrorBanner error={error} />
      {loading && !items ? <Loading /> : items && (items.length === 0
        ? <EmptyState title={outcome || since ? "No deliveries match these filters." : "No deliveries yet."}>
          {outcome || since ? "Clear the filters to see every delivery." : "Use Send test to send one now."}
        </EmptyState>
        : <Table caption="Delivery attempts, newest first" captionHidden rows={items} rowKey={(e) => e.id}
          expanded={(e) => (open.has(e.id) ? <ExecutionDetails e={e} /> : null)}
          columns={[
            { label: "Time", cell: (e) => <Time iso={e.created_at} /> },
            { label: "Trigger", cell: (e) => TRIGGERS[e.trigger] ?? e.trigger },
            { label: "Attempt", numeric: true, cell: (e) => (e.attempt === 0 ? "—" : String(e.attempt)) },
            { label: "Outcome", class: "outcome", cell: (e) => <StatusBadge status={e.outcome} /> },
            { label: "Response", numeric: true, cell: (e) => (e.response_status ?? (e.error_class ? <code>{e.error_class}</code> : "—")) },
            { label: "Duration", numeric: true, cell: (e) => formatDuration(e.duration_ms) },
            { label: "Actions", cell: (e) => (
              <div class="row-actions">
                <button type="button" class="btn btn-small" aria-expanded={open.has(e.id)} aria-controls={`details-${e.id}`} onClick={() => toggle(e.id)}>
                  Details
                </button>
                {REPLAYABLE.has(e.outcome) && (
                  <button type="button" class="btn btn-small" disabled={action.busy === `replay:${e.id}`} onClick={() => void replay(e)}>Replay</button>
                )}
              </div>
            ) },
          ]} />)}
      <LoadMore cursor={cursor} busy={loadingMore} onMore={loadMore} />
    </section>
  );
}

// ---- Recover ---------------------------------------------------------------------------------------------------------

function RecoverForm({ hookId, onDone }: { hookId: string; onDone: () => void }) {
  const [since, setSince] = useState(() => toLocalInput(Date.now() - 86_400_000));
  const action = useAction();
  const fields = action.error?.fields ?? {};
  const submit = async (e: Event) => {
    e.preventDefault();
    const iso = fromLocalInput(since);
    if (!iso) { action.setError(new ApiError(0, null, "Choose the date and time to recover from.")); return; }
    await action.run("recover", () => post<RecoverResult>(webhookPath(hookId, "recover"), { since: iso }),
      (r) => { onDone(); return `${plural(r.recovered, "failed delivery", "failed deliveries")} queued again.`; });
  };
  return (
    <form class="card form" onSubmit={submit} aria-labelledby="recover-title">
      <h2 id="recover-title">Recover failed deliveries</h2>
      <p class="muted">Sends again every delivery that failed since the time you choose (at most 14 days back).</p>
      <ErrorBanner error={action.error} />
      <Notice message={action.notice} />
      <div class="inline-form">
        <Field id="recover-since" label="Failed since" error={fields.since}>
          {(a) => <input {...a} type="datetime-local" required value={since} onInput={(e) => setSince(e.currentTarget.value)} />}
        </Field>
        <button type="submit" class="btn" disabled={action.busy === "recover"} aria-busy={action.busy === "recover"}>Recover all failed since…</button>
      </div>
    </form>
  );
}

// ---- Page ------------------------------------------------------------------------------------------------------------

export function WebhookDetailPage({ id }: { id: string }) {
  const hook = useLoad((signal) => get<Webhook>(webhookPath(id), undefined, signal), [id]);
  const w = hook.data;
  useTitle(w ? w.description || w.url : "Subscription");
  const [editing, setEditing] = useState(false);
  const [rotated, setRotated] = useState<RotatedSecret | null>(null);
  const [logKey, setLogKey] = useState(0);
  const action = useAction();
  const [dialog, confirm] = useConfirm();
  const refreshLog = () => setLogKey((k) => k + 1);

  if (hook.loading && !w) return <><PageHeader title="Subscription" /><Loading /></>;
  if (!w) {
    return (
      <>
        <PageHeader title="Subscription" />
        {hook.error?.status === 404
          ? <EmptyState title="This subscription does not exist (any more).">Go back to the <a href="#/webhooks">Webhooks</a> list.</EmptyState>
          : <ErrorBanner error={hook.error} />}
      </>
    );
  }

  const sendTest = () => action.run("test", () => post<QueuedDelivery>(webhookPath(w.id, "test")),
    () => { refreshLog(); return "Test delivery queued; its result appears in the delivery log."; });
  const pauseResume = () => action.run("pause", () => post<Webhook>(webhookPath(w.id, w.status === "active" ? "pause" : "resume")),
    (u) => { hook.setData(u); return u.status === "paused" ? "Deliveries paused; firings are held until you resume." : "Deliveries resumed."; });
  const rotate = async () => {
    const ok = await confirm({
      title: "Rotate the signing secret?", confirmLabel: "Rotate secret",
      message: "A new secret is made and shown once. The current one keeps signing deliveries for 24 hours, so receivers can switch over.",
    });
    if (!ok) return;
    await action.run("rotate", () => post<RotatedSecret>(webhookPath(w.id, "rotate-secret"), {}), (r) => { setRotated(r); void hook.reload(true); });
  };
  const remove = async () => {
    const ok = await confirm({
      title: "Delete this subscription?", confirmLabel: "Delete", danger: true,
      message: `${w.url} stops receiving deliveries; its pending deliveries and its delivery history are deleted too. This cannot be undone.`,
    });
    if (!ok) return;
    const done = await action.run("delete", () => api<void>(webhookPath(w.id), { method: "DELETE" }).then(() => true));
    if (done) navigate("#/webhooks");
  };

  return (
    <>
      <p class="breadcrumb"><a href="#/webhooks">Webhooks</a> <span aria-hidden="true">›</span></p>
      <PageHeader title={w.description || "Webhook subscription"}>
        <span class="break">{w.url}</span> <StatusBadge status={w.status} />
      </PageHeader>
      {dialog}
      <div class="toolbar" role="group" aria-label="Subscription actions">
        <button type="button" class="btn btn-primary" disabled={action.busy === "test"} aria-busy={action.busy === "test"} onClick={() => void sendTest()}>Send test</button>
        <button type="button" class="btn" disabled={action.busy === "pause"} onClick={() => void pauseResume()}>{w.status === "active" ? "Pause" : "Resume"}</button>
        <button type="button" class="btn" disabled={action.busy === "rotate"} onClick={() => void rotate()}>Rotate secret</button>
        <button type="button" class="btn" aria-expanded={editing} onClick={() => setEditing((v) => !v)}>Edit</button>
        <button type="button" class="btn btn-danger" disabled={action.busy === "delete"} onClick={() => void remove()}>Delete</button>
      </div>
      <ErrorBanner error={action.error} onDismiss={() => action.setError(null)} />
      <Notice message={action.notice} />
      {rotated && (
        <SecretPanel secret={rotated.secret} webhookId={w.id} previousExpiresAt={rotated.previous_secret_expires_at} linkToSubscription={false}
          title="New signing secret" onDone={() => setRotated(null)} />
      )}
      {editing && <EditForm hook={w} onCancel={() => setEditing(false)} onSaved={(u) => { hook.setData(u); setEditing(false); action.setNotice("Changes saved."); }} />}
      <section class="card" aria-labelledby="details-title">
        <h2 id="details-title">Details</h2>
        <dl class="facts facts-wide">
          <dt>URL</dt><dd class="break"><code>{w.url}</code></dd>
          <dt>Status</dt><dd><StatusBadge status={w.status} />{w.disabled_reason && <> — {w.disabled_reason}</>}</dd>
          <dt>Failing since</dt><dd><Time iso={w.failing_since} empty="Not failing" /></dd>
          <dt>Trigger</dt><dd>{TRIGGER_LABELS[w.trigger_type] ?? w.trigger_type} (<code>{w.trigger_type}</code>)</dd>
          {w.trigger_type !== "event_types" && <><dt>Threshold</dt><dd>{formatNumber(w.threshold_value)}</dd></>}
          {w.event_types.length > 0 && <><dt>Event types</dt><dd>{w.event_types.map((t) => <code key={t} class="tag">{t}</code>)}</dd></>}
          <dt>Category</dt><dd>{w.category ? <code>{w.category}</code> : "Every category"}</dd>
          <dt>Delivery</dt><dd>{DELIVERY_MODE_LABELS[w.delivery_mode] ?? w.delivery_mode}; cooldown {formatSeconds(w.cooldown_seconds)}<span class="cell-sub">{sentence(DELIVERY_MODES[w.delivery_mode] ?? "")}</span></dd>
          <dt>Sensitivity</dt><dd>{SENSITIVITY_LABELS[w.sensitivity] ?? w.sensitivity}<span class="cell-sub">{sensitivityMeaning(w.sensitivity)}</span></dd>
          <dt>Trigger window</dt><dd>{windowText(w.trigger_window_minutes, "None: delivered at once")}</dd>
          <dt>Recovery window</dt><dd>{windowText(w.recovery_window_minutes, "None")}</dd>
          <dt>Rate limit</dt><dd>{rateLimitShown(w.rate_limit)}</dd>
          {w.header_names.length > 0 && <><dt>Custom headers</dt><dd>{w.header_names.map((h) => <code key={h} class="tag">{h}</code>)}</dd></>}
          {w.body_template && <><dt>Body template</dt><dd>{w.body_template.format}</dd></>}
          {w.secret_rotating_until && <><dt>Previous secret signs until</dt><dd><Time iso={w.secret_rotating_until} /></dd></>}
          <dt>Created</dt><dd><Time iso={w.created_at} /></dd>
          <dt>Updated</dt><dd><Time iso={w.updated_at} /></dd>
          <dt>Id</dt><dd><code>{w.id}</code></dd>
        </dl>
      </section>
      <DeliveryLog hookId={w.id} refreshKey={logKey} />
      <RecoverForm hookId={w.id} onDone={refreshLog} />
    </>
  );
}
