import { bindPush, pushBody, pushHeaders, type WorkflowClient, type WorkflowCredentials } from "@trendgate/connector-workflow";
import { ProviderError, providerRequest } from "@trendgate/connector-core";
import { QUEUES, type TrendEvent, type WorkflowPushPayload, type WorkflowSelection } from "@trendgate/contracts";
import { addOutboxMessages, clearDeliveryFailure, findConnectionById, noteDeliveryFailure, recordAccountEvents, type Db, type NewOutboxMessage, type OutboxRow } from "@trendgate/db";
import type { ConnectorRegistry } from "@trendgate/connectors";
import { outboxProcessor, type OutboxHandler } from "../outbox/index.ts";
import { TtlCache } from "../ttl-cache.ts";
import type { WorkerDeps } from "./types.ts";

// Workflow pushes on the shared outbox (QUEUES.workflowPushes): each message is sent to the trigger URL of the
// workflow it was made for (see WorkflowPushPayload) with our event id in X-Trendgate-Event-Id. The connector says
// what an answer means (ProviderError): retried (an outage, n8n starting up, 429), failed (inactive: not_found;
// refused), or `unknown` when the workflow may have run (mayHaveActed: never resent blindly; the user replays it).
// Before a not_found fails for good, the workflow is read again from the provider's API: a changed webhook path is
// followed (and saved in the selection); when it cannot be read, the failure names that cause. A 2xx is `succeeded`
// with `confirmation: "pending"` in its result when the provider keeps a record of runs (findRuns): the confirmation
// pass (workflow-confirmations.ts) settles it from there. The selection's push_auth goes only to the selected
// workflow. The outbox records every attempt; GET …/workflow/executions lists them. A
// push that fails for good shows on the connection (last_error, since last_error_at) and the first failure of a
// run raises the account event `connector.delivery_failing`; a success clears it.

/** A selection or key changed through the API applies to pushes sent this long after (one read per connection per second). */
const CONNECTION_CACHE_MS = 1000;

/** The stored selection as the worker reads it: any field may be missing on a row saved by an older version. */
type Selection = Partial<WorkflowSelection>;
type Target = { workflowId: string | null; url: string; method?: string; overridden: boolean; selected: boolean };

/** Where a push goes: its own workflow; that workflow's current URL while it is still the selected one. */
function targetOf(p: WorkflowPushPayload, sel: Selection | null): Target | null {
  const selected = Boolean(sel?.push_url) && (!p.workflow_id || sel!.workflow_id === p.workflow_id);
  if (selected) return { workflowId: sel!.workflow_id ?? null, url: sel!.push_url!, method: sel!.push_method, overridden: sel!.push_url_overridden === true, selected };
  if (p.workflow_id && p.push_url) return { workflowId: p.workflow_id, url: p.push_url, method: p.push_method, overridden: p.push_url_overridden === true, selected };
  return null;
}

const failed = (provider: string, why: string) => new ProviderError(provider, "bad_request", why);

/**
 * A push's not-found (no active webhook at its URL) when the workflow could not be read again to follow a changed
 * path: that read's failure is the real cause (a revoked key, the API down), so it names it and takes its kind.
 */
function unreadable(notFound: ProviderError, read: ProviderError): ProviderError {
  const why = read.message.startsWith(`${read.provider}: `) ? read.message.slice(read.provider.length + 2) : read.message;
  return new ProviderError(read.provider, read.kind,
    `the webhook answered ${notFound.detail.status ?? 404} (no active webhook at this URL) and the workflow could not be read again to follow a changed webhook path: ${why}` +
    (read.kind === "unauthorized" ? "; connect again with a valid API key (POST /api/integrations/workflow/connect), then replay the push" : ""),
    { ...read.detail, status: notFound.detail.status ?? null });
}

/** A workflow connection as the workers use it: its selection, sealed credentials opened, and a client. */
export async function openWorkflowConnection(deps: WorkerDeps, id: string) {
  const conn = await findConnectionById(deps.db, id);
  if (!conn) return null;
  const connector = deps.registry.single("workflow");
  const base = String((conn.externalAccount as Record<string, unknown>).api_base_url ?? "");
  const creds = JSON.parse(deps.secrets.open(conn.credentialsSealed)) as WorkflowCredentials;
  return {
    id: conn.id,
    connector,
    selection: conn.selection as Selection | null,
    creds,
    client: connector.client({ baseUrl: base, apiKey: creds.api_key, request: providerRequest(deps.config.PROVIDER_ENV) }),
    includeMetadata: (conn.settings as Record<string, unknown> | null)?.include_metadata === true,
  };
}

export function workflowPushHandler(deps: WorkerDeps): OutboxHandler<WorkflowPushPayload> {
  const { db, logger } = deps;
  const connections = new TtlCache<Awaited<ReturnType<typeof openWorkflowConnection>>>(CONNECTION_CACHE_MS);
  const openConnection = (id: string) => openWorkflowConnection(deps, id);

  /**
   * The workflow's current trigger URL when it differs from `target`'s (its webhook path changed), read from the
   * provider's API; saved in the selection when it is the selected workflow. Null when the workflow is gone or
   * inactive, or nothing changed; throws `unreadable(notFound, …)` when it cannot be read (the key refused, the API
   * down).
   */
  async function movedTrigger(connectionId: string, client: WorkflowClient, target: Target, notFound: ProviderError): Promise<string | null> {
    if (!target.workflowId || target.overridden) return null;
    const wf = await client.getWorkflow(target.workflowId).catch((err) => {
      logger.info({ connection_id: connectionId, err: String(err) }, "workflow not re-read after a not-found push");
      if (err instanceof ProviderError && err.kind !== "not_found") throw unreadable(notFound, err);
      return null;
    });
    if (!wf?.active || !wf.trigger || wf.trigger.url === target.url) return null;
    if (target.selected) {
      await db.$executeRaw`UPDATE connections SET selection = jsonb_set(jsonb_set(selection, '{push_url}', to_jsonb(${wf.trigger.url}::text)), '{push_method}', to_jsonb(${wf.trigger.method}::text))
        WHERE id = ${connectionId} AND selection->>'workflow_id' = ${target.workflowId} AND selection->>'push_url' = ${target.url}`;
      connections.delete(connectionId);
    }
    return wf.trigger.url;
  }

  return {
    async send(message, ctx) {
      const provider = deps.registry.single("workflow").manifest.id;
      const payload = message.payload;
      const conn = message.connectionId ? await connections.get(message.connectionId, () => openConnection(message.connectionId!)) : null;
      if (!conn) throw failed(provider, "the workflow connection was removed before the push was sent");
      const target = targetOf(payload, conn.selection);
      if (!target) throw failed(provider, "no workflow selected: PUT /api/integrations/workflow/selection first");
      const sentAt = new Date();
      const body = pushBody(payload, { includeMetadata: conn.includeMetadata, accountId: message.accountId, sentAt });
      // The credential is the selected workflow's: a push still bound to another one does not carry it there.
      const headers = pushHeaders(target.selected ? conn.creds : { ...conn.creds, push_auth: null }, payload.event_id, body, sentAt);
      let url = target.url;
      let r;
      try {
        r = await conn.client.push(url, body, headers, target.method);
      } catch (err) {
        const moved = err instanceof ProviderError && err.kind === "not_found" ? await movedTrigger(conn.id, conn.client, target, err) : null;
        if (!moved) {
          if (err instanceof ProviderError && !err.retryable) logger.info({ message_id: message.id, err: err.message }, "workflow push refused");
          throw err;
        }
        logger.info({ message_id: message.id, from: url, to: moved }, "the workflow's webhook moved; pushing to its current URL");
        url = moved;
        r = await conn.client.push(url, body, headers, target.method);
      }
      ctx.responded(r.status);
      // A 2xx says the trigger took it, not that it ran: confirmed later from the provider's record of runs.
      const confirm = target.workflowId && conn.client.findRuns ? { confirmation: "pending", resends: Number((message.result as { resends?: unknown } | null)?.resends ?? 0) } : {};
      return { status: r.status, workflow_id: target.workflowId, ...(url !== target.url ? { push_url: url } : {}), ...confirm };
    },

    /** Delivery health on the connection, and one account event when pushes start failing. */
    async onFinal(message, outcome, error) {
      if (!message.connectionId) return;
      if (outcome === "succeeded") return clearDeliveryFailure(db, message.connectionId);
      const why = error?.message ?? message.lastError ?? outcome;
      if (!(await noteDeliveryFailure(db, message.connectionId, why))) return;
      const p = message.payload;
      await recordAccountEvents(db, [{
        accountId: message.accountId, type: "connector.delivery_failing",
        data: {
          connection_id: message.connectionId, provider: deps.registry.single("workflow").manifest.id, message_id: message.id,
          event_id: p.event_id, workflow_id: p.workflow_id ?? null, outcome, error: why,
        },
      }]);
    },
  };
}

export const workflowPushes = outboxProcessor(QUEUES.workflowPushes, workflowPushHandler);

/**
 * Trend events for the accounts whose selected workflow takes them automatically (selection `auto_push`, default
 * on): one outbox message per event and account (dedup_key = the event id, so a re-processed batch adds nothing).
 * Returns the rows to dispatch after this commits. `targets`: the accounts' workflowTargets when the caller has them
 * (the fan-out caches them); else read here.
 */
export async function queueTrendEventPushes(db: Db, registry: ConnectorRegistry, events: TrendEvent[], targets?: Map<string, WorkflowTarget>): Promise<OutboxRow[]> {
  if (!events.length) return [];
  targets ??= await workflowTargets(db, registry, events.map((e) => e.account_id));
  const msgs: NewOutboxMessage[] = [];
  for (const e of events) {
    const c = targets.get(e.account_id);
    const sel = c?.selection;
    if (!c || !sel?.push_url || sel.auto_push === false) continue;
    const payload: WorkflowPushPayload = {
      event_id: e.id, event: sel.default_event || "trend_lifecycle", data: e as unknown as Record<string, unknown>, trend_id: e.trend_id, source: "trend_event",
      ...bindPush(sel),
    };
    msgs.push({ queue: QUEUES.workflowPushes, accountId: e.account_id, connectionId: c.id, subjectId: e.trend_id, dedupKey: e.id, payload });
  }
  if (!msgs.length) return []; // the common case: no auto-pushing workflow; an empty transaction still costs two round trips
  return db.$transaction((tx) => addOutboxMessages(tx, msgs));
}

/** An account's workflow connection, as far as routing trend events to it goes. */
export type WorkflowTarget = { id: string; selection: Selection | null };

/**
 * The workflow connections of these accounts, by account, whatever their status: pushing to a webhook needs no API
 * key, so a connection waiting for re-authorization (its key refused on a listing) still receives trend pushes.
 */
export async function workflowTargets(db: Db, registry: ConnectorRegistry, accountIds: string[]): Promise<Map<string, WorkflowTarget>> {
  const [connector] = registry.ofKind("workflow"); // none in a registry without a workflow provider (test fixtures)
  if (!connector || !accountIds.length) return new Map();
  const conns = await db.connection.findMany({
    where: { provider: connector.manifest.id, accountId: { in: [...new Set(accountIds)] } },
    select: { id: true, accountId: true, selection: true },
  });
  return new Map(conns.map((c) => [c.accountId, { id: c.id, selection: c.selection as Selection | null }]));
}
