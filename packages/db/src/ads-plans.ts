import type { Db, Tx } from "./client.ts";
import { Prisma, type AdsPlan } from "./generated/client.ts";
import { newId } from "./ids.ts";

// Ads plans: a preview stores one (previewed, expiring); an apply or an executor claims it under a row lock, so a
// plan runs once; the run's progress and final results are recorded on it. Every read and write of ads_plans is here.

export type AdsPlanRow = AdsPlan;

/** A computed plan as the preview (or a rollback preview) stores it. */
export interface NewAdsPlan {
  accountId: string;
  provider: string;
  connectionId: string;
  adAccountId: string;
  category: string;
  strictSafety: boolean;
  changes: unknown[];
  calls: unknown[];
  diff: unknown[];
  refused: unknown[];
  dryRun: unknown;
  priorState: unknown[];
  priorStateHash: string;
  rollbackOf?: string;
}

const json = (v: unknown) => v as Prisma.InputJsonValue;

/** Stores a previewed plan that expires `ttlSeconds` from now. */
export function createPreviewedPlan(db: Db | Tx, plan: NewAdsPlan, ttlSeconds: number): Promise<AdsPlanRow> {
  const now = new Date();
  return db.adsPlan.create({
    data: {
      ...plan, changes: json(plan.changes), calls: json(plan.calls), diff: json(plan.diff), refused: json(plan.refused), dryRun: json(plan.dryRun),
      priorState: json(plan.priorState), id: newId("pln"), status: "previewed", createdAt: now, expiresAt: new Date(now.getTime() + ttlSeconds * 1000),
    },
  });
}

export const findAdsPlanById = (db: Db | Tx, id: string) => db.adsPlan.findUnique({ where: { id } });

/** One of the account's plans for one provider. */
export const findAccountPlan = (db: Db | Tx, q: { id: string; accountId: string; provider: string }) =>
  db.adsPlan.findFirst({ where: { id: q.id, accountId: q.accountId, provider: q.provider } });

/** A rollback of the plan that is previewed, being applied or applied: a plan is rolled back once. */
export const findLiveRollback = (db: Db | Tx, planId: string) =>
  db.adsPlan.findFirst({ where: { rollbackOf: planId, status: { in: ["previewed", "applying", "applied", "partially_applied"] } } });

/** The account's runs at one provider (plans with a run id), newest first, from just before `beforeRunId`. */
export const listAdsRuns = (db: Db | Tx, q: { accountId: string; provider: string; status?: string; beforeRunId?: string; take: number }) =>
  db.adsPlan.findMany({
    where: { accountId: q.accountId, provider: q.provider, runId: q.beforeRunId ? { lt: q.beforeRunId } : { not: null }, ...(q.status ? { status: q.status } : {}) },
    orderBy: { runId: "desc" }, take: q.take,
  });

/**
 * Locks the account's plan for the rest of the transaction (SELECT ... FOR UPDATE) and returns it as it is now:
 * whoever holds the lock decides whether the plan may start a run, so two applies (or an apply and an executor)
 * cannot both start one. `provider` narrows it to one provider's plans.
 */
export async function lockAdsPlan(tx: Tx, q: { id: string; accountId: string; provider?: string }): Promise<AdsPlanRow | null> {
  const byProvider = q.provider === undefined ? Prisma.empty : Prisma.sql`AND provider = ${q.provider}`;
  const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM ads_plans WHERE id = ${q.id} AND account_id = ${q.accountId} ${byProvider} FOR UPDATE`;
  return locked.length ? tx.adsPlan.findUnique({ where: { id: q.id } }) : null;
}

/** The plan's run is queued (our apply). */
/** Who approved the plan from an operator card. */
export const setPlanApprover = (tx: Tx, id: string, approver: string) => tx.adsPlan.update({ where: { id }, data: { approvedBy: approver } });
export const markPlanApplying = (tx: Tx, id: string, runId: string) => tx.adsPlan.update({ where: { id }, data: { status: "applying", runId } });

/** The plan was issued to a caller's executor, whose results are expected until `executorExpiresAt` (and its report window). */
export const markPlanIssued = (tx: Tx, id: string, q: { runId: string; executorExpiresAt: Date; statusReason: string }) =>
  tx.adsPlan.update({ where: { id }, data: { status: "issued", ...q } });

/** Nothing was written: the targets changed since the preview. `appliedAt`: when the run ended, where it ended with a report. */
export const markPlanRefused = (db: Db | Tx, id: string, statusReason: string, appliedAt?: Date) =>
  db.adsPlan.update({ where: { id }, data: { status: "refused", statusReason, ...(appliedAt ? { appliedAt } : {}) } });

/** Results so far of a run that goes on (retried after a transient provider error). */
export const recordPlanProgress = (db: Db | Tx, id: string, results: unknown[], statusReason: string) =>
  db.adsPlan.update({ where: { id }, data: { results: json(results), statusReason } });

/** The run's end: its status, per-change results and when it ended. */
export const recordPlanFinal = (db: Db | Tx, id: string, f: { status: string; statusReason: string | null; results: unknown[]; appliedAt: Date }) =>
  db.adsPlan.update({ where: { id }, data: { status: f.status, statusReason: f.statusReason, results: json(f.results), appliedAt: f.appliedAt } });

/** An apply the outbox gave up on ends failed (unless it reached an end of its own first). */
export const failApplyingPlan = (db: Db | Tx, id: string, statusReason: string) =>
  db.adsPlan.updateMany({ where: { id, status: "applying" }, data: { status: "failed", statusReason } });

/** The account's applied plans (or the one `planId`), with what each changed and how it went: what reports filter on. */
export const appliedPlanChanges = (db: Db | Tx, accountId: string, planId?: string) =>
  db.adsPlan.findMany({
    where: { accountId, status: { in: ["applied", "partially_applied"] }, ...(planId ? { id: planId } : {}) },
    select: { provider: true, changes: true, results: true },
  });

/**
 * Targeting in force from plans applied since `since`: per provider and category, the latest applied plan's time,
 * unless that latest one was a rollback (which undid what was applied).
 */
export async function appliedTargetingSince(db: Db, accountId: string, since: Date): Promise<{ provider: string; category: string; appliedAt: Date }[]> {
  const rows = await db.adsPlan.findMany({
    where: { accountId, status: { in: ["applied", "partially_applied"] }, appliedAt: { gte: since } },
    orderBy: { appliedAt: "asc" }, select: { provider: true, category: true, appliedAt: true, rollbackOf: true },
  });
  const latest = new Map(rows.map((r) => [`${r.provider}\u0000${r.category}`, r]));
  return [...latest.values()].filter((r) => r.rollbackOf === null).map((r) => ({ provider: r.provider, category: r.category, appliedAt: r.appliedAt! }));
}
