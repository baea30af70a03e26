import { z } from "zod";
import { ProviderError, providerRequest } from "@trendgate/connector-core";
import { bindPush, instanceBase, pushAuthShown, type PushAuth, type WorkflowClient, type WorkflowConnector, type WorkflowCredentials } from "@trendgate/connector-workflow";
import type { ConnectorRegistry } from "@trendgate/connectors";
import {
  OUTBOX_STATUSES, OutboxReplayed, pageQuery, QUEUES, text, WorkflowConnection, WorkflowList, WorkflowPushAccepted, WorkflowPushBody, WorkflowPushExecutionList,
  WorkflowPushPayload, WorkflowSelection,
} from "@trendgate/contracts";
import { addOutboxMessages, findConnection, newId, outboxMessageOwnerByDedupKey, saveConnectionSelection, storeAuthorizedConnection, type ConnectionRow } from "@trendgate/db";
import { generateSecret } from "@trendgate/delivery";
import { ApiError, notFound } from "../../http/api-error.ts";
import { assertPublicDestination } from "../../http/outbound-url.ts";
import { openCursor, sealCursor } from "../../http/paginate.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import type { GatewayDeps } from "../../deps.ts";
import { OutboxListQuery, outboxPage } from "./outbox-list.ts";
import { replayOutbox } from "./outbox-replay.ts";
import { basePathOf } from "./paths.ts";
import { connectionOrConflict, providerProblem as sharedProviderProblem } from "./provider-problem.ts";

// The workflow connector's routes, in the order of use: connect (an API key checked with one real
// call, stored sealed), list workflows (the provider's cursor pages behind our own cursor), save the selection
// (checked at the provider: the workflow exists and has a trigger that accepts pushes), push (queued on the shared
// outbox, bound to the selected workflow; the worker apps/worker/src/processors/workflow-pushes.ts sends it), the
// pushes' executions, and the replay of a failed (or unknown) push.

const TAG = "Workflow connector";

/** The workflow routes of the registry's workflow provider (none when it has none). */
export function workflowRoutes(registry: ConnectorRegistry): RouteDef[] {
  return registry.ofKind("workflow").length ? routesOf(registry.single("workflow")) : [];
}

interface Connected { conn: ConnectionRow; base: string; client: WorkflowClient; includeMetadata: boolean }

const field = (path: string, message: string, code: string) => ({ errors: [{ location: "body" as const, path, message, code }] });

// -- our cursor over the provider's: sealed for the instance it pages (../../http/paginate.ts) -------------------

const listingOf = (accountId: string, base: string) => `workflows:${accountId}:${base}`;

// -- schemas: the listing query here, the answers and the push body in packages/contracts/src/workflow.ts ------------

const WorkflowsQuery = pageQuery({ limit: 50, max: 250, cursor: "opaque" });

const iso = (d: Date | null) => (d ? d.toISOString() : null);

const selectionOf = (conn: ConnectionRow): WorkflowSelection | null => {
  const s = conn.selection as Partial<WorkflowSelection> | null;
  // Selections saved before triggers' authentication was read: none.
  return s && typeof s.workflow_id === "string" && typeof s.push_url === "string" ? { authentication: "none", push_auth: null, ...s } as WorkflowSelection : null;
};

function routesOf(connector: WorkflowConnector): RouteDef[] {
  const BASE = basePathOf(connector.manifest);
  const NAME = connector.manifest.displayName;
  const ConnectBody = connector.manifest.schemas.connection!;
  const SelectionBody = connector.manifest.schemas.selection!;
  const connectFirst = `connect first: POST ${BASE}/connect`;

  const clientWith = (deps: GatewayDeps, baseUrl: string, apiKey: string): WorkflowClient =>
    connector.client({ baseUrl, apiKey, request: providerRequest(deps.config.PROVIDER_ENV) });

  async function connectionOf(deps: GatewayDeps, accountId: string): Promise<Connected> {
    const conn = await connectionOrConflict(deps, accountId, connector.manifest.id, { name: NAME, reconnect: connectFirst, usable: true });
    const base = String((conn.externalAccount as Record<string, unknown>).api_base_url ?? "");
    const creds = JSON.parse(deps.secrets.open(conn.credentialsSealed)) as WorkflowCredentials;
    const includeMetadata = (conn.settings as Record<string, unknown> | null)?.include_metadata === true;
    return { conn, base, client: clientWith(deps, base, creds.api_key), includeMetadata };
  }

  /** A provider failure as the caller's problem (./provider-problem.ts). */
  const providerProblem = (deps: GatewayDeps, conn: ConnectionRow, err: unknown) => sharedProviderProblem(deps, conn, err, { name: NAME, reconnect: `connect again with a valid key (POST ${BASE}/connect)` });

  /** Why a key check failed, naming the cause (the key, the address, the network). */
  function connectProblem(err: unknown): never {
    if (!(err instanceof ProviderError)) throw err;
    if (err.kind === "unauthorized")
      throw new ApiError("provider_credentials_rejected", `${NAME} refused the API key (HTTP ${err.detail.status}): create one under Settings → n8n API and paste it whole`, field("api_key", "refused by the instance", "credentials_rejected"));
    if (err.detail.providerCode === "not_n8n_api")
      throw new ApiError("not_a_provider_api", err.message, field("api_base_url", "not the n8n public API", "not_n8n_api"));
    if (err.kind === "unavailable" && err.detail.status === null)
      throw new ApiError("provider_unreachable", err.message, field("api_base_url", "not reachable", "unreachable"));
    if (err.kind === "unavailable" || err.kind === "rate_limited") {
      const seconds = Math.max(1, Math.ceil((err.detail.retryAfterMs ?? 5000) / 1000));
      // Its message says why (a 5xx, a 429, or n8n still running its migrations, which answer 200).
      throw new ApiError("service_unavailable", `${NAME} could not check the key now (${err.message}); try again later`, { headers: { "Retry-After": String(seconds) } });
    }
    throw new ApiError("provider_error", `${NAME} refused the key check: ${err.message}`);
  }

  return [
    defineRoute({
      method: "post", path: `${BASE}/connect`, operationId: "connectWorkflow", tag: TAG, auth: "apiKey",
      summary: `Connect an ${NAME} instance with an API key`,
      description:
        `The address must be public; the key is checked with one call (\`GET {api_base_url}/api/v1/workflows?limit=1\` with \`X-N8N-API-KEY\`) ` +
        "and stored encrypted, never returned. Nothing is stored when the check fails: 422 `provider_credentials_rejected` (the instance answered 401), " +
        "422 `not_a_provider_api` (the address does not answer as n8n's public API), 422 `provider_unreachable` (no answer at that address), 503 (n8n answered 5xx; retry later). " +
        "Connecting again replaces the key; a different instance clears the saved selection.",
      body: ConnectBody,
      responses: {
        200: { description: "Connected", schema: WorkflowConnection },
        422: { description: "`provider_credentials_rejected`, `not_a_provider_api`, `provider_unreachable` or a blocked address" },
        503: { description: "`service_unavailable`: n8n answered 5xx or 429 to the key check" },
      },
      async handler({ deps, auth, body }) {
        const b = body as { api_key: string; api_base_url: string; include_metadata: boolean };
        assertPublicDestination(deps.guard, b.api_base_url, "api_base_url");
        const base = instanceBase(b.api_base_url);
        await clientWith(deps, base, b.api_key).verify().catch(connectProblem);
        // Connecting again (a new key) keeps the signing secret receivers verify with, and the trigger's credential
        // while the instance stays the same.
        const before = await findConnection(deps.db, auth.accountId, connector.manifest.id);
        const kept = before ? JSON.parse(deps.secrets.open(before.credentialsSealed)) as WorkflowCredentials : null;
        const sameInstance = before && (before.externalAccount as Record<string, unknown>).api_base_url === base;
        const signingSecret = kept?.signing_secret ?? generateSecret();
        const creds: WorkflowCredentials = { api_key: b.api_key, signing_secret: signingSecret, push_auth: sameInstance ? kept?.push_auth ?? null : null };
        const row = await storeAuthorizedConnection(deps.db, {
          accountId: auth.accountId, provider: connector.manifest.id, kind: connector.manifest.kind,
          credentialsSealed: deps.secrets.seal(JSON.stringify(creds)), tokenExpiresAt: null, scopes: [], externalAccount: { api_base_url: base },
        }, { settings: { include_metadata: b.include_metadata } });
        return {
          status: 200,
          body: {
            provider: row.provider, status: row.status, api_base_url: base, include_metadata: b.include_metadata, connected_at: row.updatedAt.toISOString(),
            signing_secret: kept?.signing_secret ? null : signingSecret,
          },
        };
      },
    }),
    defineRoute({
      method: "get", path: `${BASE}/workflows`, operationId: "listWorkflows", tag: TAG, auth: "apiKey",
      summary: `The connected ${NAME} instance's workflows`,
      description: `One page at a time in ${NAME}'s order; pass \`next_cursor\` back as \`cursor\`. A workflow can receive pushes when it has an enabled Webhook trigger node that accepts POST (or PUT/PATCH); \`push_url\` is its production URL.`,
      query: WorkflowsQuery,
      responses: { 200: { description: "A page of workflows", schema: WorkflowList }, 409: { description: "`not_connected`" } },
      async handler({ deps, auth, query }) {
        const { conn, base, client } = await connectionOf(deps, auth.accountId);
        const cursor = query.cursor ? openCursor<string>(deps.config.ENCRYPTION_KEY, listingOf(auth.accountId, base), query.cursor) : undefined;
        const page = await client.listWorkflows({ cursor, limit: query.limit }).catch((err) => providerProblem(deps, conn, err));
        return {
          status: 200,
          body: {
            data: page.workflows.map((w) => ({
              id: w.id, name: w.name, active: w.active, tags: w.tags, can_receive_pushes: w.trigger !== null, push_url: w.trigger?.url ?? null,
              authentication: w.trigger?.authentication ?? null,
            })),
            next_cursor: page.nextCursor ? sealCursor(deps.config.ENCRYPTION_KEY, listingOf(auth.accountId, base), page.nextCursor) : null,
          },
        };
      },
    }),
    defineRoute({
      method: "put", path: `${BASE}/selection`, operationId: "putWorkflowSelection", tag: TAG, auth: "apiKey",
      summary: "Choose the workflow pushes go to",
      description:
        `Checked at ${NAME}: the workflow exists and has a Webhook trigger node accepting POST (422 naming \`workflow_id\` otherwise). ` +
        "`push_url` overrides the derived production URL (a reverse proxy, a renamed webhook prefix). `auto_push` (default true) sends every trend event as `default_event`. " +
        "An inactive workflow can be selected, but pushes fail until it is activated.",
      body: SelectionBody,
      responses: { 200: { description: "The saved selection", schema: WorkflowSelection }, 409: { description: "`not_connected`" } },
      async handler({ deps, auth, body }) {
        const b = body as { workflow_id: string; workflow_name: string; default_event: string; api_base_url: string; push_url?: string | null; auto_push: boolean; push_auth?: PushAuth | null };
        assertPublicDestination(deps.guard, b.push_url, "push_url");
        const { conn, base, client } = await connectionOf(deps, auth.accountId);
        if (instanceBase(b.api_base_url) !== base)
          throw new ApiError("validation_failed", `api_base_url: the connected instance is ${base}`, field("api_base_url", `not the connected instance (${base}); connect that one first`, "instance_mismatch"));
        const wf = await client.getWorkflow(b.workflow_id).catch((err) => {
          if (err instanceof ProviderError && err.kind === "not_found")
            throw new ApiError("validation_failed", `workflow_id: no workflow ${b.workflow_id} on ${base}`, field("workflow_id", "no such workflow", "not_found"));
          return providerProblem(deps, conn, err);
        });
        if (!wf.trigger)
          throw new ApiError("validation_failed", `workflow_id: "${wf.name}" has no Webhook trigger node accepting POST; add one (HTTP Method POST) and activate the workflow`, field("workflow_id", "no Webhook trigger accepting POST", "no_webhook_trigger"));
        // The trigger's own authentication decides what pushes must carry: its credential, matched by kind. A saved one
        // belongs to the workflow it was given for: kept while that stays selected, dropped when another is.
        const creds = JSON.parse(deps.secrets.open(conn.credentialsSealed)) as WorkflowCredentials;
        const sameWorkflow = selectionOf(conn)?.workflow_id === wf.id;
        const pushAuth = b.push_auth === undefined ? (sameWorkflow ? creds.push_auth ?? null : null) : b.push_auth;
        const needs = wf.trigger.authentication;
        if (needs === "jwt")
          throw new ApiError("validation_failed", `workflow_id: "${wf.name}"'s Webhook node uses JWT authentication, which pushes cannot carry`, field("workflow_id", "JWT authentication is not supported: set the node's Authentication to Header Auth (and give push_auth), or to None and verify our signature", "unsupported_authentication"));
        if ((needs === "header" || needs === "basic") && pushAuth?.type !== needs)
          throw new ApiError("validation_failed", `push_auth: "${wf.name}"'s Webhook node asks for ${needs === "header" ? "Header Auth" : "Basic Auth"}`, field("push_auth", needs === "header" ? 'its Webhook node uses Header Auth: give {"type": "header", "name", "value"} as in that credential' : 'its Webhook node uses Basic Auth: give {"type": "basic", "username", "password"}', "authentication_required"));
        const selection: WorkflowSelection = {
          workflow_id: wf.id, workflow_name: wf.name || b.workflow_name, default_event: b.default_event, api_base_url: base,
          push_url: b.push_url ?? wf.trigger.url, push_method: wf.trigger.method, push_url_overridden: Boolean(b.push_url), auto_push: b.auto_push, workflow_active: wf.active,
          authentication: needs, push_auth: pushAuthShown(pushAuth),
        };
        const sealed = pushAuth === (creds.push_auth ?? null) ? undefined : deps.secrets.seal(JSON.stringify({ ...creds, push_auth: pushAuth } satisfies WorkflowCredentials));
        await saveConnectionSelection(deps.db, conn.id, selection, { credentialsSealed: sealed });
        return { status: 200, body: selection };
      },
    }),
    defineRoute({
      method: "get", path: `${BASE}/selection`, operationId: "getWorkflowSelection", tag: TAG, auth: "apiKey",
      summary: "The saved workflow selection",
      description: "As PUT saved it (with the push URL and method it derived). 404 `not_found` when no workflow is selected.",
      responses: { 200: { description: "The saved selection", schema: WorkflowSelection }, 404: { description: "No workflow selected" }, 409: { description: "`not_connected`" } },
      async handler({ deps, auth }) {
        const conn = await connectionOrConflict(deps, auth.accountId, connector.manifest.id, { name: NAME, reconnect: connectFirst, usable: false });
        const selection = selectionOf(conn);
        if (!selection) throw notFound("Workflow selection");
        return { status: 200, body: selection };
      },
    }),
    defineRoute({
      method: "post", path: `${BASE}/push`, operationId: "pushToWorkflow", tag: TAG, auth: "apiKey", idempotent: "transactional",
      summary: "Push a payload to the selected workflow",
      description:
        "Queued (202) on the outbox and POSTed to the workflow's webhook as `{event, data}` (plus `metadata` when the connection has include_metadata), " +
        "with `X-Trendgate-Event-Id` set to the answer's `id` for de-duplication on the workflow's side. The push is bound to the workflow selected now " +
        "(a retry goes there even if another is selected meanwhile). Outages, 429, n8n's `200 n8n is starting up` (its migrations run, nothing ran) and its start-up 404 " +
        "(an HTML page while it re-registers its webhooks) are retried, the last two within seconds; " +
        "n8n's JSON 404 (no active webhook) fails after the workflow is read again (a changed webhook path is followed), with a message saying to activate it; " +
        "`500 Error in workflow` or no answer in time (the workflow may have run) ends as `unknown`, not resent: replay it with POST …/executions/{id}/replay. " +
        "Every attempt is listed by GET …/executions.",
      body: WorkflowPushBody,
      responses: { 202: { description: "Queued", schema: WorkflowPushAccepted }, 409: { description: "`not_connected`, or no workflow selected" } },
      async handler({ deps, auth, body, atomically }) {
        const conn = await deps.connections.find(auth.accountId, connector.manifest.id);
        if (!conn) throw new ApiError("not_connected", `${NAME} is not connected: ${connectFirst}`);
        const selection = selectionOf(conn);
        if (!selection) throw new ApiError("conflict", `No workflow selected: PUT ${BASE}/selection first`);
        const payload: WorkflowPushPayload = {
          event_id: newId("wfe"), event: body.event ?? selection.default_event, data: body.data, source: "api", ...bindPush(selection),
        };
        return atomically(async (tx) => {
          const outbox = await addOutboxMessages(tx, [{ queue: QUEUES.workflowPushes, accountId: auth.accountId, connectionId: conn.id, dedupKey: payload.event_id, payload }]);
          return { status: 202, body: { id: payload.event_id, event: payload.event, status: "queued" as const }, outbox };
        });
      },
    }),
    defineRoute({
      method: "get", path: `${BASE}/executions`, operationId: "listWorkflowPushExecutions", tag: TAG, auth: "apiKey",
      summary: "Pushes to the workflow and every attempt at each, newest first",
      description: "Both API pushes and automatic trend-event pushes, with each attempt's outcome, HTTP status and error. `status` `unknown`: the workflow may have run " +
        "(it failed while running, or outlasted the timeout); it is not resent automatically: check its executions in n8n and replay it if needed. " +
        "A `succeeded` push's `delivery` is `delivered` (n8n took it) until its run is found among the workflow's executions (`confirmed`). Pass `next_cursor` back as `cursor`.",
      query: OutboxListQuery,
      responses: { 200: { description: "A page of pushes", schema: WorkflowPushExecutionList } },
      async handler({ deps, auth, query }) {
        const page = await outboxPage(deps, auth.accountId, QUEUES.workflowPushes, query);
        const data = page.rows.map(({ message: m, attempts }) => {
          const p = WorkflowPushPayload.safeParse(m.payload);
          return {
            id: p.success ? p.data.event_id : m.id, event: p.success ? p.data.event : "", source: p.success ? p.data.source : "unknown",
            status: m.status as (typeof OUTBOX_STATUSES)[number],
            delivery: m.status !== "succeeded" ? null : (m.result as { confirmation?: unknown } | null)?.confirmation === "confirmed" ? "confirmed" as const : "delivered" as const,
            attempts: attempts.map((a) => ({
              attempt: a.attempt, outcome: a.outcome, response_status: a.responseStatus, error_class: a.errorClass, error_message: a.errorMessage,
              duration_ms: a.durationMs, next_retry_at: iso(a.nextRetryAt), created_at: a.createdAt.toISOString(),
            })),
            last_error: m.lastError, created_at: m.createdAt.toISOString(), completed_at: iso(m.completedAt),
          };
        });
        return { status: 200, body: { data, next_cursor: page.next_cursor } };
      },
    }),
    defineRoute({
      method: "post", path: `${BASE}/executions/{id}/replay`, operationId: "replayWorkflowPush", tag: TAG, auth: "apiKey", idempotent: "transactional",
      summary: "Send a failed push (or one whose outcome is unknown) again",
      description: "One more attempt now, with the same body and `X-Trendgate-Event-Id`, to the push's own workflow. Only for `failed` or `unknown` pushes " +
        "(409 `conflict` otherwise: pending ones are still being sent); 404 when the account has no such push.",
      params: z.object({ id: text({ min: 1, max: 64 }).meta({ description: "The push's id (its event id, as GET …/executions lists it)" }) }),
      responses: { 202: { description: "Queued", schema: OutboxReplayed }, 404: { description: "No such push" }, 409: { description: "`conflict`: not failed or unknown" } },
      async handler({ deps, auth, params, atomically }) {
        const m = await outboxMessageOwnerByDedupKey(deps.db, QUEUES.workflowPushes, params.id);
        if (!m || m.accountId !== auth.accountId) throw notFound("Push");
        return replayOutbox(deps, atomically, { accountId: auth.accountId, queue: QUEUES.workflowPushes, messageId: m.id, shownId: params.id, what: "Push" });
      },
    }),
  ];
}
