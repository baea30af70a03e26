import type { AdsClient, AdsConnector, EntityTargeting, TargetingChange } from "@trendgate/connector-ads";
import { createPreviewedPlan, findAccountPlan, findLiveRollback, type AdsPlanRow, type Db } from "@trendgate/db";
import { dryRunOf } from "./dry-run.ts";
import { AdsPlanError } from "./errors.ts";
import { entityLabel, hashablePrior, type DiffRow } from "./plan.ts";
import { stateHash } from "./plan-hash.ts";
import { readTargets } from "./read-targets.ts";

// A rollback is a new plan (rollback_of the applied one) that undoes what the applied plan changed, from the targets
// as they are now: each item it added that is still there is removed, each it removed is added back. It is applied
// like any plan (the same stale check, the same once-only apply).

export interface RollbackRequest {
  accountId: string;
  connector: AdsConnector;
  planId: string;
  /** The connection to read and dry-run with, opened once the plan is known to be rollbackable. */
  connect(): Promise<{ connectionId: string; client: AdsClient }>;
  /** ADS_PLAN_TTL_SECONDS */
  planTtlSeconds: number;
}

/** The inverse of each change the applied plan made (by its results) that is not already undone in `now`. */
export function rollbackChanges(applied: TargetingChange[], results: { change_id: string; ok: boolean }[], now: EntityTargeting[]): TargetingChange[] {
  const ok = new Map(results.map((r) => [r.change_id, r.ok]));
  const items = new Map(now.map((t) => [`${t.entity_id}|${t.field}`, new Map(t.items.map((i) => [i.key, i]))]));
  return applied.filter((ch) => ok.get(ch.id)).flatMap((ch, i): TargetingChange[] => {
    const present = items.get(`${ch.entity_id}|${ch.field}`)?.get(ch.item.key);
    if (ch.op === "add" && present) return [{ ...ch, id: `rb_${i + 1}`, op: "remove", item: present }]; // its resource as read now
    if (ch.op === "remove" && !present) return [{ ...ch, id: `rb_${i + 1}`, op: "add" }];
    return []; // already undone (by someone, or the provider)
  });
}

/** Per entity and field: the targets now, and after the rollback's changes; `names` as the applied plan showed them. */
export function rollbackDiff(now: EntityTargeting[], changes: TargetingChange[], names: ReadonlyMap<string, string> = new Map()): DiffRow[] {
  return now.map((t) => {
    const mine = changes.filter((x) => x.entity_id === t.entity_id && x.field === t.field);
    const removed = new Set(mine.filter((x) => x.op === "remove").map((x) => x.item.key));
    const name = names.get(t.entity_id) ?? null;
    return {
      entity_id: t.entity_id, entity_name: name, field: t.field, before: t.items.map((x) => x.text),
      after: [...t.items.filter((x) => !removed.has(x.key)).map((x) => x.text), ...mine.filter((x) => x.op === "add").map((x) => x.item.text)],
      changes: mine.map((x) => ({ change_id: x.id, op: x.op, item: x.item.text, trend: null })),
      empty_reason: mine.length ? null : "nothing_to_undo",
      empty_detail: mine.length ? null : `${entityLabel({ id: t.entity_id, name })}: nothing the applied plan changed is left to undo`,
    };
  });
}

/** The entity names an applied plan's diff showed, so its rollback shows the same. */
const namesOf = (diff: unknown) =>
  new Map((diff as Partial<DiffRow>[]).flatMap((d) => (d.entity_id && d.entity_name ? [[d.entity_id, d.entity_name] as const] : [])));

/**
 * Previews and stores the rollback of an applied plan; AdsPlanError `not_found` (no such plan of the account at this
 * provider) or `conflict` (not applied, or a rollback of it is already previewed or applied).
 */
export async function previewRollback(deps: { db: Db }, q: RollbackRequest): Promise<AdsPlanRow> {
  const applied = await findAccountPlan(deps.db, { id: q.planId, accountId: q.accountId, provider: q.connector.manifest.id });
  if (!applied) throw new AdsPlanError("not_found", "Plan not found");
  if (applied.status !== "applied" && applied.status !== "partially_applied") throw new AdsPlanError("conflict", `This plan is ${applied.status}: only an applied plan can be rolled back`);
  const open = await findLiveRollback(deps.db, applied.id);
  if (open) throw new AdsPlanError("conflict", `Rollback plan ${open.id} of this plan is ${open.status}: a plan is rolled back once`);

  const { connectionId, client } = await q.connect();
  const adAccountId = applied.adAccountId;
  const then = applied.priorState as unknown as EntityTargeting[];
  const now = await readTargets(client, adAccountId, then.map((t) => ({ id: t.entity_id, field: t.field })));
  const changes = rollbackChanges(applied.changes as unknown as TargetingChange[], (applied.results as { change_id: string; ok: boolean }[] | null) ?? [], now);
  const calls = client.calls(adAccountId, changes, now);
  const dry = await dryRunOf(client, q.connector.capabilities.dryRun, adAccountId, calls);
  return createPreviewedPlan(deps.db, {
    accountId: q.accountId, provider: applied.provider, connectionId, adAccountId, category: applied.category, strictSafety: applied.strictSafety,
    changes, calls, diff: rollbackDiff(now, changes, namesOf(applied.diff)), refused: [], dryRun: dry, priorState: now,
    priorStateHash: stateHash(hashablePrior(now)), rollbackOf: applied.id,
  }, q.planTtlSeconds);
}
