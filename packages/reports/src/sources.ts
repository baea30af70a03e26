import type { Config } from "@trendgate/config";
import type { Connections } from "@trendgate/connections";
import { AdAccountChoiceError, resolveAdAccount } from "@trendgate/ads";
import type { AdsConnector, ReportingClient, ReportQuery } from "@trendgate/connector-ads";
import { baseUrlOf, ProviderError } from "@trendgate/connector-core";
import type { ConnectorRegistry } from "@trendgate/connectors";
import type { ReportRequest } from "@trendgate/contracts";
import type { Db } from "@trendgate/db";

// Which providers a report reads, and how: each requested ads provider the account connected (with an ad account
// selected) and whose connector has reporting, checked against what it can report (level, granularity, range,
// lookback). A provider that cannot take part is reported with its reason, never fails the report.

export interface ReportDeps {
  db: Db;
  registry: ConnectorRegistry;
  connections: Connections;
  config: Pick<Config, "PROVIDER_ENV">;
}

export interface ProviderOutcome {
  provider: string;
  /** ok: all its rows were read; failed: it could not take part, or stopped (its rows so far are in);
   * not_reached: not read to its end (a preview's page filled first). */
  status: "ok" | "failed" | "not_reached";
  account_id: string | null;
  currency: string | null;
  time_zone: string | null;
  rows: number;
  error: { kind: string; message: string } | null;
}

/** One provider of the report; `client` and `query` are null when it is not read (its outcome says why, or it has nothing to report). */
export interface ReportSource { provider: string; accountId: string; client: ReportingClient | null; query: ReportQuery | null; outcome: ProviderOutcome }

const DAY_MS = 86_400_000;
const days = (from: string, to: string) => Math.round((Date.parse(to) - Date.parse(from)) / DAY_MS) + 1;

/** The ad groups the account's applied plans changed (per provider), for the filters. */
async function changedAdGroups(db: Db, accountId: string, req: ReportRequest): Promise<Map<string, string[]> | null> {
  const f = req.filters;
  if (!f?.changed_by_trendgate && !f?.plan_id) return null;
  const plans = await db.adsPlan.findMany({
    where: { accountId, status: { in: ["applied", "partially_applied"] }, ...(f.plan_id ? { id: f.plan_id } : {}) },
    select: { provider: true, changes: true, results: true },
  });
  const out = new Map<string, Set<string>>();
  for (const p of plans) {
    const ok = new Set(((p.results as { change_id: string; ok: boolean }[] | null) ?? []).filter((r) => r.ok).map((r) => r.change_id));
    for (const c of p.changes as { id: string; entity_id: string }[]) if (ok.has(c.id)) (out.get(p.provider) ?? out.set(p.provider, new Set()).get(p.provider)!).add(c.entity_id);
  }
  return new Map([...out].map(([k, v]) => [k, [...v].sort()]));
}

export async function reportSources(deps: ReportDeps, accountId: string, req: ReportRequest, now = new Date()): Promise<ReportSource[]> {
  const all = deps.registry.ofKind("ads").filter((c): c is AdsConnector & { reporting: NonNullable<AdsConnector["reporting"]> } => !!c.reporting);
  const wanted = req.providers ? all.filter((c) => req.providers!.includes(c.manifest.id)) : all;
  const conns = await deps.db.connection.findMany({ where: { accountId, provider: { in: wanted.map((c) => c.manifest.id) } } });
  const changed = await changedAdGroups(deps.db, accountId, req);
  const sources: ReportSource[] = [];
  for (const c of wanted) {
    const id = c.manifest.id;
    const conn = conns.find((x) => x.provider === id);
    const selection = conn?.selection as { account_id?: string } | null | undefined;
    let accountIdOf = selection?.account_id ?? null;
    const outcome: ProviderOutcome = { provider: id, status: "failed", account_id: accountIdOf, currency: null, time_zone: null, rows: 0, error: null };
    const refuse = (kind: string, message: string) => { outcome.error = { kind, message }; sources.push({ provider: id, accountId: "", client: null, query: null, outcome }); };
    const caps = c.reporting.capabilities;
    if (!conn) { refuse("not_connected", `${c.manifest.displayName} is not connected`); continue; }
    if (!selection) { refuse("not_connected", `no ad account is selected for ${c.manifest.displayName} (PUT its selection)`); continue; }
    if (!caps.levels.includes(req.level)) { refuse("unsupported", `${c.manifest.displayName} reports ${caps.levels.join(", ")}, not ${req.level}`); continue; }
    if (!caps.granularities.includes(req.granularity)) { refuse("unsupported", `${c.manifest.displayName} reports ${caps.granularities.join(", ")}, not ${req.granularity}`); continue; }
    if (days(req.from, req.to) > caps.maxRangeDays) { refuse("unsupported", `${c.manifest.displayName} reports at most ${caps.maxRangeDays} days at once`); continue; }
    if (days(req.from, now.toISOString().slice(0, 10)) > caps.maxLookbackDays) { refuse("unsupported", `${c.manifest.displayName} reports at most ${caps.maxLookbackDays} days back`); continue; }
    const adGroupIds = changed ? changed.get(id) ?? [] : undefined;
    if (adGroupIds && !adGroupIds.length) { outcome.status = "ok"; sources.push({ provider: id, accountId: accountIdOf ?? "", client: null, query: null, outcome }); continue; }
    let accessToken: string;
    try {
      accessToken = await deps.connections.accessToken(conn);
    } catch (err) {
      refuse(err instanceof ProviderError ? err.kind : "unavailable", `${c.manifest.displayName}: ${(err as Error).message}`);
      continue;
    }
    const ctx = { baseUrl: baseUrlOf(c.manifest, deps.config.PROVIDER_ENV), accessToken, env: deps.config.PROVIDER_ENV };
    if (!accountIdOf) {
      // A selection without account_id reports on the connection's only ad account, as its plans do.
      try {
        accountIdOf = outcome.account_id = await resolveAdAccount(c.client(ctx), undefined);
      } catch (err) {
        refuse(err instanceof AdAccountChoiceError ? "ad_account_required" : err instanceof ProviderError ? err.kind : "unavailable", `${c.manifest.displayName}: ${(err as Error).message}`);
        continue;
      }
    }
    const client = c.reporting.client(ctx);
    outcome.status = "not_reached";
    sources.push({ provider: id, accountId: accountIdOf, client, outcome, query: { accountId: accountIdOf, level: req.level, from: req.from, to: req.to, granularity: req.granularity, ...(adGroupIds ? { adGroupIds } : {}) } });
  }
  return sources;
}

/** Sources that will be read (the others already carry their outcome). */
export const readable = (s: ReportSource): s is ReportSource & { client: ReportingClient; query: ReportQuery } => s.client !== null && s.query !== null;
