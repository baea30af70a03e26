import { useEffect, useState } from "preact/hooks";
import { api, get, getOrNull, post } from "../api.ts";
import { EmptyState, Loading, LoadMore } from "../components/EmptyState.tsx";
import { ErrorBanner, Notice } from "../components/ErrorBanner.tsx";
import { Field } from "../components/Field.tsx";
import { PageHeader } from "../components/Layout.tsx";
import { StatusBadge } from "../components/StatusBadge.tsx";
import { Table } from "../components/Table.tsx";
import { Time } from "../components/Time.tsx";
import { plural } from "../format.ts";
import { useAction, useInterval, useLoad, usePagedList, useSubmit, useTitle } from "../hooks.ts";
import type { AdsApplyAccepted, AdsApplyRequest, AdsPlan, AdsProvider, AdsProviderList, AdsSelection, AdsSelectionBody, TrendList } from "../types.ts";

const IN_PROGRESS = new Set(["applying", "issued"]);
const ROLLBACKABLE = new Set(["applied", "partially_applied"]);

/** The category most of the account's active trends are in (the default for a plan), or "". */
async function currentTrendCategory(signal: AbortSignal): Promise<string> {
  const trends = await get<TrendList>("/api/trends", { status: "active", limit: 50 }, signal).catch(() => null);
  const counts = new Map<string, number>();
  for (const t of trends?.data ?? []) counts.set(t.category, (counts.get(t.category) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? "";
}

function PlanView({ plan, provider, onApplied, onDiscard }: { plan: AdsPlan; provider: AdsProvider; onApplied: () => void; onDiscard: () => void }) {
  const action = useAction();
  const failedDry = plan.dry_run.results.filter((r) => !r.ok);
  const expired = Date.parse(plan.expires_at) <= Date.now();
  const canApply = plan.changes.length > 0 && plan.status !== "applied" && !plan.run_id && !expired;
  const apply = () => action.run("apply", () => {
    // The hash is the acknowledgement: "this exact plan, as shown". Required when requires_acknowledgement; checked whenever sent.
    const body: AdsApplyRequest = { plan_id: plan.id, acknowledged_plan_hash: plan.plan_hash };
    return post<AdsApplyAccepted>(`${provider.base_path}/apply`, body);
  }, (r) => { onApplied(); return `Applying: run ${r.run_id}. Its result appears in the runs below.`; });
  const titleId = `plan-${plan.id}-title`;

  return (
    <section class="panel" aria-labelledby={titleId}>
      <h3 id={titleId}>{plan.rollback_of ? "Rollback plan" : "Plan"} <code class="small">{plan.id}</code></h3>
      <dl class="facts facts-inline">
        <dt>Status</dt><dd><StatusBadge status={plan.status} /></dd>
        <dt>Category</dt><dd><code>{plan.category}</code></dd>
        <dt>Ad account</dt><dd><code>{plan.ad_account_id}</code></dd>
        <dt>Strict safety</dt><dd>{plan.strict_safety ? "on" : "off"}</dd>
        <dt>Expires</dt><dd><Time iso={plan.expires_at} /></dd>
        {plan.rollback_of && <><dt>Undoes</dt><dd><code>{plan.rollback_of}</code></dd></>}
      </dl>

      <h4>Changes</h4>
      {plan.diff.length === 0 || plan.changes.length === 0
        ? <EmptyState title="Nothing to change.">The mapped entities already target what the category's trends call for, or every change was refused below.</EmptyState>
        : <Table caption="Targeting changes per entity" captionHidden rows={plan.diff.filter((d) => d.changes.length > 0)} rowKey={(d) => `${d.entity_id}|${d.field}`} columns={[
          { label: "Entity", cell: (d) => <>{d.entity_name ?? d.entity_id}<span class="cell-sub"><code>{d.entity_id}</code> · {d.field}</span></> },
          { label: "Before", cell: (d) => (d.before.length ? d.before.join(", ") : <span class="muted">none</span>) },
          { label: "After", cell: (d) => d.after.join(", ") },
          { label: "Change", cell: (d) => (
            <ul class="plain">
              {d.changes.map((c) => (
                <li key={c.change_id}>
                  <span class={c.op === "add" ? "op-add" : "op-remove"}>{c.op === "add" ? "+ add" : "− remove"}</span> {c.item}
                  {c.trend && <span class="muted"> (trend: {c.trend.name})</span>}
                </li>
              ))}
            </ul>
          ) },
        ]} />}

      {(plan.refused.length > 0 || failedDry.length > 0 || plan.requires_acknowledgement) && (
        <div class="warnings" role="region" aria-label="Guardrail warnings">
          <h4>Guardrail warnings</h4>
          <ul>
            {plan.requires_acknowledgement && (
              <li>{provider.display_name} has no dry run: the plan is checked only against its documented limits. Read it before applying.</li>
            )}
            {plan.refused.map((r) => (
              <li key={r.change_id}>Refused <strong>{r.item}</strong> on <code>{r.entity_id}</code> ({r.field}): {r.reason} <span class="muted">[{r.rule}]</span></li>
            ))}
            {failedDry.map((r) => <li key={r.change_id}>Dry run failed for <code>{r.change_id}</code>: {r.error ?? "no reason given"}</li>)}
          </ul>
        </div>
      )}
      {plan.dry_run.ran && failedDry.length === 0 && <p class="muted small">Dry run by the {plan.dry_run.by}: passed.</p>}
      {plan.status_reason && <p class="muted">{plan.status_reason}</p>}
      {expired && <p class="error-text">This plan has expired: preview again.</p>}

      <ErrorBanner error={action.error} />
      <Notice message={action.notice} />
      <div class="actions">
        {canApply && !action.notice && (
          <button type="button" class="btn btn-primary" disabled={action.busy === "apply"} aria-busy={action.busy === "apply"} onClick={() => void apply()}>
            Acknowledge and apply
          </button>
        )}
        <button type="button" class="btn btn-quiet" onClick={onDiscard}>Close plan</button>
      </div>
    </section>
  );
}

function ProviderSection({ provider }: { provider: AdsProvider }) {
  const base = provider.base_path;
  const setup = useLoad(async (signal) => {
    const [selection, category] = await Promise.all([getOrNull<AdsSelection>(`${base}/selection`, signal), currentTrendCategory(signal)]);
    return { selection, category };
  }, [base]);
  const [category, setCategory] = useState("");
  const [strict, setStrict] = useState(true);
  const [account, setAccount] = useState("");
  const [plan, setPlan] = useState<AdsPlan | null>(null);
  const { busy: previewing, error: formError, fields, submit: run } = useSubmit();
  const action = useAction();
  const { list: runs, rows: runRows, cursor, loadMore } = usePagedList<AdsPlan>(`${base}/runs`, { limit: 20 }, [base], action.run);

  useEffect(() => {
    const s = setup.data;
    if (!s) return;
    setCategory(s.selection?.trend_category ?? s.category);
    setStrict(s.selection?.strict_safety ?? true);
    setAccount(s.selection?.account_id ?? "");
  }, [setup.data]);
  // While a run is being applied, follow it.
  useInterval(() => { if (runRows.some((r) => IN_PROGRESS.has(r.status))) void runs.reload(true); }, 3000);

  const preview = async (e: Event) => {
    e.preventDefault();
    setPlan(null);
    const planned = await run(async () => {
      const saved = setup.data?.selection;
      const next: AdsSelectionBody = {
        ...(saved?.safety ? { safety: saved.safety } : {}),
        trend_category: category.trim(), strict_safety: strict, ...(account.trim() ? { account_id: account.trim() } : {}),
      };
      if (!saved || saved.trend_category !== next.trend_category || saved.strict_safety !== next.strict_safety || (saved.account_id ?? "") !== (next.account_id ?? "")) {
        const stored = await api<AdsSelection>(`${base}/selection`, { method: "PUT", body: next });
        setup.setData(setup.data && { ...setup.data, selection: stored });
      }
      return post<AdsPlan>(`${base}/preview`, {});
    });
    if (planned) setPlan(planned);
  };
  const rollback = (p: AdsPlan) => action.run(`rollback:${p.id}`, () => post<AdsPlan>(`${base}/plans/${encodeURIComponent(p.id)}/rollback`),
    (r) => { setPlan(r); return "Rollback plan ready: review it above, then apply it."; });
  const id = (s: string) => `ads-${provider.id}-${s}`;

  return (
    <section class="card" aria-labelledby={id("title")}>
      <h2 id={id("title")}>{provider.display_name}</h2>
      <p class="muted small">
        Targeting: {provider.capabilities.targeting.join(", ") || "none"} · {provider.capabilities.dry_run ? "has a dry run" : "no dry run"}
        {provider.capabilities.sandbox ? " · sandbox" : ""}
      </p>
      {setup.loading && !setup.data ? <Loading /> : (
        <form class="form" onSubmit={preview} aria-labelledby={id("plan-title")} noValidate>
          <h3 id={id("plan-title")}>Plan targeting changes</h3>
          <ErrorBanner error={setup.error ?? formError} />
          <div class="form-grid">
            <Field id={id("category")} label="Trend category" error={fields.trend_category}
              hint={setup.data?.category ? `Your trends are mostly in ${setup.data.category}` : "e.g. tech/ai (sub-categories included)"}>
              {(a) => <input {...a} type="text" required autoComplete="off" value={category} onInput={(e) => setCategory(e.currentTarget.value)} />}
            </Field>
            <Field id={id("account")} label="Ad account (optional)" error={fields.account_id} hint="Leave empty when the connection reaches one ad account">
              {(a) => <input {...a} type="text" autoComplete="off" value={account} onInput={(e) => setAccount(e.currentTarget.value)} />}
            </Field>
            <label class="check span-2">
              <input type="checkbox" checked={strict} onChange={(e) => setStrict(e.currentTarget.checked)} />
              Strict safety (only add targeting, within the caps; recommended)
            </label>
          </div>
          <div class="actions">
            <button type="submit" class="btn btn-primary" disabled={previewing} aria-busy={previewing}>{previewing ? "Previewing…" : "Preview"}</button>
          </div>
        </form>
      )}
      {plan && <PlanView key={plan.id} plan={plan} provider={provider} onApplied={() => void runs.reload(true)} onDiscard={() => setPlan(null)} />}

      <h3>Runs</h3>
      <ErrorBanner error={action.error} onDismiss={() => action.setError(null)} />
      <Notice message={action.notice} />
      <ErrorBanner error={runs.error} />
      {runs.loading && !runs.data ? <Loading /> : runs.data && (runRows.length === 0
        ? <EmptyState title="No plans applied yet.">Preview a plan above, then apply it.</EmptyState>
        : <Table caption={`${provider.display_name} runs`} captionHidden rows={runRows} rowKey={(r) => r.id} columns={[
          { label: "Applied", cell: (r) => <Time iso={r.applied_at ?? r.created_at} /> },
          { label: "Plan", cell: (r) => <><code>{r.id}</code>{r.rollback_of && <span class="cell-sub">rollback of <code>{r.rollback_of}</code></span>}</> },
          { label: "Status", cell: (r) => <><StatusBadge status={r.status} />{r.status_reason && <span class="cell-sub">{r.status_reason}</span>}</> },
          { label: "Category", cell: (r) => <code>{r.category}</code> },
          { label: "Changes", numeric: true, cell: (r) => plural(r.changes.length, "change") },
          { label: "Actions", cell: (r) => (ROLLBACKABLE.has(r.status) && !r.rollback_of
            ? <button type="button" class="btn btn-small" disabled={action.busy === `rollback:${r.id}`} onClick={() => void rollback(r)}>Roll back</button>
            : <span class="muted">—</span>) },
        ]} />)}
      <LoadMore cursor={cursor} busy={action.busy === "more"} onMore={loadMore} />
    </section>
  );
}

export function AdsPage() {
  useTitle("Ads");
  const providers = useLoad((signal) => get<AdsProviderList>("/api/integrations/ads/providers", undefined, signal), []);
  const connected = providers.data?.data.filter((p) => p.connected) ?? [];
  return (
    <>
      <PageHeader title="Ads">Targeting plans from your trends: preview the exact changes, apply them, roll them back.</PageHeader>
      <ErrorBanner error={providers.error} />
      {providers.loading && !providers.data ? <Loading /> : providers.data && (connected.length === 0
        ? <EmptyState title="No ads provider is connected.">Connect one on the <a href="#/connections">Connections</a> page.</EmptyState>
        : connected.map((p) => <ProviderSection key={p.id} provider={p} />))}
    </>
  );
}
