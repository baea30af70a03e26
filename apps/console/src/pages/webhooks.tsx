import { useState } from "preact/hooks";
import { DELIVERY_MODES, TRIGGER_TYPES, WEBHOOK_EVENT_TYPES } from "@trendgate/contracts/vocabulary";
import { post } from "../api.ts";
import { LoadMore, EmptyState, Loading } from "../components/EmptyState.tsx";
import { ErrorBanner, Notice } from "../components/ErrorBanner.tsx";
import { Field } from "../components/Field.tsx";
import { PageHeader } from "../components/Layout.tsx";
import { SecretPanel } from "../components/SecretPanel.tsx";
import { StatusBadge } from "../components/StatusBadge.tsx";
import { Table } from "../components/Table.tsx";
import { Time } from "../components/Time.tsx";
import { sentence } from "../format.ts";
import { useAction, usePagedList, useSubmit, useTitle } from "../hooks.ts";
import type {
  CreateWebhookBody, DeliveryMode, TriggerType, Webhook, WebhookBacktest, WebhookEventType, WebhookPreviewBody, WebhookWithSecret,
} from "../types.ts";
import { DaysField, DEFAULT_TUNING, PREVIEW_PATH, PreviewResult, RateLimitField, rateLimitValue, TuningFields, tuningBody, type Tuning } from "./webhook-rules.tsx";

export const WEBHOOKS = "/api/integrations/webhooks";
export const webhookPath = (id: string, ...rest: string[]) => [WEBHOOKS, encodeURIComponent(id), ...rest].join("/");

// The UI's names for the trigger types and delivery modes, in the order the form lists them; what each means is the
// contracts' description (vocabulary TRIGGER_TYPES, DELIVERY_MODES), shown as the field's hint.
export const TRIGGER_LABELS: Record<TriggerType, string> = {
  trend_detected: "Trend detected",
  trend_velocity: "Velocity crosses threshold",
  severity_change: "Severity rises",
  trend_ended: "Trend ended",
  event_types: "Chosen event types",
};
export const DELIVERY_MODE_LABELS: Record<DeliveryMode, string> = { instant_stream: "Instant", cooldown_digest: "Digest" };

interface FormState {
  url: string; description: string; trigger_type: TriggerType; threshold_value: string; category: string;
  delivery_mode: DeliveryMode; cooldown_seconds: string; event_types: WebhookEventType[]; tuning: Tuning; rate_limit: string;
}
const EMPTY: FormState = {
  url: "", description: "", trigger_type: "trend_detected", threshold_value: "0", category: "", delivery_mode: "instant_stream",
  cooldown_seconds: "0", event_types: [], tuning: DEFAULT_TUNING, rate_limit: "",
};

function NewSubscriptionForm({ onCreated }: { onCreated: (w: WebhookWithSecret) => void }) {
  const [f, setF] = useState<FormState>(EMPTY);
  // Creating and previewing share one submission, so the fields show the errors of whichever ran last.
  const { busy, error, fields, submit: run } = useSubmit();
  const [running, setRunning] = useState<"create" | "preview">("create");
  const [days, setDays] = useState(14);
  const [preview, setPreview] = useState<{ body: WebhookPreviewBody; answer: WebhookBacktest } | null>(null);
  const set = <K extends keyof FormState>(k: K, v: FormState[K]) => setF((s) => ({ ...s, [k]: v }));
  const eventTypes = f.trigger_type === "event_types";

  /** The subscription's rules, as both the create and the preview routes take them. */
  const rules = () => ({
    trigger_type: f.trigger_type, delivery_mode: f.delivery_mode,
    threshold_value: eventTypes ? 0 : Number(f.threshold_value), cooldown_seconds: Number(f.cooldown_seconds),
    ...(f.category.trim() ? { category: f.category.trim() } : {}),
    ...(eventTypes ? { event_types: f.event_types } : {}),
    ...tuningBody(f.tuning),
  });

  const submit = async (e: Event) => {
    e.preventDefault();
    const body: CreateWebhookBody = {
      url: f.url.trim(), ...rules(),
      ...(f.description.trim() ? { description: f.description.trim() } : {}),
      ...(rateLimitValue(f.rate_limit) !== null ? { rate_limit: rateLimitValue(f.rate_limit) } : {}),
    };
    setRunning("create");
    const created = await run(() => post<WebhookWithSecret>(WEBHOOKS, body));
    if (!created) return;
    setF(EMPTY);
    setPreview(null);
    onCreated(created);
  };
  const runPreview = async () => {
    const body: WebhookPreviewBody = { ...rules(), days };
    setRunning("preview");
    const answer = await run(() => post<WebhookBacktest>(PREVIEW_PATH, body));
    if (answer) setPreview({ body, answer });
  };
  const stale = !!preview && JSON.stringify({ ...rules(), days }) !== JSON.stringify(preview.body);

  return (
    <form class="card form" onSubmit={submit} aria-labelledby="new-sub-title" noValidate>
      <h2 id="new-sub-title">New subscription</h2>
      <ErrorBanner error={error} />
      <div class="form-grid">
        <Field id="wh-url" label="URL" error={fields.url} hint="The https:// address that receives signed POSTs." class="span-2">
          {(a) => <input {...a} type="url" required autoComplete="off" placeholder="https://hooks.example.com/trendgate" value={f.url}
            onInput={(e) => set("url", e.currentTarget.value)} />}
        </Field>
        <Field id="wh-description" label="Description" error={fields.description} class="span-2">
          {(a) => <input {...a} type="text" maxLength={500} value={f.description} onInput={(e) => set("description", e.currentTarget.value)} />}
        </Field>
        <Field id="wh-trigger" label="Trigger" error={fields.trigger_type} hint={sentence(TRIGGER_TYPES[f.trigger_type])}>
          {(a) => (
            <select {...a} value={f.trigger_type} onChange={(e) => {
              const t = e.currentTarget.value as TriggerType;
              setF((s) => ({ ...s, trigger_type: t, threshold_value: t === "event_types" ? "0" : s.threshold_value }));
            }}>
              {(Object.keys(TRIGGER_LABELS) as TriggerType[]).map((t) => <option key={t} value={t}>{TRIGGER_LABELS[t]}</option>)}
            </select>
          )}
        </Field>
        <Field id="wh-threshold" label="Threshold" error={fields.threshold_value}
          hint={f.trigger_type === "severity_change" || f.trigger_type === "trend_ended" ? "1 low, 2 medium, 3 high, 4 critical" : "Mentions per hour above the expected rate"}>
          {(a) => <input {...a} type="number" min={0} max={1_000_000} step="any" inputMode="decimal" disabled={eventTypes} value={f.threshold_value}
            onInput={(e) => set("threshold_value", e.currentTarget.value)} />}
        </Field>
        <Field id="wh-category" label="Category (optional)" error={fields.category} hint="e.g. tech matches tech and tech/ai; empty for every category">
          {(a) => <input {...a} type="text" autoComplete="off" placeholder="tech/ai" value={f.category} onInput={(e) => set("category", e.currentTarget.value)} />}
        </Field>
        <Field id="wh-mode" label="Delivery mode" error={fields.delivery_mode} hint={sentence(DELIVERY_MODES[f.delivery_mode])}>
          {(a) => (
            <select {...a} value={f.delivery_mode} onChange={(e) => set("delivery_mode", e.currentTarget.value as DeliveryMode)}>
              {(Object.keys(DELIVERY_MODE_LABELS) as DeliveryMode[]).map((m) => <option key={m} value={m}>{DELIVERY_MODE_LABELS[m]}</option>)}
            </select>
          )}
        </Field>
        <Field id="wh-cooldown" label="Cooldown (seconds)" error={fields.cooldown_seconds} hint="Minimum time between deliveries; 0 for none">
          {(a) => <input {...a} type="number" min={0} max={604_800} step={1} inputMode="numeric" value={f.cooldown_seconds}
            onInput={(e) => set("cooldown_seconds", e.currentTarget.value)} />}
        </Field>
        <TuningFields prefix="wh" value={f.tuning} onChange={(t) => set("tuning", t)} fields={fields} />
        <RateLimitField prefix="wh" value={f.rate_limit} onChange={(v) => set("rate_limit", v)} error={fields.rate_limit} />
        {eventTypes && (
          <fieldset class="span-2 checks" aria-describedby={fields.event_types ? "wh-event-types-error" : undefined}>
            <legend>Event types</legend>
            {WEBHOOK_EVENT_TYPES.map((t) => (
              <label key={t} class="check">
                <input type="checkbox" checked={f.event_types.includes(t)}
                  onChange={(e) => set("event_types", e.currentTarget.checked ? [...f.event_types, t] : f.event_types.filter((x) => x !== t))} />
                <code>{t}</code>
              </label>
            ))}
            {fields.event_types && <p class="field-error" id="wh-event-types-error">{fields.event_types}</p>}
          </fieldset>
        )}
      </div>
      <div class="actions actions-split">
        <button type="submit" class="btn btn-primary" disabled={busy} aria-busy={busy && running === "create"}>
          {busy && running === "create" ? "Creating…" : "Create subscription"}
        </button>
        <div class="inline-form">
          <DaysField prefix="wh" value={days} onChange={setDays} error={fields.days} />
          <button type="button" class="btn" disabled={busy} aria-busy={busy && running === "preview"} onClick={() => void runPreview()}>
            {busy && running === "preview" ? "Replaying…" : "Preview on history"}
          </button>
        </div>
      </div>
      <PreviewResult prefix="wh" result={preview} stale={stale} />
    </form>
  );
}

export function WebhooksPage() {
  useTitle("Webhooks");
  const [created, setCreated] = useState<WebhookWithSecret | null>(null);
  const action = useAction();
  const { list, rows, cursor, loadMore, loadingMore } = usePagedList<Webhook>(WEBHOOKS, { limit: 50 }, [], action.run);
  const toggle = (w: Webhook) => action.run(w.id, () => post<Webhook>(webhookPath(w.id, w.status === "active" ? "pause" : "resume")),
    (u) => { void list.reload(true); return `${w.description || w.url} is ${u.status}.`; });

  return (
    <>
      <PageHeader title="Webhooks">Signed HTTP deliveries of trend alerts to your systems.</PageHeader>
      {created && (
        <SecretPanel secret={created.secret} webhookId={created.id} title="Subscription created: its signing secret" onDone={() => setCreated(null)} />
      )}
      <ErrorBanner error={action.error} onDismiss={() => action.setError(null)} />
      <Notice message={action.notice} />
      <section class="card" aria-labelledby="subs-title" aria-busy={list.loading}>
        <h2 id="subs-title">Subscriptions</h2>
        <ErrorBanner error={list.error} />
        {list.loading && !list.data ? <Loading /> : list.data && (rows.length === 0
          ? <EmptyState title="No subscriptions yet.">Create one with the form below; its signing secret is shown once.</EmptyState>
          : <Table caption="Webhook subscriptions" captionHidden rows={rows} rowKey={(w) => w.id} columns={[
            { label: "URL", cell: (w) => <><a href={`#/webhooks/${encodeURIComponent(w.id)}`} class="break">{w.url}</a></> },
            { label: "Description", cell: (w) => w.description ?? <span class="muted">—</span> },
            { label: "Trigger", cell: (w) => <>{TRIGGER_LABELS[w.trigger_type] ?? w.trigger_type}<span class="cell-sub"><code>{w.trigger_type}</code></span></> },
            { label: "Status", cell: (w) => <><StatusBadge status={w.status} />{w.disabled_reason && <span class="cell-sub">{w.disabled_reason}</span>}</> },
            { label: "Failing since", cell: (w) => <Time iso={w.failing_since} empty="Not failing" /> },
            { label: "Actions", cell: (w) => (
              <div class="row-actions">
                <a class="btn btn-small" href={`#/webhooks/${encodeURIComponent(w.id)}`}>Open<span class="visually-hidden"> {w.url}</span></a>
                <button type="button" class="btn btn-small" disabled={action.busy === w.id} onClick={() => void toggle(w)}>
                  {w.status === "paused" ? "Resume" : w.status === "disabled" ? "Re-enable" : "Pause"}
                </button>
              </div>
            ) },
          ]} />)}
        <LoadMore cursor={cursor} busy={loadingMore} onMore={loadMore} />
      </section>
      <NewSubscriptionForm onCreated={(w) => { setCreated(w); void list.reload(true); }} />
    </>
  );
}
