import { finishRun, readTargets, reconcile, refreshApprovalCard, type StoredResult } from "@trendgate/ads";
import type { ChangeResult, EntityTargeting, TargetingChange } from "@trendgate/connector-ads";
import { baseUrlOf, ProviderError } from "@trendgate/connector-core";
import { QUEUES, type AdsApplyPayload } from "@trendgate/contracts";
import { failApplyingPlan, findAdsPlanById, findConnectionById, markPlanRefused, recordPlanFinal, recordPlanProgress } from "@trendgate/db";
import { dispatchOutbox } from "@trendgate/queues";
import { outboxProcessor, type OutboxHandler } from "../outbox/index.ts";
import type { WorkerDeps } from "./types.ts";

// Ads applies on the shared outbox (QUEUES.adsApplies): one message per applied plan (dedup on
// the plan id, so a plan is applied by one run). The worker reads the targets again and reconciles them with the
// plan (@trendgate/ads reconcile): stale -> refused, nothing written; already applied -> done; otherwise it makes
// the changes that remain, with the calls the provider builds from the plan's changes and the targets as read (the
// stored calls, when nothing was applied before). Per-change results go on the plan (finishRun): applied,
// partially_applied or failed; refused changes are marked for review and open an operator item. A call that fails as a whole is thrown: the outbox
// retries it (transient) and the next attempt reconciles again, so a change is never written twice.

const FINAL = new Set(["applied", "partially_applied", "failed", "refused"]);

export function adsApplyHandler(deps: WorkerDeps): OutboxHandler<AdsApplyPayload> {
  const { db, config } = deps;
  return {
    async send(message) {
      const { plan_id } = message.payload;
      const plan = await findAdsPlanById(db, plan_id);
      if (!plan) throw new ProviderError("ads", "not_found", `plan ${plan_id} was deleted`);
      if (FINAL.has(plan.status)) return { plan_id, status: plan.status, skipped: "already final" };
      const connector = deps.registry.find("ads", plan.provider);
      if (!connector) throw new ProviderError(plan.provider, "bad_request", "this provider is no longer configured");
      const conn = await findConnectionById(db, plan.connectionId);
      if (!conn) throw new ProviderError(plan.provider, "bad_request", "the connection was removed before the plan was applied");
      const client = connector.client({ baseUrl: baseUrlOf(connector.manifest, config.PROVIDER_ENV), accessToken: await deps.connections.accessToken(conn), env: config.PROVIDER_ENV });

      const changes = plan.changes as unknown as TargetingChange[];
      const prior = plan.priorState as unknown as EntityTargeting[];
      const current = await readTargets(client, plan.adAccountId, prior.map((t) => ({ id: t.entity_id, field: t.field })));
      const r = reconcile(changes, prior, current);
      if (r.verdict === "stale") {
        await markPlanRefused(db, plan.id, `stale plan: ${r.reason}; preview again`);
        return { plan_id, status: "refused" };
      }
      const earlier = (plan.results as unknown as StoredResult[] | null) ?? [];
      const foundApplied = (done: TargetingChange[]): StoredResult[] => done
        .filter((c) => !earlier.some((e) => e.change_id === c.id && e.ok))
        .map((c) => ({ change_id: c.id, ok: true, error: null, request_id: null, resource: null, note: "found applied when the apply resumed" }));
      if (r.verdict === "already_applied") { // every change is at the provider (an earlier attempt wrote the rest)
        const stored = [...earlier.filter((e) => e.ok), ...foundApplied(changes)];
        await recordPlanFinal(db, plan.id, { status: "applied", statusReason: null, results: stored, appliedAt: plan.appliedAt ?? new Date() });
        return { plan_id, status: "applied" };
      }
      const results: ChangeResult[] = await client.run(plan.adAccountId, client.calls(plan.adAccountId, r.remaining, current), { dryRun: false });
      const stored: StoredResult[] = [
        ...earlier.filter((e) => !results.some((x) => x.change_id === e.change_id)),
        ...foundApplied(changes.filter((c) => !r.remaining.includes(c) && !earlier.some((e) => e.change_id === c.id))),
        ...results.map((x) => ({ change_id: x.change_id, ok: x.ok, error: x.error?.message ?? null, request_id: x.request_id ?? null, resource: x.resource ?? null, review: (!x.ok && !x.error?.retryable) || undefined })),
      ];
      // A change that failed for a transient reason (a throttle after part of the run was written) is tried again by
      // the outbox's next attempt, which reconciles first: the run is retried, not recorded as final.
      const transient = results.find((x) => !x.ok && x.error?.retryable);
      if (transient?.error) {
        await recordPlanProgress(db, plan.id, stored, "retrying after a transient provider error");
        throw transient.error;
      }
      const done = await db.$transaction((tx) => finishRun(tx, deps, { plan, providerName: connector.manifest.displayName, results: stored, publicBaseUrl: config.PUBLIC_BASE_URL }));
      await dispatchOutbox(deps.queues, done.outbox);
      return { plan_id, status: done.status, changes: changes.length, applied: stored.filter((x) => x.ok).length };
    },
    async onFinal(message, outcome, error) {
      const { plan_id } = message.payload;
      if (outcome === "failed") await failApplyingPlan(db, plan_id, error?.message ?? message.lastError ?? "apply failed");
      // A plan approved from a chat card: the card now says how its run ended.
      await dispatchOutbox(deps.queues, await refreshApprovalCard(db, { id: plan_id, accountId: message.accountId }));
    },
  };
}

export const adsApplies = outboxProcessor(QUEUES.adsApplies, adsApplyHandler);
