import { ProviderError } from "@trendgate/connector-core";
import { QUEUES } from "@trendgate/contracts";
import { resendUnconfirmedOutboxMessages, settleOutboxConfirmations, unconfirmedOutboxMessages, type UnconfirmedMessage } from "@trendgate/db";
import { dispatchOutbox } from "@trendgate/queues";
import type { ProcessorFactory, WorkerDeps } from "./types.ts";
import { openWorkflowConnection } from "./workflow-pushes.ts";

// Workflow pushes are confirmed, not assumed. A trigger's 2xx only says it took the request: n8n answers 200 while its
// migrations run and runs nothing, and loses runs it took when it is killed or stops. So a push it took waits with
// `confirmation: "pending"` on its result, and this pass (a job scheduler, one per WORKFLOW_CONFIRM_INTERVAL_SECONDS
// for the fleet) reads each workflow's own record of runs (WorkflowClient.findRuns) for the pushes taken at least
// WORKFLOW_CONFIRM_AFTER_SECONDS ago: one found is `confirmed`; one not found once WORKFLOW_CONFIRM_WITHIN_SECONDS
// have passed is sent again, once, under the same event id (the workflow drops a repeat by it, docs/connectors.md),
// and after that is `unconfirmed` (delivered; its run never seen, e.g. the workflow saves no successful runs). While
// the record cannot be read (the key revoked, n8n down) nothing is resent; after UNREADABLE_BOUNDS bounds the push
// is `unconfirmed` with the reason.

/** Pushes sent again at most, for want of a confirmation. */
const MAX_RESENDS = 1;
/** Bounds (WORKFLOW_CONFIRM_WITHIN_SECONDS) a push waits for a readable record before it is given up as unconfirmed. */
const UNREADABLE_BOUNDS = 3;
/** Pushes looked at per pass (the oldest first); the rest wait for the next pass. */
const PASS_LIMIT = 5000;
/** A pass stops starting workflows after this long; the next pass goes on. */
const PASS_BUDGET_MS = 60_000;

export interface ConfirmationPass { confirmed: number; resent: number; unconfirmed: number; unreadable: number }

export async function confirmWorkflowPushes(deps: WorkerDeps, opts: { now?: Date; stopped?: () => boolean } = {}): Promise<ConfirmationPass> {
  const { config, db, logger } = deps;
  const now = opts.now ?? new Date();
  const out: ConfirmationPass = { confirmed: 0, resent: 0, unconfirmed: 0, unreadable: 0 };
  if (!deps.registry.ofKind("workflow").length) return out;
  const withinMs = config.WORKFLOW_CONFIRM_WITHIN_SECONDS * 1000;
  const due = await unconfirmedOutboxMessages(db, {
    queue: QUEUES.workflowPushes, completedBefore: new Date(now.getTime() - config.WORKFLOW_CONFIRM_AFTER_SECONDS * 1000), limit: PASS_LIMIT,
  });
  const groups = new Map<string, UnconfirmedMessage[]>();
  for (const m of due) {
    const key = `${m.connectionId}\u0000${m.target}`;
    (groups.get(key) ?? groups.set(key, []).get(key)!).push(m);
  }
  const settle = async (ms: UnconfirmedMessage[], detail: Record<string, unknown>) => {
    out.unconfirmed += await settleOutboxConfirmations(db, ms.map((m) => ({ id: m.id, confirmation: "unconfirmed" as const, detail })));
  };
  const started = Date.now();
  for (const ms of groups.values()) {
    if (opts.stopped?.() || Date.now() - started > PASS_BUDGET_MS) break;
    const { connectionId, target: workflowId } = ms[0];
    const conn = connectionId ? await openWorkflowConnection(deps, connectionId) : null;
    if (!conn || !workflowId || !conn.client.findRuns) {
      await settle(ms, { confirmation_error: conn ? "the provider keeps no record of runs to confirm from" : "the connection was removed" });
      continue;
    }
    const overdue = (m: UnconfirmedMessage, bounds = 1) => now.getTime() - m.completedAt.getTime() >= bounds * withinMs;
    const since = new Date(Math.min(...ms.map((m) => m.createdAt.getTime())));
    let runs;
    try {
      runs = await conn.client.findRuns(workflowId, new Set(ms.map((m) => m.eventId).filter((id): id is string => Boolean(id))), since);
    } catch (err) {
      out.unreadable += ms.length;
      const why = err instanceof ProviderError ? err.message : String(err);
      logger.info({ connection_id: connectionId, workflow_id: workflowId, pushes: ms.length, err: why }, "workflow runs not readable; pushes left unconfirmed for now");
      await settle(ms.filter((m) => overdue(m, UNREADABLE_BOUNDS)), { confirmation_error: `its runs could not be read: ${why}` });
      continue;
    }
    const confirmed = ms.filter((m) => m.eventId && runs.ran.has(m.eventId));
    out.confirmed += await settleOutboxConfirmations(db, confirmed.map((m) => ({
      id: m.id, confirmation: "confirmed" as const, detail: { confirmed_at: now.toISOString(), run_id: runs.ran.get(m.eventId!) },
    })));
    // Only what the record covered: a push older than the part read was not looked for.
    const missing = ms.filter((m) => !(m.eventId && runs.ran.has(m.eventId)) && overdue(m) && m.createdAt >= runs.checkedSince);
    const again = missing.filter((m) => m.resends < MAX_RESENDS);
    await settle(missing.filter((m) => m.resends >= MAX_RESENDS), { confirmation_error: `sent again ${MAX_RESENDS} time(s) and no run of it was found within ${config.WORKFLOW_CONFIRM_WITHIN_SECONDS} s` });
    const rows = await resendUnconfirmedOutboxMessages(db, again.map((m) => m.id));
    out.resent += rows.length;
    if (rows.length) {
      logger.warn({ connection_id: connectionId, workflow_id: workflowId, pushes: rows.length }, "workflow pushes taken but never run; sending them again under the same event ids");
      await dispatchOutbox(deps.queues, rows).catch((err) =>
        logger.warn({ err: String(err), messages: rows.length }, "resent pushes not queued; the sweeper will queue them"));
    }
  }
  return out;
}

/** The confirmation pass as a job scheduler's queue (one pass per tick for the fleet). */
export const workflowConfirmations: ProcessorFactory = {
  queue: QUEUES.workflowConfirmations,
  create(deps) {
    let stopped = false;
    return {
      concurrency: 1,
      process: () => confirmWorkflowPushes(deps, { stopped: () => stopped }),
      stopping() { stopped = true; },
    };
  },
};
