import type { AdsExecutorPlanDocument } from "@trendgate/contracts";
import type { AdsClient, AdsConnector, EntityTargeting, ExecutorRequest, ProviderCall, TargetingChange } from "@trendgate/connector-ads";
import type { AdsPlanRow } from "@trendgate/db";
import { hashablePrior } from "./plan.ts";
import { stateHash } from "./plan-hash.ts";

// An executor plan's steps: a claimed plan's exact provider requests, without credentials, each with the
// precondition it assumes (the targets as read at preview, and their hash), its validate-only variant where the
// provider has a dry run, and the requests that undo it.

/** Stands for what the provider named a created item in the step's response (per-item providers' rollbacks). */
const resourceOf = (changeId: string) => `{{resource:${changeId}}}`;

/** Inverse changes, applied to the targets as the step leaves them: what undoes the step. */
function rollbackCalls(client: AdsClient, accountId: string, changes: TargetingChange[], prior: EntityTargeting[]): ProviderCall[] {
  const inverse = changes.map((c): TargetingChange => c.op === "add"
    ? { ...c, id: `undo_${c.id}`, op: "remove", item: { ...c.item, resource: c.item.resource ?? resourceOf(c.id) } }
    : { ...c, id: `undo_${c.id}`, op: "add" });
  const after = prior.map((t) => {
    const mine = changes.filter((c) => c.entity_id === t.entity_id && c.field === t.field);
    const removed = new Set(mine.filter((c) => c.op === "remove").map((c) => c.item.key));
    return { ...t, items: [...t.items.filter((i) => !removed.has(i.key)), ...mine.filter((c) => c.op === "add").map((c) => inverse.find((x) => x.id === `undo_${c.id}`)!.item)] };
  });
  return client.calls(accountId, inverse, after);
}

/**
 * The plan's steps for a caller's executor, or null when the provider's client cannot build executor requests.
 * `client` only builds requests (it needs no token).
 */
export function executorSteps(connector: AdsConnector, client: AdsClient, p: AdsPlanRow): AdsExecutorPlanDocument["steps"] | null {
  const request = client.executorRequest?.bind(client);
  if (!request) return null;
  const changes = p.changes as unknown as TargetingChange[];
  const prior = p.priorState as unknown as EntityTargeting[];
  return (p.calls as unknown as ProviderCall[]).map((call, i) => {
    const mine = changes.filter((x) => call.change_ids.includes(x.id));
    const targets = prior.filter((t) => mine.some((x) => x.entity_id === t.entity_id && x.field === t.field));
    return {
      seq: i + 1, change_ids: call.change_ids,
      request: request(call, { dryRun: false }),
      dry_run: connector.capabilities.dryRun ? request(call, { dryRun: true }) : null,
      precondition: { targets: targets.map(({ entity_id, field, items }) => ({ entity_id, field, items })), state_hash: stateHash(hashablePrior(targets)) },
      rollback: rollbackCalls(client, p.adAccountId, mine, targets).map((r): ExecutorRequest => request(r, { dryRun: false })),
    };
  });
}
