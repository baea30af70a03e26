import { EVENT_ID_HEADER, pushBody, WorkflowPushPayload, type WorkflowCredentials } from "@trendgate/connector-workflow";
import { ProviderError } from "@trendgate/connector-core";
import { QUEUES, type TrendEvent } from "@trendgate/contracts";
import { addOutboxMessages, findConnectionById, type Db, type NewOutboxMessage, type OutboxMessage, type OutboxRow } from "@trendgate/db";
import type { ConnectorRegistry } from "@trendgate/connectors";
import { outboxProcessor, type OutboxHandler } from "../outbox/index.ts";
import { TtlCache } from "../ttl-cache.ts";
import type { WorkerDeps } from "./types.ts";

// Workflow pushes on the shared outbox (QUEUES.workflowPushes): each message is POSTed to the selected workflow's
// trigger URL (read from the connection when sent, so a changed override applies to waiting pushes) with our event
// id in X-Trendgate-Event-Id. The client maps the answer onto ProviderError: 5xx/network -> unavailable (retried),
// 429 -> rate_limited (Retry-After honoured), 404 -> bad_request "activate the workflow" (not retried). The outbox
// records every attempt; GET /api/integrations/workflow/executions lists them.

type Skipped = { skipped: string };
const skip = (why: string): Skipped => ({ skipped: why });

/** A selection or key changed through the API applies to pushes sent this long after (one read per connection per second). */
const CONNECTION_CACHE_MS = 1000;

type Selection = { workflow_id?: string; push_url?: string; push_method?: string; default_event?: string; auto_push?: boolean };

export function workflowPushHandler(deps: WorkerDeps): OutboxHandler {
  const { db, logger } = deps;
  const connections = new TtlCache<Awaited<ReturnType<typeof openConnection>>>(CONNECTION_CACHE_MS);
  async function openConnection(id: string) {
    const conn = await findConnectionById(db, id);
    if (!conn) return null;
    const connector = deps.registry.single("workflow");
    const base = String((conn.externalAccount as Record<string, unknown>).api_base_url ?? "");
    const creds = JSON.parse(deps.secrets.open(conn.credentialsSealed)) as WorkflowCredentials;
    return {
      connector,
      selection: conn.selection as Selection | null,
      client: connector.client({ baseUrl: base, apiKey: creds.api_key, request: (m, u, i) => deps.connectors.request(m, u, i) }),
      includeMetadata: (conn.settings as Record<string, unknown> | null)?.include_metadata === true,
    };
  }
  return {
    async send(message: OutboxMessage, ctx) {
      const parsed = WorkflowPushPayload.safeParse(message.payload);
      if (!parsed.success) return skip("not a workflow push payload"); // retrying would not change it
      if (!message.connectionId) return skip("no connection");
      const conn = await connections.get(message.connectionId, () => openConnection(message.connectionId!));
      if (!conn) return skip("workflow connection deleted");
      const { connector, selection, client, includeMetadata } = conn;
      if (!selection?.push_url) throw new ProviderError(connector.manifest.id, "bad_request", "no workflow selected: PUT /api/integrations/workflow/selection first");
      const body = pushBody(parsed.data, { includeMetadata, accountId: message.accountId, sentAt: new Date() });
      try {
        const r = await client.push(selection.push_url, body, { [EVENT_ID_HEADER]: parsed.data.event_id }, selection.push_method);
        ctx.responded(r.status);
        return { status: r.status, workflow_id: selection.workflow_id ?? null };
      } catch (err) {
        if (err instanceof ProviderError && err.kind === "bad_request") logger.info({ message_id: message.id, err: err.message }, "workflow push refused");
        throw err;
      }
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
    };
    msgs.push({ queue: QUEUES.workflowPushes, accountId: e.account_id, connectionId: c.id, subjectId: e.trend_id, dedupKey: e.id, payload });
  }
  if (!msgs.length) return []; // the common case: no auto-pushing workflow; an empty transaction still costs two round trips
  return db.$transaction((tx) => addOutboxMessages(tx, msgs));
}

/** An account's workflow connection, as far as routing trend events to it goes. */
export type WorkflowTarget = { id: string; selection: Selection | null };

/** The workflow connections (not waiting for re-authorization) of these accounts, by account. */
export async function workflowTargets(db: Db, registry: ConnectorRegistry, accountIds: string[]): Promise<Map<string, WorkflowTarget>> {
  const [connector] = registry.ofKind("workflow"); // none in a registry without a workflow provider (test fixtures)
  if (!connector || !accountIds.length) return new Map();
  const conns = await db.connection.findMany({
    where: { provider: connector.manifest.id, accountId: { in: [...new Set(accountIds)] }, status: { not: "needs_reauth" } },
    select: { id: true, accountId: true, selection: true },
  });
  return new Map(conns.map((c) => [c.accountId, { id: c.id, selection: c.selection as Selection | null }]));
}
