import type { z } from "zod";
import { QUEUES, SocialAction, SocialConnection, SocialConnectionStatus, SocialProviderList, type JobPayload } from "@trendgate/contracts";
import { isPolled, type RunAction, type SocialActionDef, type SocialConnector } from "@trendgate/connector-social";
import type { ConnectorRegistry } from "@trendgate/connectors";
import { countSignalsSince, decideSocialDraft, socialConnectionProviders, deleteSocialConnection, findSocialConnection, newId, prependSocialAction, saveSocialConnection, type SocialConnectionRow } from "@trendgate/db";
import { ApiError, notFound } from "../../http/api-error.ts";
import { assertPublicDestination } from "../../http/outbound-url.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import type { GatewayDeps } from "../../deps.ts";
import { basePathOf } from "./paths.ts";

// Social and search connectors, generated from the registry: for each provider under
// /api/integrations/social/{provider}:
//   PUT  …/connection  configure (credentials are sealed with SecretBox and never returned)
//   GET  …/status      state of polling, quota, recent observations and recent actions
//   POST …/{action}    each of the provider's actions (e.g. x reply, reddit/youtube poll, google_trends validate)
// and GET /api/integrations/social/providers lists them. The gateway never calls a provider: actions are stored on
// the connection (cursor.actions) and queued on social-poll, where the worker runs them and records the outcome.

const PROVIDERS_PATH = "/api/integrations/social/providers";
const TAG = "Social connectors";
const RECENT_HOURS = 24;
const MAX_ACTIONS = 20;

type Row = SocialConnectionRow;
/** A social-poll job for one action (the payload schema in contracts' queues.ts must accept every provider's action name). */
const job = (connectionId: string, action: string, actionId: string) =>
  ({ connection_id: connectionId, action, action_id: actionId }) as JobPayload<typeof QUEUES.socialPoll>;
const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function toConnection(r: Row, quotaProject: string | null): SocialConnection {
  return {
    id: r.id, provider: r.provider, status: r.status as SocialConnection["status"], terms: r.terms,
    options: r.options as Record<string, unknown>, quota_project: quotaProject, base_url: r.baseUrl, last_error: r.lastError,
    last_polled_at: iso(r.lastPolledAt), next_poll_at: iso(r.nextPollAt), created_at: r.createdAt.toISOString(), updated_at: r.updatedAt.toISOString(),
  };
}

/** The provider quota the connection draws on with others (YouTube: its Cloud project), or null when it has its own. */
const quotaProjectOf = (deps: GatewayDeps, c: SocialConnector, r: Row) =>
  c.quotaProject?.(JSON.parse(deps.secrets.open(r.credentialsCiphertext)) as Record<string, string>, r.options as Record<string, any>) ?? null;

async function findOwn(deps: GatewayDeps, accountId: string, c: SocialConnector) {
  const row = await findSocialConnection(deps.db, accountId, c.manifest.id);
  if (!row) throw notFound(`${c.manifest.displayName} connection`);
  return row;
}

/**
 * Stores an action on the connection (newest first, the last MAX_ACTIONS kept) and, unless it awaits approval,
 * queues it for the worker.
 */
async function queueAction(deps: GatewayDeps, row: Row, action: string, input: Record<string, unknown>, status: "queued" | "awaiting_approval" = "queued"): Promise<SocialAction> {
  const a: SocialAction = { id: newId("act"), action, status, input, result: null, error: null, created_at: new Date().toISOString(), completed_at: null };
  await prependSocialAction(deps.db, row.id, a, MAX_ACTIONS);
  if (status === "queued") await deps.queues.add(QUEUES.socialPoll, job(row.id, action, a.id), { jobId: `${action}-${a.id}` });
  return a;
}

/** Approves (queues) or rejects a draft; only a draft still awaiting approval can be decided. */
async function decideDraft(deps: GatewayDeps, row: Row, action: string, draftId: string, decision: "approve" | "reject"): Promise<SocialAction> {
  const next = decision === "approve" ? { status: "queued" } : { status: "rejected", completed_at: new Date().toISOString() };
  const decided = await decideSocialDraft<SocialAction>(deps.db, row.id, action, draftId, next);
  if (!decided) {
    const known = ((row.cursor as { actions?: SocialAction[] }).actions ?? []).find((x) => x.id === draftId && x.action === action);
    if (!known) throw notFound(`${action[0].toUpperCase()}${action.slice(1)} draft`);
    throw new ApiError("conflict", `This draft is ${known.status}; only a draft awaiting approval can be approved or rejected`);
  }
  if (decision === "approve") await deps.queues.add(QUEUES.socialPoll, job(row.id, action, draftId), { jobId: `${action}-${draftId}` });
  return decided;
}

function refuseIfNeedsReauth(c: SocialConnector, row: Row) {
  if (row.status === "needs_reauth") {
    throw new ApiError("conflict", `The ${c.manifest.displayName} connection needs new credentials (${row.lastError ?? "the provider refused them"}); PUT the connection again`);
  }
}

function connectionRoutes(c: SocialConnector): RouteDef[] {
  const { manifest: m } = c;
  const path = basePathOf(m);
  const urlFields = ["base_url", ...(c.extraUrlFields ?? [])];
  return [
    defineRoute({
      method: "put", path: `${path}/connection`, operationId: `put${m.operationName}Connection`, tag: TAG, auth: "apiKey",
      summary: `Configure the ${m.displayName} connector (credentials, tracked terms, options)`,
      description:
        `Creates or replaces the account's ${m.displayName} connection. Credentials are encrypted at rest and never returned. ` +
        `Replacing the connection resets its status to \`active\` (this is how a \`needs_reauth\` connection is repaired) ` +
        `and keeps its polling cursor and quota ledger. ${c.connectionNote}`,
      body: m.schemas.connection,
      responses: { 200: { description: "The connection (without its credentials)", schema: SocialConnection } },
      async handler({ deps, auth, body }) {
        const b = body as { credentials: Record<string, unknown>; terms: string[]; options: Record<string, unknown>; [field: string]: unknown };
        for (const f of urlFields) assertPublicDestination(deps.guard, b[f] as string | null | undefined, f);
        // URL fields other than base_url (e.g. a separate token host) travel in options, where the provider reads them.
        const extra = Object.fromEntries((c.extraUrlFields ?? []).filter((f) => b[f]).map((f) => [f, b[f]]));
        const options = { ...b.options, ...extra };
        const fields = {
          status: "active", terms: b.terms, options, credentialsCiphertext: deps.secrets.seal(JSON.stringify(b.credentials)),
          baseUrl: (b.base_url as string | null | undefined) ?? null, lastError: null, nextPollAt: isPolled(c) ? new Date() : null,
        };
        const row = await saveSocialConnection(deps.db, auth.accountId, m.id, fields);
        return { status: 200, body: toConnection(row, quotaProjectOf(deps, c, row)) };
      },
    }),
    defineRoute({
      method: "delete", path: `${path}/connection`, operationId: `delete${m.operationName}Connection`, tag: TAG, auth: "apiKey",
      summary: `Disconnect the ${m.displayName} connector`,
      description: `Deletes the account's ${m.displayName} connection: its credentials, polling cursor and quota ledger. Polling stops ` +
        `(a poll already running finishes without storing its cursor); the signals it stored stay. 404 when there is none.`,
      responses: { 204: { description: "Disconnected" } },
      async handler({ deps, auth }) {
        if (!(await deleteSocialConnection(deps.db, auth.accountId, m.id))) throw notFound(`${m.displayName} connection`);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: "get", path: `${path}/status`, operationId: `get${m.operationName}Status`, tag: TAG, auth: "apiKey",
      summary: `Status of the ${m.displayName} connector: polling, quota, recent observations and actions`,
      description: `\`status\` says whether it is polled (\`active\`) or why not; \`last_error\` says what the provider answered. ` +
        `\`recent_observations\` counts the signals it stored in the last ${RECENT_HOURS} hours; \`actions\` lists the recent actions and their results.`,
      responses: { 200: { description: "The connector's status", schema: SocialConnectionStatus } },
      async handler({ deps, auth }) {
        const row = await findOwn(deps, auth.accountId, c);
        const count = await countSignalsSince(deps.db, auth.accountId, m.id, new Date(Date.now() - RECENT_HOURS * 3_600_000));
        const cursor = row.cursor as { actions?: SocialAction[] };
        const body: z.infer<typeof SocialConnectionStatus> = {
          connection_id: row.id, provider: m.id, status: row.status as SocialConnection["status"], last_error: row.lastError, terms: row.terms,
          last_polled_at: iso(row.lastPolledAt), next_poll_at: iso(row.nextPollAt), quota: row.quota as Record<string, unknown>,
          quota_project: quotaProjectOf(deps, c, row),
          recent_observations: { hours: RECENT_HOURS, count }, actions: cursor.actions ?? [],
        };
        return { status: 200, body };
      },
    }),
  ];
}

const actionResponses = { 202: { description: "Queued; follow it in the status' `actions`", schema: SocialAction } };

/** The 422 an action's precheck asks for (e.g. replies without a user-context token). */
function precheck(deps: GatewayDeps, a: RunAction, row: Row) {
  if (!a.precheck) return;
  const refused = a.precheck(JSON.parse(deps.secrets.open(row.credentialsCiphertext)) as Record<string, string>);
  if (refused) {
    throw new ApiError("validation_failed", refused.detail, { errors: [{ location: "body", path: "(body)", message: refused.message, code: refused.code }] });
  }
}

function actionRoute(c: SocialConnector, a: SocialActionDef): RouteDef {
  const common = {
    method: "post" as const, path: `${basePathOf(c.manifest)}/${a.name}`, operationId: a.operationId, tag: TAG, auth: "apiKey" as const, idempotent: true,
    summary: a.summary, description: a.description,
  };
  if (a.kind === "poll") {
    return defineRoute({
      ...common, responses: actionResponses,
      async handler({ deps, auth }) {
        const row = await findOwn(deps, auth.accountId, c);
        refuseIfNeedsReauth(c, row);
        return { status: 202, body: await queueAction(deps, row, a.name, {}) };
      },
    });
  }
  if (a.approval) {
    return defineRoute({
      ...common, body: a.body,
      responses: { 201: { description: "Draft stored, awaiting approval", schema: SocialAction }, 200: { description: "Draft rejected", schema: SocialAction }, ...actionResponses },
      async handler({ deps, auth, body }) {
        const row = await findOwn(deps, auth.accountId, c);
        refuseIfNeedsReauth(c, row);
        precheck(deps, a, row);
        const b = body as Record<string, unknown>;
        if (typeof b.draft_id === "string") {
          const decision = b.decision as "approve" | "reject";
          return { status: decision === "approve" ? 202 : 200, body: await decideDraft(deps, row, a.name, b.draft_id, decision) };
        }
        return { status: 201, body: await queueAction(deps, row, a.name, b, "awaiting_approval") };
      },
    });
  }
  return defineRoute({
    ...common, body: a.body, responses: actionResponses,
    async handler({ deps, auth, body }) {
      const row = await findOwn(deps, auth.accountId, c);
      refuseIfNeedsReauth(c, row);
      precheck(deps, a, row);
      return { status: 202, body: await queueAction(deps, row, a.name, body as Record<string, unknown>) };
    },
  });
}

function providersRoute(connectors: SocialConnector[]): RouteDef {
  const list = {
    data: connectors.map((c) => ({
      id: c.manifest.id, display_name: c.manifest.displayName, kind: "social" as const, polled: isPolled(c),
      connection_path: `${basePathOf(c.manifest)}/connection`,
      actions: c.actions.map((a) => ({ name: a.name, path: `${basePathOf(c.manifest)}/${a.name}`, summary: a.summary, approval: a.kind === "run" && !!a.approval })),
    })),
  };
  return defineRoute({
    method: "get", path: PROVIDERS_PATH, operationId: "listSocialProviders", tag: TAG, auth: "apiKey",
    summary: "List the social and search providers",
    description: "Each provider's id (the `{provider}` path segment), whether it is polled on the schedule, where its connection is configured, whether the account has connected it, and its actions.",
    responses: { 200: { description: "The registered social providers", schema: SocialProviderList } },
    // `connected` lets a client ask `status` only of connected providers instead of collecting a 404 per other one.
    async handler({ deps, auth }) {
      const have = await socialConnectionProviders(deps.db, auth.accountId);
      const body: z.infer<typeof SocialProviderList> = { data: list.data.map((p) => ({ ...p, connected: have.has(p.id) })) };
      return { status: 200, body };
    },
  });
}

/** Every social route, for the registry's social providers. */
export function socialRoutes(registry: ConnectorRegistry): RouteDef[] {
  const connectors = registry.ofKind("social");
  return [providersRoute(connectors), ...connectors.flatMap((c) => [...connectionRoutes(c), ...c.actions.map((a) => actionRoute(c, a))])];
}
