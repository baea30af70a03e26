import { RATE_LIMIT_PER_SECOND, RECOVERY_WINDOW_MINUTES, SENSITIVITY_MIN_SEVERITY, TRIGGER_WINDOW_MINUTES } from "@trendgate/contracts/vocabulary";
import { Field } from "../components/Field.tsx";
import { StatusBadge } from "../components/StatusBadge.tsx";
import { Table } from "../components/Table.tsx";
import { Time } from "../components/Time.tsx";
import { formatDay, formatNumber, formatSeconds, plural, sentence } from "../format.ts";
import type { Sensitivity, Webhook, WebhookBacktest, WebhookPreviewBody } from "../types.ts";

// A subscription's tuning (sensitivity, trigger and recovery windows), its rate limit and its backtest ("Preview on
// history"), shared by the create form (webhooks.tsx) and the edit form (webhook-detail.tsx).

export const PREVIEW_PATH = "/api/integrations/webhooks/preview";

/** The form's order: the default (every trend) first. */
export const SENSITIVITY_ORDER: Sensitivity[] = ["high", "normal", "low"];
export const SENSITIVITY_LABELS: Record<Sensitivity, string> = { high: "High", normal: "Normal", low: "Low" };
/** What a level lets through, from the vocabulary's least severity ("Medium severity and up"). */
export const sensitivityMeaning = (s: Sensitivity) =>
  s === "high" ? "Every trend (low severity and up)" : `${sentence(SENSITIVITY_MIN_SEVERITY[s])} severity and up`;

export const windowText = (minutes: number, off: string) => (minutes > 0 ? formatSeconds(minutes * 60) : off);

export interface Tuning { sensitivity: Sensitivity; trigger_window_minutes: string; recovery_window_minutes: string }
export const DEFAULT_TUNING: Tuning = { sensitivity: "high", trigger_window_minutes: "0", recovery_window_minutes: "0" };
export const tuningOf = (w: Webhook): Tuning => ({
  sensitivity: w.sensitivity, trigger_window_minutes: String(w.trigger_window_minutes), recovery_window_minutes: String(w.recovery_window_minutes),
});
/** The tuning as the API takes it: numbers, an empty window as 0 (off), like the cooldown. */
export const tuningBody = (t: Tuning) => ({
  sensitivity: t.sensitivity, trigger_window_minutes: Number(t.trigger_window_minutes), recovery_window_minutes: Number(t.recovery_window_minutes),
});

/** The rate limit as the form holds it ("" for none) and as the API takes it (null for none). */
export const rateLimitText = (r: number | null) => (r === null ? "" : String(r));
export const rateLimitValue = (v: string) => (v.trim() === "" ? null : Number(v));
export const rateLimitShown = (r: number | null) => (r === null ? "Unlimited" : `At most ${formatNumber(r)} a second`);

/** Deliveries per second at most (not a rule: the backtest ignores it); `prefix` keeps its id unique on the page. */
export function RateLimitField({ prefix, value, onChange, error }: { prefix: string; value: string; onChange: (v: string) => void; error?: string }) {
  return (
    <Field id={`${prefix}-rate-limit`} label="Rate limit (per second)" error={error}
      hint="At most this many deliveries a second to this URL; more wait their turn, none is dropped. Empty for no limit">
      {(a) => <input {...a} type="number" min={RATE_LIMIT_PER_SECOND.min} max={RATE_LIMIT_PER_SECOND.max} step={1} inputMode="numeric"
        value={value} onInput={(e) => onChange(e.currentTarget.value)} />}
    </Field>
  );
}

export const PREVIEW_DAYS = [1, 3, 7, 14] as const;

/** The three tuning controls; `prefix` keeps their ids unique on the page. */
export function TuningFields({ prefix, value, onChange, fields }: {
  prefix: string; value: Tuning; onChange: (t: Tuning) => void; fields: Record<string, string>;
}) {
  const set = <K extends keyof Tuning>(k: K, v: Tuning[K]) => onChange({ ...value, [k]: v });
  return (
    <>
      <Field id={`${prefix}-sensitivity`} label="Sensitivity" error={fields.sensitivity} class="span-2"
        hint={<>{sensitivityMeaning(value.sensitivity)}. The least severity of trend this subscription is told about; a trend first seen below it is announced when it rises to it.</>}>
        {(a) => (
          <select {...a} value={value.sensitivity} onChange={(e) => set("sensitivity", e.currentTarget.value as Sensitivity)}>
            {SENSITIVITY_ORDER.map((s) => <option key={s} value={s}>{SENSITIVITY_LABELS[s]}: {sensitivityMeaning(s).toLowerCase()}</option>)}
          </select>
        )}
      </Field>
      <Field id={`${prefix}-trigger-window`} label="Trigger window (minutes)" error={fields.trigger_window_minutes}
        hint="Hold each firing this long and send it only if the trend is still anomalous then; 0 sends at once">
        {(a) => <input {...a} type="number" min={TRIGGER_WINDOW_MINUTES.min} max={TRIGGER_WINDOW_MINUTES.max} step={1} inputMode="numeric"
          value={value.trigger_window_minutes} onInput={(e) => set("trigger_window_minutes", e.currentTarget.value)} />}
      </Field>
      <Field id={`${prefix}-recovery-window`} label="Recovery window (minutes)" error={fields.recovery_window_minutes}
        hint="After a trend ends, skip its re-detection for this long; 0 for off">
        {(a) => <input {...a} type="number" min={RECOVERY_WINDOW_MINUTES.min} max={RECOVERY_WINDOW_MINUTES.max} step={1} inputMode="numeric"
          value={value.recovery_window_minutes} onInput={(e) => set("recovery_window_minutes", e.currentTarget.value)} />}
      </Field>
    </>
  );
}

/** The "Replay the last" choice next to the Preview button. */
export function DaysField({ prefix, value, onChange, error }: { prefix: string; value: number; onChange: (d: number) => void; error?: string }) {
  return (
    <Field id={`${prefix}-days`} label="Replay the last" error={error}>
      {(a) => (
        <select {...a} value={value} onChange={(e) => onChange(Number(e.currentTarget.value))}>
          {PREVIEW_DAYS.map((d) => <option key={d} value={d}>{plural(d, "day")}</option>)}
        </select>
      )}
    </Field>
  );
}

const TOP_TRENDS = 10;

/**
 * A backtest's answer: the totals (announced: the status line exists before the answer, so screen readers read it),
 * deliveries per day and the trends that fired most. `stale`: the form's rules changed since.
 */
export function PreviewResult({ prefix, result, stale }: { prefix: string; result: { body: WebhookPreviewBody; answer: WebhookBacktest } | null; stale: boolean }) {
  const r = result?.answer;
  const max = r ? Math.max(1, ...r.per_day.map((d) => d.deliveries)) : 1;
  const suppressed = r ? r.suppressed.cooldown + r.suppressed.trigger_window + r.suppressed.recovery_window : 0;
  return (
    <div class="preview">
      <p role="status" class={r ? "preview-summary" : "visually-hidden"}>
        {r && <>
          Over the last {plural(result.body.days ?? PREVIEW_DAYS[PREVIEW_DAYS.length - 1], "day")}, these rules would have sent{" "}
          <strong>{plural(r.deliveries, "delivery", "deliveries")}</strong> and suppressed {formatNumber(suppressed)}, from{" "}
          {plural(r.events_replayed, "trend event")}.
        </>}
      </p>
      {r && (
        <section aria-labelledby={`${prefix}-preview-title`}>
          <h3 id={`${prefix}-preview-title`}>Preview on history</h3>
          {stale && <p class="hint">The rules have changed since this preview: preview again to see their effect.</p>}
          <p class="muted small">
            <Time iso={r.from} /> to <Time iso={r.to} />. Nothing was saved or sent; mutes are not replayed.
          </p>
          <ul class="stats">
            <li><span class="stat-value">{formatNumber(r.deliveries)}</span> {r.deliveries === 1 ? "delivery" : "deliveries"}</li>
            <li><span class="stat-value">{formatNumber(r.suppressed.cooldown)}</span> suppressed by the cooldown</li>
            <li><span class="stat-value">{formatNumber(r.suppressed.trigger_window)}</span> by the trigger window</li>
            <li><span class="stat-value">{formatNumber(r.suppressed.recovery_window)}</span> by the recovery window</li>
          </ul>
          <div class="grid-2">
            <div class="compact">
              <Table caption="Deliveries per day (UTC)" rows={r.per_day} rowKey={(d) => d.date} columns={[
                { label: "Day", cell: (d) => <time dateTime={d.date}>{formatDay(d.date)}</time> },
                { label: "Deliveries", numeric: true, cell: (d) => formatNumber(d.deliveries) },
                // The bar repeats the number: hidden from assistive technology.
                { label: "Share", class: "bar-cell", cell: (d) => <meter aria-hidden="true" min={0} max={max} value={d.deliveries} /> },
              ]} />
            </div>
            <div>
              {r.trends.length === 0
                ? <p class="muted">No trend would have fired.</p>
                : <Table caption={r.trends.length > TOP_TRENDS ? `Top ${TOP_TRENDS} of ${r.trends.length} trends` : "Trends that would have fired"}
                  rows={r.trends.slice(0, TOP_TRENDS)} rowKey={(t) => t.trend_id} columns={[
                    { label: "Trend", cell: (t) => <><strong>{t.trend_name}</strong><span class="cell-sub"><code>{t.category}</code></span></> },
                    { label: "Severity", cell: (t) => <StatusBadge status={t.severity} /> },
                    { label: "Deliveries", numeric: true, cell: (t) => formatNumber(t.deliveries) },
                    { label: "First", cell: (t) => <Time iso={t.first_at} /> },
                  ]} />}
            </div>
          </div>
        </section>
      )}
    </div>
  );
}
