import type { AdsExecutorPlanDocument, AdsExecutorStepResult, FieldError } from "@trendgate/contracts";
import { findAdsPlanById, lockAdsPlan, markPlanRefused, type AdsPlanRow, type OutboxRow, type Tx } from "@trendgate/db";
import type { OperatorDeps } from "@trendgate/operator";
import { AdsPlanError } from "./errors.ts";
import { finishRun, type StoredResult } from "./run-record.ts";

// A caller's executor reports what it did with an executor plan, once: the results are recorded like our own runs
// (finishRun: the same statuses, review marks and operator item), or the plan ends refused when a precondition did
// not hold and nothing was written.

/** The first thing wrong with a report's steps for the signed document (a step it lacks, twice, or a foreign change). */
export function executorReportProblem(doc: AdsExecutorPlanDocument, steps: AdsExecutorStepResult[]): FieldError | null {
  const bad = (path: string, message: string): FieldError => ({ location: "body", path, message, code: "invalid_value" });
  const seqs = new Set(doc.steps.map((s) => s.seq));
  const seen = new Set<number>();
  for (const [i, s] of steps.entries()) {
    if (!seqs.has(s.seq)) return bad(`steps.${i}.seq`, `the plan has no step ${s.seq}`);
    if (seen.has(s.seq)) return bad(`steps.${i}.seq`, `step ${s.seq} is reported twice`);
    seen.add(s.seq);
    for (const [j, ch] of (s.changes ?? []).entries())
      if (!doc.steps.find((x) => x.seq === s.seq)!.change_ids.includes(ch.change_id)) return bad(`steps.${i}.changes.${j}.change_id`, `not a change of step ${s.seq}`);
  }
  const missing = [...seqs].filter((s) => !seen.has(s));
  return missing.length ? bad("steps", `steps ${missing.join(", ")} are not reported (report skipped steps as skipped)`) : null;
}

export interface ExecutorReport {
  accountId: string;
  /** The plan the verified token names (its jti). */
  planId: string;
  doc: AdsExecutorPlanDocument;
  steps: AdsExecutorStepResult[];
  providerName(provider: string): string;
  publicBaseUrl: string;
}

/** Records the report on the issued plan in the caller's transaction; dispatch `outbox` after the commit. */
export async function recordExecutorResults(tx: Tx, deps: OperatorDeps, r: ExecutorReport): Promise<{ plan: AdsPlanRow; outbox: OutboxRow[] }> {
  const p = await lockAdsPlan(tx, { id: r.planId, accountId: r.accountId });
  if (!p) throw new AdsPlanError("not_found", "Plan not found");
  if (p.status !== "issued") throw new AdsPlanError("conflict", `This plan is ${p.status}: results are accepted once, for a plan issued to an executor`);
  const stale = r.steps.filter((s) => s.precondition_held === false);
  const wrote = r.steps.some((s) => s.status === "succeeded" || (s.changes ?? []).some((x) => x.ok));
  let outbox: OutboxRow[] = [];
  if (stale.length && !wrote) {
    await markPlanRefused(tx, p.id, `stale plan: the executor found the targets of step ${stale.map((s) => s.seq).join(", ")} changed since the preview; preview again`, new Date());
  } else {
    const results: StoredResult[] = r.steps.flatMap((s) => r.doc.steps.find((x) => x.seq === s.seq)!.change_ids.map((id): StoredResult => {
      const one = s.changes?.find((x) => x.change_id === id);
      const ok = one ? one.ok : s.status === "succeeded";
      const error = ok ? null : one?.error ?? s.error ?? (s.status === "skipped" ? `step ${s.seq} skipped by the executor` : `step ${s.seq} failed (HTTP ${s.http_status ?? "?"})`);
      return { change_id: id, ok, error, request_id: s.request_id ?? null, resource: one?.resource ?? null, note: "reported by the caller's executor", ...(ok ? {} : { review: true }) };
    }));
    outbox = (await finishRun(tx, deps, { plan: p, providerName: r.providerName(p.provider), results, publicBaseUrl: r.publicBaseUrl })).outbox;
  }
  return { plan: (await findAdsPlanById(tx, p.id))!, outbox };
}
