import { useEffect, useState } from "preact/hooks";
import { api, get, post } from "../api.ts";
import { useConfirm } from "../components/Dialog.tsx";
import { EmptyState, Loading, LoadMore } from "../components/EmptyState.tsx";
import { ErrorBanner, Notice } from "../components/ErrorBanner.tsx";
import { Field } from "../components/Field.tsx";
import { PageHeader } from "../components/Layout.tsx";
import { StatusBadge } from "../components/StatusBadge.tsx";
import { Table } from "../components/Table.tsx";
import { Time } from "../components/Time.tsx";
import { formatNumber, formatSeconds } from "../format.ts";
import { useAction, useLoad, usePagedList, useSubmit, useTitle } from "../hooks.ts";
import type { CreateMuteBody, HolidayCalendar, HolidayCalendarBody, Mute } from "../types.ts";

const BASE = "/api/mutes";
const mutePath = (id: string) => `${BASE}/${encodeURIComponent(id)}`;

type Kind = "topic" | "category";
/** The "For how long" choices: minutes, until deleted, or a recurring window (rrule + window_minutes). */
type Span = "60" | "1440" | "10080" | "none" | "recurring";
const SPANS: { value: Span; label: string }[] = [
  { value: "60", label: "1 hour" }, { value: "1440", label: "24 hours" }, { value: "10080", label: "7 days" },
  { value: "none", label: "Until I unmute" }, { value: "recurring", label: "Recurring window" },
];

interface FormState { kind: Kind; name: string; span: Span; rrule: string; window_minutes: string; time_zone: string; reason: string }
/** The browser's own zone: a rule's "18:00" is usually meant where its author is. */
const LOCAL_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
const EMPTY: FormState = { kind: "topic", name: "", span: "1440", rrule: "", window_minutes: "240", time_zone: LOCAL_ZONE, reason: "" };

const muteName = (m: Mute) => m.topic ?? m.category ?? m.id;
/** An instant that has happened, for "… ago": a server clock a moment ahead of the browser's would say "in a moment". */
const past = (iso: string) => (Date.parse(iso) > Date.now() ? new Date().toISOString() : iso);

function NewMuteForm({ onCreated }: { onCreated: (m: Mute) => void }) {
  const [f, setF] = useState<FormState>(EMPTY);
  const { busy, error, fields, submit: run } = useSubmit();
  const set = <K extends keyof FormState>(k: K, v: FormState[K]) => setF((s) => ({ ...s, [k]: v }));
  const recurring = f.span === "recurring";

  const submit = async (e: Event) => {
    e.preventDefault();
    const name = f.name.trim();
    const body: CreateMuteBody = {
      ...(!name ? {} : f.kind === "topic" ? { topic: name } : { category: name }),
      ...(recurring ? {
        ...(f.rrule.trim() ? { rrule: f.rrule.trim() } : {}),
        ...(f.window_minutes.trim() ? { window_minutes: Number(f.window_minutes) } : {}),
        ...(f.time_zone.trim() ? { time_zone: f.time_zone.trim() } : {}),
      } : f.span === "none" ? {} : { duration_minutes: Number(f.span) }),
      ...(f.reason.trim() ? { reason: f.reason.trim() } : {}),
    };
    const created = await run(() => post<Mute>(BASE, body));
    if (!created) return;
    setF(EMPTY);
    onCreated(created);
  };

  return (
    <form class="card form" onSubmit={submit} aria-labelledby="new-mute-title" noValidate>
      <h2 id="new-mute-title">Mute a topic or category</h2>
      <ErrorBanner error={error} />
      <div class="form-grid">
        <fieldset class="span-2 checks">
          <legend>What to mute</legend>
          {(["topic", "category"] as Kind[]).map((k) => (
            <label key={k} class="check">
              <input type="radio" name="mute-kind" value={k} checked={f.kind === k} onChange={() => set("kind", k)} />
              {k === "topic" ? "Topic" : "Category"}
            </label>
          ))}
        </fieldset>
        <Field id="mute-name" label={f.kind === "topic" ? "Topic name" : "Category"} error={fields[f.kind] ?? fields.topic}
          hint={f.kind === "topic" ? "A trend's name, in any case: its trends are muted" : "e.g. tech mutes tech and tech/ai"}>
          {(a) => <input {...a} type="text" required autoComplete="off" maxLength={200} placeholder={f.kind === "topic" ? "AI agents" : "tech/ai"}
            value={f.name} onInput={(e) => set("name", e.currentTarget.value)} />}
        </Field>
        <Field id="mute-span" label="For how long" error={fields.duration_minutes ?? fields.until}>
          {(a) => (
            <select {...a} value={f.span} onChange={(e) => set("span", e.currentTarget.value as Span)}>
              {SPANS.map((s) => <option key={s.value} value={s.value}>{s.label}</option>)}
            </select>
          )}
        </Field>
        {recurring && (
          <>
            <Field id="mute-rrule" label="Repeat rule (RFC 5545 RRULE)" error={fields.rrule} hint="At its own times in the time zone below, e.g. weekend evenings from 18:00">
              {(a) => <input {...a} type="text" required autoComplete="off" maxLength={500} placeholder="FREQ=WEEKLY;BYDAY=SA,SU;BYHOUR=18"
                value={f.rrule} onInput={(e) => set("rrule", e.currentTarget.value)} />}
            </Field>
            <Field id="mute-window" label="Window (minutes)" error={fields.window_minutes} hint="How long each occurrence mutes">
              {(a) => <input {...a} type="number" required min={1} max={10_080} step={1} inputMode="numeric" value={f.window_minutes}
                onInput={(e) => set("window_minutes", e.currentTarget.value)} />}
            </Field>
            <Field id="mute-zone" label="Time zone (IANA)" error={fields.time_zone} hint="Where the rule's times are; this browser's by default">
              {(a) => <input {...a} type="text" required autoComplete="off" maxLength={64} placeholder="Europe/Berlin"
                value={f.time_zone} onInput={(e) => set("time_zone", e.currentTarget.value)} />}
            </Field>
          </>
        )}
        <Field id="mute-reason" label="Reason (optional)" error={fields.reason} class="span-2">
          {(a) => <input {...a} type="text" maxLength={500} value={f.reason} onInput={(e) => set("reason", e.currentTarget.value)} />}
        </Field>
      </div>
      <div class="actions">
        <button type="submit" class="btn btn-primary" disabled={busy} aria-busy={busy}>Mute</button>
      </div>
    </form>
  );
}

function When({ m }: { m: Mute }) {
  if (m.rrule) {
    return (
      <>
        <code class="break">{m.rrule}</code>
        <span class="cell-sub">
          {m.window_minutes ? `${formatSeconds(m.window_minutes * 60)} each, ${m.time_zone}` : m.time_zone}
          {m.ends_at ? <>, until <Time iso={m.ends_at} /></> : ", until unmuted"}
        </span>
      </>
    );
  }
  return m.ends_at ? <>until <Time iso={m.ends_at} /></> : <>until unmuted</>;
}

// ---- Holiday calendar ------------------------------------------------------------------------------------------------

const CALENDAR = "/api/calendar";

type Confirm = ReturnType<typeof useConfirm>[1];

/** The account's holiday calendar: the holiday now and the next ones, a form to set the country (and region), Remove. */
function HolidayCalendarCard({ confirm }: { confirm: Confirm }) {
  const cal = useLoad((signal) => get<HolidayCalendar>(CALENDAR, undefined, signal), []);
  const c = cal.data;
  const [country, setCountry] = useState("");
  const [region, setRegion] = useState("");
  const { busy, error, fields, submit: run } = useSubmit();
  const action = useAction();
  // The form starts from the saved calendar.
  useEffect(() => { if (c) { setCountry(c.country ?? ""); setRegion(c.region ?? ""); } }, [c?.country, c?.region]);

  const save = async (e: Event) => {
    e.preventDefault();
    action.setNotice(null);
    // Codes are upper case (US, CA); people type them in any case.
    const body: HolidayCalendarBody = { country: country.trim().toUpperCase(), region: region.trim().toUpperCase() || null };
    const saved = await run(() => api<HolidayCalendar>(CALENDAR, { method: "PUT", body }));
    if (!saved) return;
    cal.setData(saved);
    action.setNotice(`Holiday calendar set to ${saved.country}${saved.region ? `, region ${saved.region}` : ""}.`);
  };
  const remove = async () => {
    const ok = await confirm({
      title: "Remove the holiday calendar?", confirmLabel: "Remove",
      message: "Trends are then held to the usual evidence on every day, holidays included.",
    });
    if (!ok) return;
    await action.run("remove", () => api<void>(CALENDAR, { method: "DELETE" }), () => { void cal.reload(true); return "Holiday calendar removed."; });
  };

  return (
    <section class="card" aria-labelledby="calendar-title" aria-busy={cal.loading}>
      <h2 id="calendar-title">Holidays and campaigns</h2>
      <p class="muted">
        A holiday moves volumes everywhere at once, so while one of your country's holidays lasts, every trend needs
        {c ? ` ${formatNumber(c.holiday_evidence)}×` : " more than"} the usual evidence to alert. For a campaign you run yourself, mute its
        topic or category for the campaign with the form above.
      </p>
      <ErrorBanner error={cal.error} />
      <ErrorBanner error={action.error} onDismiss={() => action.setError(null)} />
      <Notice message={action.notice} />
      {cal.loading && !c ? <Loading /> : c && (c.country === null
        ? <EmptyState title="No holiday calendar.">Set a country below to have its holidays taken into account.</EmptyState>
        : <>
          <dl class="facts">
            <dt>Calendar</dt><dd><code>{c.country}</code>{c.region && <>, region <code>{c.region}</code></>}</dd>
            <dt>Now</dt><dd>{c.now ? <><strong>{c.now.name}</strong>, until <Time iso={c.now.end} /></> : "No holiday"}</dd>
          </dl>
          {c.upcoming.length === 0
            ? <p class="muted">No holidays coming up.</p>
            : <Table caption="Next holidays" rows={c.upcoming} rowKey={(h) => `${h.name}|${h.start}`} columns={[
              { label: "Holiday", cell: (h) => <strong>{h.name}</strong> },
              { label: "Type", cell: (h) => h.type },
              { label: "Starts", cell: (h) => <Time iso={h.start} /> },
              { label: "Ends", cell: (h) => <Time iso={h.end} /> },
            ]} />}
        </>)}
      <form class="calendar-form" onSubmit={save} aria-label="Set the holiday calendar" noValidate>
        <ErrorBanner error={error} />
        <div class="inline-form">
          <Field id="cal-country" label="Country" error={fields.country} hint="ISO code, e.g. US, DE, JP">
            {(a) => <input {...a} type="text" required autoComplete="off" maxLength={2} placeholder="US" value={country}
              onInput={(e) => setCountry(e.currentTarget.value)} />}
          </Field>
          <Field id="cal-region" label="Region (optional)" error={fields.region} hint="Its own holidays count too, e.g. CA (US)">
            {(a) => <input {...a} type="text" autoComplete="off" maxLength={10} value={region} onInput={(e) => setRegion(e.currentTarget.value)} />}
          </Field>
          <div class="actions">
            <button type="submit" class="btn btn-primary" disabled={busy} aria-busy={busy}>Save calendar</button>
            {c?.country && (
              <button type="button" class="btn btn-danger" disabled={action.busy === "remove"} onClick={() => void remove()}>Remove calendar</button>
            )}
          </div>
        </div>
      </form>
    </section>
  );
}

export function MutesPage() {
  useTitle("Mutes");
  const [dialog, confirm] = useConfirm();
  const action = useAction();
  const { list, rows, cursor, loadMore, loadingMore } = usePagedList<Mute>(BASE, { limit: 50 }, [], action.run);

  const unmute = async (m: Mute) => {
    const name = muteName(m);
    const ok = await confirm({
      title: `Unmute ${name}?`, confirmLabel: "Unmute",
      message: `Trend events for ${name} are pushed again from now on (within a few seconds). What it held back is not sent.`,
    });
    if (!ok) return;
    await action.run(m.id, () => api<void>(mutePath(m.id), { method: "DELETE" }), () => { void list.reload(true); return `${name} unmuted.`; });
  };

  return (
    <>
      <PageHeader title="Mutes" actions={
        <button type="button" class="btn" onClick={() => void list.reload(true)} disabled={list.loading} aria-busy={list.loading}>Refresh</button>
      }>
        Muted topics and categories are still detected and listed, but nothing is pushed for them: no webhooks, chat
        messages or operator queue items, no workflow pushes. Each event held back is counted.
      </PageHeader>
      {dialog}
      <ErrorBanner error={action.error} onDismiss={() => action.setError(null)} />
      <Notice message={action.notice} />
      <NewMuteForm onCreated={(m) => { action.setNotice(`${muteName(m)} muted.`); void list.reload(true); }} />
      <section class="card" aria-labelledby="mutes-title" aria-busy={list.loading}>
        <h2 id="mutes-title">Muted topics and categories</h2>
        <ErrorBanner error={list.error} />
        {list.loading && !list.data ? <Loading /> : list.data && (rows.length === 0
          ? <EmptyState title="Nothing is muted.">Mute a topic or a category with the form above.</EmptyState>
          : <Table caption="Mutes" captionHidden rows={rows} rowKey={(m) => m.id} columns={[
            { label: "What", cell: (m) => <>
              <strong>{muteName(m)}</strong> <span class="muted small">{m.topic ? "topic" : "category"}</span>
              {m.reason && <span class="cell-sub">{m.reason}</span>}
            </> },
            { label: "When", cell: (m) => <When m={m} /> },
            { label: "State", cell: (m) => (m.active_now ? <StatusBadge status="muted" label="muted now" /> : <StatusBadge status="not_active" label="not active" />) },
            { label: "Held back", numeric: true, cell: (m) => <>
              {formatNumber(m.suppressed)}
              {m.last_suppressed_at && <span class="cell-sub">last <Time iso={past(m.last_suppressed_at)} relative /></span>}
            </> },
            { label: "Created by", cell: (m) => <><code>{m.created_by}</code><span class="cell-sub"><Time iso={past(m.created_at)} relative /></span></> },
            { label: "Actions", cell: (m) => (
              <div class="row-actions">
                <button type="button" class="btn btn-small" disabled={action.busy === m.id} onClick={() => void unmute(m)}>
                  Unmute<span class="visually-hidden"> {muteName(m)}</span>
                </button>
              </div>
            ) },
          ]} />)}
        <LoadMore cursor={cursor} busy={loadingMore} onMore={loadMore} />
      </section>
      <HolidayCalendarCard confirm={confirm} />
    </>
  );
}
