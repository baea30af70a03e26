import { AdAccountChoiceError, checkMappedEntities, openPlanApproval, planHashOf, planView, previewPlan, previewRollback, queueApply, resolveAdAccount } from "@trendgate/ads";
import type { AdsConnector, TargetingField } from "@trendgate/connector-ads";
import { baseUrlOf } from "@trendgate/connector-core";
import type { ConnectorRegistry } from "@trendgate/connectors";
import {
  AdsAccountList, AdsApplyAccepted, AdsApplyRequest, AdsApprovalRequested, AdsEntitiesQuery, AdsEntityPage, AdsMappingsBody, AdsPlanView, AdsProviderList, AdsRunList,
  AdsRunsQuery, AdsSelectionBody, IdParam, type AdsSelection,
} from "@trendgate/contracts";
import { findAccountPlan, listAdsMappings, listAdsRuns, replaceAdsMappings, saveConnectionSelection, type ConnectionRow } from "@trendgate/db";
import { ApiError, notFound } from "../../http/api-error.ts";
import { invalidCursor, openCursor, sealCursor } from "../../http/paginate.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import type { GatewayDeps } from "../../deps.ts";
import { adAccountRequired, adsProblem, planProblem } from "./ads-problem.ts";
import { basePathOf } from "./paths.ts";
import { providerStates } from "./provider-list.ts";
import { connectionOrConflict, providerProblem } from "./provider-problem.ts";

// The ads connectors' routes, one set per ads provider in the registry, besides the OAuth and
// connection routes the framework generates: the selection (ad account, trend category, strict_safety), the
// account's campaign entities and the mapping of some of them to the category, and the plans: preview, apply,
// rollback and runs. The plans' work is done by packages/ads (previewPlan, queueApply, previewRollback); these
// routes validate, call it and shape the reply.

const TAG = "Ads connectors";

/** A stored plan as the API shows it (its provider's capabilities say whether it needs an acknowledgement). */
export const planReply = (deps: GatewayDeps, p: Parameters<typeof planView>[0]) =>
  planView(p, deps.registry.find("ads", p.provider)?.capabilities);

function routesOf(c: AdsConnector): RouteDef[] {
  const m = c.manifest;
  const base = basePathOf(m);
  const name = m.displayName;
  const authorize = `authorize via GET ${base}/auth`;
  const problem = { name, reconnect: authorize };

  async function connected(deps: GatewayDeps, accountId: string): Promise<{ conn: ConnectionRow; selection: AdsSelection | null; client: ReturnType<AdsConnector["client"]> }> {
    const conn = await connectionOrConflict(deps, accountId, m.id, { name, reconnect: authorize, usable: true });
    const parsed = AdsSelectionBody.safeParse(conn.selection ?? undefined);
    let accessToken: string;
    try {
      accessToken = await deps.connections.accessToken(conn);
    } catch (err) {
      return providerProblem(deps, conn, err, problem);
    }
    const client = c.client({ baseUrl: baseUrlOf(m, deps.config.PROVIDER_ENV), accessToken, env: deps.config.PROVIDER_ENV });
    return { conn, selection: parsed.success ? parsed.data : null, client };
  }

  /** The selection and the ad account it works on (the one it names, else the connection's only one), or 409/422. */
  async function selected(deps: GatewayDeps, accountId: string, need: string) {
    const { conn, selection, client } = await connected(deps, accountId);
    if (!selection) throw new ApiError("not_connected", `No ${need} selected: PUT ${base}/selection first`);
    let adAccountId: string;
    try {
      adAccountId = await resolveAdAccount(client, selection.account_id);
    } catch (err) {
      if (err instanceof AdAccountChoiceError) throw adAccountRequired(err, base);
      return providerProblem(deps, conn, err, problem);
    }
    return { conn, selection, client, adAccountId };
  }

  /**
   * Mapped entities the selected ad account has at the provider, with a field each can take (else 422 naming them);
   * the names the provider lists them with.
   */
  async function assertKnownEntities(deps: GatewayDeps, accountId: string, entities: { id: string; field: TargetingField }[]): Promise<Map<string, string>> {
    const { conn, client, adAccountId } = await selected(deps, accountId, "ad account is");
    let checked;
    try {
      checked = await checkMappedEntities(client, adAccountId, entities);
    } catch (err) {
      return providerProblem(deps, conn, err, problem);
    }
    const { problems, names } = checked;
    if (!problems.length) return names;
    const errors = problems.map((p) => p.problem === "unknown_entity"
      ? { location: "body" as const, path: `entities.${p.index}.id`, message: `ad account ${adAccountId} has no entity ${p.id} at ${name}`, code: "unknown_entity" }
      : { location: "body" as const, path: `entities.${p.index}.field`, message: `entity ${p.id} takes ${p.targeting.join(", ") || "no targeting"} (map the level that carries targeting)`, code: "invalid_value" });
    throw new ApiError("validation_failed", errors.map((e) => `${e.path}: ${e.message}`).join("; "), { errors });
  }

  return [
    defineRoute({
      method: "put", path: `${base}/selection`, operationId: `put${m.operationName}Selection`, tag: TAG, auth: "apiKey",
      summary: `Choose the ${name} ad account, trend category and safety settings`,
      description: "Only `trend_category` is required. Without `account_id` the connection's only ad account is used (see `account_id`). Read it back with GET.",
      body: AdsSelectionBody,
      responses: { 200: { description: "The saved selection", schema: AdsSelectionBody }, 409: { description: "`not_connected`" } },
      async handler({ deps, auth, body }) {
        const conn = await connectionOrConflict(deps, auth.accountId, m.id, { name, reconnect: authorize, usable: false });
        await saveConnectionSelection(deps.db, conn.id, body);
        return { status: 200, body };
      },
    }),
    defineRoute({
      method: "get", path: `${base}/selection`, operationId: `get${m.operationName}Selection`, tag: TAG, auth: "apiKey",
      summary: `The saved ${name} selection`,
      description: "As PUT saved it, defaults applied; `account_id` is absent when none was given. 404 `not_found` when nothing is saved.",
      responses: { 200: { description: "The saved selection", schema: AdsSelectionBody }, 404: { description: "No selection saved" }, 409: { description: "`not_connected`" } },
      async handler({ deps, auth }) {
        const conn = await connectionOrConflict(deps, auth.accountId, m.id, { name, reconnect: authorize, usable: false });
        const parsed = AdsSelectionBody.safeParse(conn.selection ?? undefined);
        if (!parsed.success) throw notFound(`${name} selection`);
        return { status: 200, body: parsed.data };
      },
    }),
    defineRoute({
      method: "get", path: `${base}/accounts`, operationId: `list${m.operationName}Accounts`, tag: TAG, auth: "apiKey",
      summary: `The ${name} ad accounts the connection reaches`,
      description: "Their ids are what the selection's `account_id` takes; with exactly one, a selection may leave `account_id` out.",
      responses: { 200: { description: "The ad accounts", schema: AdsAccountList }, 409: { description: "`not_connected`" } },
      async handler({ deps, auth }) {
        const { conn, client } = await connected(deps, auth.accountId);
        try {
          return { status: 200, body: { data: await client.listAccounts() } };
        } catch (err) {
          return providerProblem(deps, conn, err, problem);
        }
      },
    }),
    defineRoute({
      method: "get", path: `${base}/entities`, operationId: `list${m.operationName}Entities`, tag: TAG, auth: "apiKey",
      summary: `The selected ${name} ad account's campaign entities, to map to the trend category`,
      description: "Pass `next_cursor` back as `cursor`. `targeting` lists the fields a plan can change on the entity.",
      query: AdsEntitiesQuery,
      responses: {
        200: { description: "A page of entities", schema: AdsEntityPage }, 409: { description: "`not_connected`: no connection or no selection" },
        422: { description: "`ad_account_required`: no account_id selected and the connection reaches several ad accounts (named)" },
      },
      async handler({ deps, auth, query }) {
        // The provider's cursor, sealed with the ad account it pages: a cursor we did not hand out is 422, never sent on.
        const listing = `${m.id}-entities:${auth.accountId}`;
        const cursor = query.cursor ? openCursor<{ a: string; c: string }>(deps.config.ENCRYPTION_KEY, listing, query.cursor) : undefined;
        const { conn, client, adAccountId } = await selected(deps, auth.accountId, "ad account is");
        if (cursor && cursor.a !== adAccountId) throw invalidCursor();
        try {
          const page = await client.listEntities(adAccountId, { cursor: cursor?.c, limit: query.limit });
          const next = page.next_cursor ? sealCursor(deps.config.ENCRYPTION_KEY, listing, { a: adAccountId, c: page.next_cursor }) : null;
          return { status: 200, body: { data: page.data, next_cursor: next } };
        } catch (err) {
          return providerProblem(deps, conn, err, problem);
        }
      },
    }),
    defineRoute({
      method: "put", path: `${base}/mappings`, operationId: `put${m.operationName}Mappings`, tag: TAG, auth: "apiKey",
      summary: `Map ${name} campaign entities to the trend category (replaces the mapping)`,
      description:
        `Each entity is checked at ${name} against the selected ad account's entities (GET ${base}/entities): an id it does not have ` +
        "answers 422 naming `entities.<i>.id` (code `unknown_entity`), a field the entity's targeting is not 422 naming `entities.<i>.field`; " +
        "an id listed twice is 422 naming the repeat's `entities.<i>.id` (code `duplicate_entity`), before the provider is asked. " +
        "An entity sent without `name` is saved with the name the provider lists it with, so plans' `diff` names it. " +
        "Needs a selection (409), except to clear the mapping (`entities: []`). Read it back with GET.",
      body: AdsMappingsBody,
      responses: {
        200: { description: "The saved mapping, names included", schema: AdsMappingsBody }, 409: { description: "`not_connected`: no connection or no selection" },
        422: { description: "`validation_failed`: an entity listed twice, one the ad account does not have, or a field it cannot change; `ad_account_required`" },
      },
      async handler({ deps, auth, body }) {
        const bad = body.entities.findIndex((e) => !c.capabilities.targeting.includes(e.field));
        if (bad >= 0) throw new ApiError("validation_failed", `entities.${bad}.field: ${name} plans change ${c.capabilities.targeting.join(", ")}`, {
          errors: [{ location: "body", path: `entities.${bad}.field`, message: `one of ${c.capabilities.targeting.join(", ")}`, code: "invalid_value" }] });
        let names = new Map<string, string>();
        if (body.entities.length) names = await assertKnownEntities(deps, auth.accountId, body.entities);
        else await connectionOrConflict(deps, auth.accountId, m.id, { name, reconnect: authorize, usable: false }); // clearing needs no provider
        const entities = body.entities.map((e) => {
          const named = e.name ?? names.get(e.id);
          return { id: e.id, ...(named !== undefined ? { name: named } : {}), field: e.field };
        });
        await replaceAdsMappings(deps.db, auth.accountId, m.id, entities);
        return { status: 200, body: { entities } };
      },
    }),
    defineRoute({
      method: "get", path: `${base}/mappings`, operationId: `get${m.operationName}Mappings`, tag: TAG, auth: "apiKey",
      summary: `The saved ${name} mapping`,
      description: "The mapped entities as PUT saved them, by id; `entities` is empty when nothing is mapped.",
      responses: { 200: { description: "The saved mapping", schema: AdsMappingsBody }, 409: { description: "`not_connected`" } },
      async handler({ deps, auth }) {
        await connectionOrConflict(deps, auth.accountId, m.id, { name, reconnect: authorize, usable: false });
        const rows = await listAdsMappings(deps.db, auth.accountId, m.id);
        return { status: 200, body: { entities: rows.map((r) => ({ id: r.entityId, ...(r.entityName !== null ? { name: r.entityName } : {}), field: r.field as TargetingField })) } };
      },
    }),
    defineRoute({
      method: "post", path: `${base}/preview`, operationId: `preview${m.operationName}Targeting`, tag: TAG, auth: "apiKey",
      summary: `Preview the targeting changes for ${name}: a plan of the exact provider calls`,
      description:
        "From the account's rising trends in the selected category, the targeting each mapped entity lacks, through the strict_safety guardrails " +
        "(refused changes listed with their reasons), as the exact provider calls; where the provider has a dry run it is run and its verdict " +
        "reported per change. The plan is stored with the targets' state and its hash: an apply runs exactly these calls, and refuses if the " +
        `targets changed or the plan expired (ADS_PLAN_TTL_SECONDS). ${c.capabilities.dryRun ? `${name} has a dry run.` : `${name} has no dry run.`} ` +
        "A plan without changes says why in `empty_reason` (e.g. `no_interest_matched`) and `empty_detail` (the trend terms searched, and where). " +
        `409 \`nothing_mapped\` when connected and selected but no entity is mapped: PUT ${base}/mappings naming the entities (GET ${base}/entities lists them).`,
      responses: {
        201: { description: "The plan", schema: AdsPlanView },
        409: { description: "`not_connected`: no connection or selection; `nothing_mapped`: no entity is mapped (PUT …/mappings)" },
        422: { description: "`ad_account_required`: no account_id selected and the connection reaches several ad accounts (named in the detail and `errors`)" },
      },
      async handler({ deps, auth }) {
        const { conn, selection, client, adAccountId } = await selected(deps, auth.accountId, "ad account and category are");
        const plan = await previewPlan(deps, {
          accountId: auth.accountId, connector: c, client, connectionId: conn.id, adAccountId, selection, planTtlSeconds: deps.config.ADS_PLAN_TTL_SECONDS,
        }).catch((err) => adsProblem(deps, conn, err, problem));
        return { status: 201, body: planReply(deps, plan) };
      },
    }),
    defineRoute({
      method: "post", path: `${base}/apply`, operationId: `apply${m.operationName}Plan`, tag: TAG, auth: "apiKey", idempotent: "transactional",
      summary: `Apply a previewed ${name} plan`,
      description:
        "202: the plan's run is queued (`run_id`); GET …/plans/{id} shows its progress and per-change results. The worker reads the targets " +
        "again first: if they changed since the preview the plan ends `refused` (stale) and nothing is written; otherwise it makes exactly the " +
        "plan's changes and ends `applied`, `partially_applied` (refused changes marked for review) or `failed`. Transient provider errors are " +
        "retried, and a retried or resumed run reconciles with what is already applied, so no change is written twice. A plan is applied once " +
        "(409 afterwards); an expired plan (ADS_PLAN_TTL_SECONDS) answers 409: preview again. Send an Idempotency-Key to retry the request safely.",
      body: AdsApplyRequest,
      responses: {
        202: { description: "Queued", schema: AdsApplyAccepted },
        404: { description: "No such plan" }, 409: { description: "`conflict`: applied before, expired, or nothing to apply" },
        422: { description: "`acknowledgement_required`: the plan needs `acknowledged_plan_hash` (strict_safety, no provider dry run), or the one sent is not the plan's" },
      },
      async handler({ deps, auth, body, atomically }) {
        return atomically(async (tx) => {
          const run = await queueApply(tx, { accountId: auth.accountId, connector: c, planId: body.plan_id, acknowledgedPlanHash: body.acknowledged_plan_hash })
            .catch(planProblem);
          return { status: 202, body: { plan_id: run.planId, run_id: run.runId, status: "applying" as const }, outbox: run.outbox };
        });
      },
    }),
    defineRoute({
      method: "post", path: `${base}/plans/{id}/rollback`, operationId: `rollback${m.operationName}Plan`, tag: TAG, auth: "apiKey",
      summary: `Preview the rollback of an applied ${name} plan`,
      description:
        "201: a new plan (`rollback_of` the applied one) that undoes what the applied plan changed, from the targets as they are now: each " +
        "item it added and that is still there is removed (and each it removed is added back). Apply it with POST …/apply like any plan: " +
        "the same stale check, the same once-only apply. Rollbacks restore a prior state, so strict_safety's additions-only rule does not " +
        "apply to them. 409 when the plan was not applied, or a rollback of it is already previewed or applied.",
      params: IdParam,
      responses: { 201: { description: "The rollback plan", schema: AdsPlanView }, 404: { description: "No such plan" }, 409: { description: "`conflict`" } },
      async handler({ deps, auth, params }) {
        let conn: ConnectionRow | undefined;
        const connect = async () => {
          const s = await connected(deps, auth.accountId);
          conn = s.conn;
          return { connectionId: s.conn.id, client: s.client };
        };
        const plan = await previewRollback(deps, { accountId: auth.accountId, connector: c, planId: params.id, connect, planTtlSeconds: deps.config.ADS_PLAN_TTL_SECONDS })
          .catch((err) => adsProblem(deps, conn, err, problem));
        return { status: 201, body: planReply(deps, plan) };
      },
    }),
    defineRoute({
      method: "get", path: `${base}/runs`, operationId: `list${m.operationName}Runs`, tag: TAG, auth: "apiKey",
      summary: `Applied ${name} plans (runs), newest first`,
      description: "Every plan that was applied (or is being applied), rollbacks included, with its status and per-change results. Pass `next_cursor` back as `cursor`.",
      query: AdsRunsQuery,
      responses: { 200: { description: "A page of runs", schema: AdsRunList } },
      async handler({ deps, auth, query }) {
        const rows = await listAdsRuns(deps.db, { accountId: auth.accountId, provider: m.id, status: query.status, beforeRunId: query.cursor, take: query.limit + 1 });
        const page = rows.slice(0, query.limit);
        return { status: 200, body: { data: page.map((p) => planReply(deps, p)), next_cursor: rows.length > query.limit ? page[page.length - 1].runId : null } };
      },
    }),
    defineRoute({
      method: "post", path: `${base}/plans/{id}/request-approval`, operationId: `request${m.operationName}PlanApproval`, tag: TAG, auth: "apiKey",
      summary: `Ask the team to approve a previewed ${name} plan from a chat card`,
      description:
        "Opens an operator item (source `ads_approval`, routed by the routing rules like any item, event type `ads.approval_requested`) whose " +
        "chat card lists the plan's changes and an **Approve and apply** button bound to its `plan_hash`. A press applies it exactly as POST …/apply " +
        "with that hash would (once; a plan that changed, expired or already ran applies nothing and the presser is told why), records the approver " +
        "on the plan (`approved_by`) and resolves the item. Asking again returns the same item. 409 when the plan could not be applied (not previewed, " +
        "expired, or without changes: the apply's own check and reasons) or the account has no chat connection.",
      params: IdParam,
      responses: {
        201: { description: "The approval item", schema: AdsApprovalRequested }, 200: { description: "The plan's approval item, opened before", schema: AdsApprovalRequested },
        404: { description: "No such plan" }, 409: { description: "`conflict`: not previewed, expired, no changes, or no chat connection" },
      },
      async handler({ deps, auth, params, atomically }) {
        return atomically(async (tx) => {
          const r = await openPlanApproval(tx, deps, c, { accountId: auth.accountId, planId: params.id }).catch(planProblem);
          return { status: r.created ? 201 : 200, body: { plan_id: r.plan.id, plan_hash: planHashOf(r.plan), item_id: r.itemId, created: r.created }, outbox: r.outbox };
        });
      },
    }),
    defineRoute({
      method: "get", path: `${base}/plans/{id}`, operationId: `get${m.operationName}Plan`, tag: TAG, auth: "apiKey",
      summary: `One ${name} plan`,
      params: IdParam,
      responses: { 200: { description: "The plan", schema: AdsPlanView }, 404: { description: "No such plan" } },
      async handler({ deps, auth, params }) {
        const p = await findAccountPlan(deps.db, { id: params.id, accountId: auth.accountId, provider: m.id });
        if (!p) throw notFound("Plan");
        return { status: 200, body: planReply(deps, p) };
      },
    }),
  ];
}

const providersRoute = defineRoute({
  method: "get", path: "/api/integrations/ads/providers", operationId: "listAdsProviders", tag: TAG, auth: "apiKey",
  summary: "The ads providers: display name, whether connected, whether this server can connect it (`configured`), capabilities",
  responses: { 200: { description: "The providers", schema: AdsProviderList } },
  async handler({ deps, auth }) {
    const ads = await providerStates(deps, auth.accountId, deps.registry.ofKind("ads"));
    return {
      status: 200,
      body: {
        data: ads.map(({ connector: c, ...p }) => ({
          id: p.id, display_name: p.display_name, connected: p.connected, configured: p.configured,
          capabilities: { dry_run: c.capabilities.dryRun, audience_estimate: c.capabilities.audienceEstimate, sandbox: c.capabilities.sandbox, targeting: c.capabilities.targeting },
          base_path: p.base_path,
        })),
      },
    };
  },
});

/** The ads routes: the providers list, and one set per ads provider of the registry. */
export const adsRoutes = (registry: ConnectorRegistry): RouteDef[] => [providersRoute, ...registry.ofKind("ads").flatMap(routesOf)];
