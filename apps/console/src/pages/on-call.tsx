import { useState } from "preact/hooks";
import { api, post } from "../api.ts";
import { useConfirm } from "../components/Dialog.tsx";
import { EmptyState, Loading, LoadMore } from "../components/EmptyState.tsx";
import { ErrorBanner, Notice } from "../components/ErrorBanner.tsx";
import { Field } from "../components/Field.tsx";
import { PageHeader } from "../components/Layout.tsx";
import { StatusBadge } from "../components/StatusBadge.tsx";
import { Table } from "../components/Table.tsx";
import { Time } from "../components/Time.tsx";
import { useAction, usePagedList, useSubmit, useTitle } from "../hooks.ts";
import type { OnCallSchedule, OnCallScheduleBody } from "../types.ts";

// On-call schedules: who is on call now in each, the next hand-off, and a form for a new rotation. Escalation steps
// of type "Notify whoever is on call" (Routing page) name a schedule by its id. Overrides are set through the API.

const BASE = "/api/operator/schedules";
const schedulePath = (id: string) => `${BASE}/${encodeURIComponent(id)}`;
const LOCAL_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
const WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"] as const;
type Shift = "daily" | "weekly" | "hours";
type Rotation = OnCallSchedule["rotation"];
type Member = Rotation["members"][number];

interface FormState { name: string; time_zone: string; members: string; shift: Shift; shift_hours: string; handoff_time: string; handoff_weekday: string; start_date: string }
const today = () => new Date().toISOString().slice(0, 10);
const EMPTY = (): FormState => ({ name: "", time_zone: LOCAL_ZONE, members: "", shift: "weekly", shift_hours: "12", handoff_time: "09:00", handoff_weekday: "monday", start_date: today() });

/** One member per line: `Name | slack:U0123ABCD | teams:<AAD object id>`. */
function parseMembers(text: string): Member[] {
  return text.split("\n").map((l) => l.trim()).filter(Boolean).map((line) => {
    const [name, ...users] = line.split("|").map((x) => x.trim());
    return {
      name,
      chat_users: users.filter(Boolean).map((u) => {
        const at = u.indexOf(":");
        return { provider: at < 0 ? u : u.slice(0, at).trim(), user_id: at < 0 ? "" : u.slice(at + 1).trim() };
      }),
    };
  });
}

function shiftText(r: Rotation, zone: string): string {
  const len = r.shift === "hours" ? `every ${r.shift_hours} h` : r.shift === "weekly" ? `weekly, ${r.handoff_weekday ?? "monday"}s` : "daily";
  return `${len} at ${r.handoff_time} ${zone}, from ${r.start_date}`;
}

function NewScheduleForm({ onCreated }: { onCreated: (s: OnCallSchedule) => void }) {
  const [f, setF] = useState<FormState>(EMPTY);
  const { busy, error, fields, submit: run } = useSubmit();
  const set = <K extends keyof FormState>(k: K, v: FormState[K]) => setF((s) => ({ ...s, [k]: v }));
  const submit = async (e: Event) => {
    e.preventDefault();
    const body: OnCallScheduleBody = {
      name: f.name.trim(), time_zone: f.time_zone.trim() || undefined,
      rotation: {
        members: parseMembers(f.members), shift: f.shift, handoff_time: f.handoff_time.trim(), start_date: f.start_date.trim(),
        ...(f.shift === "hours" ? { shift_hours: Number(f.shift_hours) } : {}),
        ...(f.shift === "weekly" ? { handoff_weekday: f.handoff_weekday as Rotation["handoff_weekday"] } : {}),
      },
    };
    const created = await run(() => post<OnCallSchedule>(BASE, body));
    if (!created) return;
    setF(EMPTY());
    onCreated(created);
  };
  const membersError = Object.entries(fields).find(([k]) => k.startsWith("rotation.members"))?.[1];
  return (
    <form class="card form" onSubmit={submit} aria-labelledby="new-schedule-title" noValidate>
      <h2 id="new-schedule-title">New on-call schedule</h2>
      <ErrorBanner error={error} />
      <div class="form-grid">
        <Field id="sch-name" label="Name" error={fields.name}>
          {(a) => <input {...a} type="text" required autoComplete="off" maxLength={100} placeholder="Primary" value={f.name} onInput={(e) => set("name", e.currentTarget.value)} />}
        </Field>
        <Field id="sch-zone" label="Time zone" error={fields.time_zone} hint="IANA name, e.g. Europe/Berlin: the hand-off stays at its local time">
          {(a) => <input {...a} type="text" autoComplete="off" maxLength={64} value={f.time_zone} onInput={(e) => set("time_zone", e.currentTarget.value)} />}
        </Field>
        <Field id="sch-members" label="Members, in order" error={membersError} hint="One per line: Name | slack:U0123ABCD | teams:<AAD object id>">
          {(a) => <textarea {...a} rows={3} required value={f.members} onInput={(e) => set("members", e.currentTarget.value)} />}
        </Field>
        <Field id="sch-shift" label="Shift" error={fields["rotation.shift"]}>
          {(a) => (
            <select {...a} value={f.shift} onChange={(e) => set("shift", e.currentTarget.value as Shift)}>
              <option value="daily">A day</option><option value="weekly">A week</option><option value="hours">A number of hours</option>
            </select>
          )}
        </Field>
        {f.shift === "hours" && (
          <Field id="sch-hours" label="Hours per shift" error={fields["rotation.shift_hours"]}>
            {(a) => <input {...a} type="number" min={1} max={336} step={1} inputMode="numeric" value={f.shift_hours} onInput={(e) => set("shift_hours", e.currentTarget.value)} />}
          </Field>
        )}
        {f.shift === "weekly" && (
          <Field id="sch-weekday" label="Hand-off day" error={fields["rotation.handoff_weekday"]}>
            {(a) => (
              <select {...a} value={f.handoff_weekday} onChange={(e) => set("handoff_weekday", e.currentTarget.value)}>
                {WEEKDAYS.map((d) => <option key={d} value={d}>{d[0].toUpperCase() + d.slice(1)}</option>)}
              </select>
            )}
          </Field>
        )}
        <Field id="sch-time" label="Hand-off time" error={fields["rotation.handoff_time"]} hint="Local HH:MM">
          {(a) => <input {...a} type="time" required value={f.handoff_time} onInput={(e) => set("handoff_time", e.currentTarget.value)} />}
        </Field>
        <Field id="sch-start" label="Start date" error={fields["rotation.start_date"]} hint="The first member's first shift starts at the first hand-off from then">
          {(a) => <input {...a} type="date" required value={f.start_date} onInput={(e) => set("start_date", e.currentTarget.value)} />}
        </Field>
      </div>
      <div class="actions"><button type="submit" class="btn btn-primary" disabled={busy} aria-busy={busy}>Create schedule</button></div>
    </form>
  );
}

export function OnCallPage() {
  useTitle("On call");
  const [dialog, confirm] = useConfirm();
  const action = useAction();
  const { list, rows, cursor, loadMore, loadingMore } = usePagedList<OnCallSchedule>(BASE, { limit: 50 }, [], action.run);

  const remove = async (s: OnCallSchedule) => {
    const ok = await confirm({ title: `Delete ${s.name}?`, confirmLabel: "Delete", message: "Escalation steps must stop naming it first (Routing page)." });
    if (!ok) return;
    await action.run(s.id, () => api<void>(schedulePath(s.id), { method: "DELETE" }), () => { void list.reload(true); return `${s.name} deleted.`; });
  };

  return (
    <>
      <PageHeader title="On call" actions={
        <button type="button" class="btn" onClick={() => void list.reload(true)} disabled={list.loading} aria-busy={list.loading}>Refresh</button>
      }>
        Rotations of people taking turns on call. An escalation step "Notify whoever is on call" (Routing page) mentions
        whoever is on call in its schedule when it runs, in the item's chat.
      </PageHeader>
      {dialog}
      <ErrorBanner error={action.error} onDismiss={() => action.setError(null)} />
      <Notice message={action.notice} />
      <section class="card" aria-labelledby="schedules-title" aria-busy={list.loading}>
        <h2 id="schedules-title">Schedules</h2>
        <ErrorBanner error={list.error} />
        {list.loading && !list.data ? <Loading /> : list.data && (rows.length === 0
          ? <EmptyState title="No on-call schedules.">Create one with the form below.</EmptyState>
          : <Table caption="On-call schedules" captionHidden rows={rows} rowKey={(s) => s.id} columns={[
            { label: "Schedule", cell: (s) => <><strong>{s.name}</strong><span class="cell-sub"><code>{s.id}</code></span></> },
            { label: "Rotation", cell: (s) => <>{s.rotation.members.map((m) => m.name).join(", ")}<span class="cell-sub">{shiftText(s.rotation, s.time_zone)}</span></> },
            { label: "On call now", cell: (s) => (s.on_call_now.on_call
              ? <><strong>{s.on_call_now.on_call.name}</strong>{s.on_call_now.source === "override" && <> <StatusBadge status="override" /></>}</>
              : <span class="muted">Nobody</span>) },
            { label: "Next hand-off", cell: (s) => (s.on_call_now.next_handoff
              ? <><Time iso={s.on_call_now.next_handoff.at} /><span class="cell-sub">to {s.on_call_now.next_handoff.on_call?.name ?? "nobody"}</span></>
              : <span class="muted">None ahead</span>) },
            { label: "Actions", cell: (s) => (
              <div class="row-actions">
                <button type="button" class="btn btn-small" disabled={action.busy === s.id} onClick={() => void remove(s)}>
                  Delete<span class="visually-hidden"> {s.name}</span>
                </button>
              </div>
            ) },
          ]} />)}
        <LoadMore cursor={cursor} busy={loadingMore} onMore={loadMore} />
      </section>
      <NewScheduleForm onCreated={(s) => { action.setNotice(`${s.name} created.`); void list.reload(true); }} />
    </>
  );
}
