import { Fragment } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { asApiError, download, get, post } from "../api.ts";
import { EmptyState, Loading, LoadMore } from "../components/EmptyState.tsx";
import { ErrorBanner, Notice } from "../components/ErrorBanner.tsx";
import { Field } from "../components/Field.tsx";
import { PageHeader } from "../components/Layout.tsx";
import { StatusBadge } from "../components/StatusBadge.tsx";
import { Table } from "../components/Table.tsx";
import { Time } from "../components/Time.tsx";
import { formatBytes, formatMicros, formatNumber, isoDay } from "../format.ts";
import { useAction, useLoad, useTitle } from "../hooks.ts";
import type { ReportCatalog, ReportExportView, ReportOutputRow, ReportPreview, ReportProviderOutcome, ReportRequest, ReportRequestBody } from "../types.ts";

const BASE = "/api/integrations/ads/reporting";
const FINISHED = new Set(["ready", "failed", "cancelled"]);

function Outcomes({ providers }: { providers: ReportProviderOutcome[] }) {
  if (providers.length === 0) return null;
  return (
    <ul class="plain outcomes" aria-label="Providers read">
      {providers.map((p) => (
        <li key={p.provider}>
          <strong>{p.provider}</strong> <StatusBadge status={p.status} label={p.status.replaceAll("_", " ")} /> {formatNumber(p.rows)} rows
          {p.currency && <span class="muted"> · {p.currency}</span>}{p.time_zone && <span class="muted"> · {p.time_zone}</span>}
          {p.error && <span class="error-text"> — {p.error.message}</span>}
        </li>
      ))}
    </ul>
  );
}

function Catalog({ catalog }: { catalog: ReportCatalog }) {
  return (
    <details class="card">
      <summary>What can be reported</summary>
      <div class="grid-2">
        <div>
          <h3>Dimensions</h3>
          <dl class="facts">{catalog.dimensions.map((d) => <Fragment key={d.name}><dt><code>{d.name}</code></dt><dd>{d.description}</dd></Fragment>)}</dl>
        </div>
        <div>
          <h3>Metrics</h3>
          <dl class="facts">{catalog.metrics.map((m) => <Fragment key={m.name}><dt><code>{m.name}</code></dt><dd>{m.description}</dd></Fragment>)}</dl>
        </div>
      </div>
      <h3>Providers</h3>
      <Table caption="Reporting per provider" captionHidden rows={catalog.providers} rowKey={(p) => p.provider} columns={[
        { label: "Provider", cell: (p) => p.display_name },
        { label: "Connected", cell: (p) => (p.connected ? "Yes" : "No") },
        { label: "Reporting", cell: (p) => (p.reporting ? "Yes" : "No") },
        { label: "Levels", cell: (p) => p.levels?.join(", ") ?? "—" },
        { label: "Range", cell: (p) => (p.max_range_days ? `${p.max_range_days} days max, ${p.max_lookback_days ?? "?"} days back` : "—") },
        { label: "Clicks", cell: (p) => p.clicks ?? "—" },
        { label: "Conversions", cell: (p) => p.conversions ?? "—" },
      ]} />
    </details>
  );
}

function ExportStatus({ exp, onRefresh }: { exp: ReportExportView; onRefresh: (e: ReportExportView) => void }) {
  const action = useAction();
  const timer = useRef<ReturnType<typeof setTimeout>>();
  useEffect(() => {
    if (FINISHED.has(exp.status)) return;
    timer.current = setTimeout(() => {
      get<ReportExportView>(`${BASE}/exports/${encodeURIComponent(exp.id)}`).then(onRefresh, (err) => action.setError(asApiError(err)));
    }, 2000);
    return () => clearTimeout(timer.current);
  }, [exp]);
  const save = () => action.run("download", () => download(exp.download_url ?? `${BASE}/exports/${encodeURIComponent(exp.id)}/download`,
    `report-${exp.request.from}-${exp.request.to}.csv`), () => "Download started.");
  return (
    <div class="panel" aria-live="polite">
      <p>
        Export <code>{exp.id}</code>: <StatusBadge status={exp.status} />{" "}
        {exp.status === "ready"
          ? <>{formatNumber(exp.rows_written)} rows, {formatBytes(exp.bytes)}; kept until <Time iso={exp.expires_at} />.</>
          : exp.status === "failed" ? <span class="error-text">{exp.error ?? "The export failed."}</span>
          : exp.status === "cancelled" ? "Cancelled." : <>{formatNumber(exp.rows_written)} rows so far…</>}
      </p>
      {exp.providers && <Outcomes providers={exp.providers} />}
      <ErrorBanner error={action.error} />
      <Notice message={action.notice} />
      {exp.status === "ready" && (
        <button type="button" class="btn btn-primary" disabled={action.busy === "download"} aria-busy={action.busy === "download"} onClick={() => void save()}>
          Download CSV
        </button>
      )}
    </div>
  );
}

export function ReportsPage() {
  useTitle("Reports");
  const catalog = useLoad((signal) => get<ReportCatalog>(`${BASE}/catalog`, undefined, signal), []);
  const [from, setFrom] = useState(() => isoDay(7));
  const [to, setTo] = useState(() => isoDay(1));
  const [granularity, setGranularity] = useState<ReportRequest["granularity"]>("day");
  const [level, setLevel] = useState<ReportRequest["level"]>("campaign");
  const [chosen, setChosen] = useState<string[]>([]);
  const [onlyOurs, setOnlyOurs] = useState(false);
  const [preview, setPreview] = useState<{ request: ReportRequestBody; rows: ReportOutputRow[]; cursor: string | null; providers: ReportProviderOutcome[] } | null>(null);
  const [exp, setExp] = useState<ReportExportView | null>(null);
  const action = useAction();
  const reporting = catalog.data?.providers.filter((p) => p.reporting && p.connected) ?? [];

  const request = (): ReportRequestBody => ({
    from, to, granularity, level,
    ...(chosen.length ? { providers: chosen } : {}),
    ...(onlyOurs ? { filters: { changed_by_trendgate: true } } : {}),
  });
  const runPreview = async (e: Event) => {
    e.preventDefault();
    const req = request();
    const p = await action.run("preview", () => post<ReportPreview>(`${BASE}/preview`, req, { limit: 100 }));
    if (p) setPreview({ request: req, rows: p.data, cursor: p.next_cursor, providers: p.providers });
  };
  const more = async () => {
    if (!preview?.cursor) return;
    const p = await action.run("more", () => post<ReportPreview>(`${BASE}/preview`, preview.request, { limit: 100, cursor: preview.cursor }));
    if (p) setPreview({ ...preview, rows: [...preview.rows, ...p.data], cursor: p.next_cursor, providers: p.providers });
  };
  const startExport = () => action.run("export", () => post<ReportExportView>(`${BASE}/exports`, request(), { mode: "job" }), (x) => { setExp(x); });

  const formError = action.error;
  const formFields = action.error?.fields ?? {};

  return (
    <>
      <PageHeader title="Reports">Ads performance across providers, normalised: preview it here, export it as CSV.</PageHeader>
      <ErrorBanner error={catalog.error} />
      {catalog.loading && !catalog.data ? <Loading /> : catalog.data && <Catalog catalog={catalog.data} />}
      <form class="card form" onSubmit={runPreview} aria-labelledby="report-title" noValidate>
        <h2 id="report-title">Report</h2>
        <ErrorBanner error={formError} onDismiss={() => action.setError(null)} />
        <div class="form-grid">
          <Field id="rep-from" label="From" error={formFields.from}>
            {(a) => <input {...a} type="date" required value={from} onInput={(e) => setFrom(e.currentTarget.value)} />}
          </Field>
          <Field id="rep-to" label="To" error={formFields.to}>
            {(a) => <input {...a} type="date" required value={to} onInput={(e) => setTo(e.currentTarget.value)} />}
          </Field>
          <Field id="rep-granularity" label="Granularity" error={formFields.granularity}>
            {(a) => (
              <select {...a} value={granularity} onChange={(e) => setGranularity(e.currentTarget.value as ReportRequest["granularity"])}>
                <option value="day">Per day</option>
                <option value="total">Total for the range</option>
              </select>
            )}
          </Field>
          <Field id="rep-level" label="Level" error={formFields.level}>
            {(a) => (
              <select {...a} value={level} onChange={(e) => setLevel(e.currentTarget.value as ReportRequest["level"])}>
                <option value="campaign">Campaign</option>
                <option value="ad_group">Ad group</option>
                <option value="ad">Ad</option>
              </select>
            )}
          </Field>
          {reporting.length > 0 && (
            <fieldset class="span-2 checks">
              <legend>Providers (none ticked: every connected one)</legend>
              {reporting.map((p) => (
                <label key={p.provider} class="check">
                  <input type="checkbox" checked={chosen.includes(p.provider)}
                    onChange={(e) => setChosen(e.currentTarget.checked ? [...chosen, p.provider] : chosen.filter((x) => x !== p.provider))} />
                  {p.display_name}
                </label>
              ))}
            </fieldset>
          )}
          <label class="check span-2">
            <input type="checkbox" checked={onlyOurs} onChange={(e) => setOnlyOurs(e.currentTarget.checked)} />
            Only ad groups Trendgate changed
          </label>
        </div>
        <div class="actions">
          <button type="submit" class="btn btn-primary" disabled={action.busy === "preview"} aria-busy={action.busy === "preview"}>
            {action.busy === "preview" ? "Loading preview…" : "Preview"}
          </button>
          <button type="button" class="btn" disabled={action.busy === "export"} aria-busy={action.busy === "export"} onClick={() => void startExport()}>
            Export CSV
          </button>
        </div>
      </form>
      {exp && <ExportStatus exp={exp} onRefresh={setExp} />}
      {preview && (
        <section class="card" aria-labelledby="rows-title">
          <h2 id="rows-title">Preview</h2>
          <Outcomes providers={preview.providers} />
          {preview.rows.length === 0
            ? <EmptyState title="No rows for this report.">Try a wider date range, another level, or check the providers above.</EmptyState>
            : <Table caption="Report rows" captionHidden rows={preview.rows} rowKey={(r) => `${r.provider}|${r.account_id}|${r.date}|${r.campaign_id}|${r.ad_group_id}|${r.ad_id}`} columns={[
              { label: "Date", cell: (r) => r.date ?? "Total" },
              { label: "Provider", cell: (r) => r.provider },
              { label: "Campaign", cell: (r) => r.campaign_name ?? r.campaign_id },
              ...(level !== "campaign" ? [{ label: "Ad group", cell: (r: ReportOutputRow) => r.ad_group_name ?? r.ad_group_id ?? "—" }] : []),
              ...(level === "ad" ? [{ label: "Ad", cell: (r: ReportOutputRow) => r.ad_name ?? r.ad_id ?? "—" }] : []),
              { label: "Impressions", numeric: true, cell: (r) => formatNumber(r.impressions) },
              { label: "Clicks", numeric: true, cell: (r) => formatNumber(r.clicks) },
              { label: "Spend", numeric: true, cell: (r) => formatMicros(r.spend_micros, r.currency) },
              { label: "Conversions", numeric: true, cell: (r) => (r.conversions === null ? "—" : formatNumber(r.conversions)) },
              { label: "CTR", numeric: true, cell: (r) => (r.ctr === null ? "—" : `${(r.ctr * 100).toFixed(2)}%`) },
              { label: "CPC", numeric: true, cell: (r) => formatMicros(r.cpc_micros, r.currency) },
            ]} />}
          <LoadMore cursor={preview.cursor} busy={action.busy === "more"} onMore={more} />
        </section>
      )}
    </>
  );
}
