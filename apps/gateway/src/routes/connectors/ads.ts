import { z } from "zod";
import { AdAccountChoiceError, checkMappedEntities, computePlan, DEFAULT_SAFETY, hashablePrior, readTargets, resolveAdAccount, stateHash, type PlanTrend, type SafetySettings } from "@trendgate/ads";
import { TARGETING_FIELDS, type AdsClient, type AdsConnector, type EntityTargeting, type ProviderCall, type TargetingChange, type TargetingField, type TargetingItem } from "@trendgate/connector-ads";
import { baseUrlOf, oauthClientOf } from "@trendgate/connector-core";
import { registry } from "@trendgate/connectors";
import { CategoryPath, Id, QUEUES, SEVERITIES, text, type Severity } from "@trendgate/contracts";
import { addOutboxMessages, newId, type ConnectionRow, type OutboxRow, type Prisma, type Tx } from "@trendgate/db";
import { ApiError, notFound } from "../../http/api-error.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import type { GatewayDeps } from "../../app.ts";
import { dispatchAfterCommit } from "../operator.ts";
import { basePathOf } from "./paths.ts";
import { connectionOrConflict, providerProblem } from "./provider-problem.ts";

// The ads connectors' routes (spec section 4.4), one set per ads provider in the registry, besides the OAuth and
// connection routes the framework generates: the selection (ad account, trend category, strict_safety), the
// account's campaign entities and the mapping of some of them to the category, and the preview, which computes a
// plan (packages/ads: changes through the guardrails, the diff, the prior-state hash), builds the provider's exact
// calls, runs its dry run where it has one, and stores it (ads_plans). Apply, rollback and runs follow.

const TAG = "Ads connectors";
const PROVIDERS = registry.ofKind("ads");
export const connectorOf = (deps: GatewayDeps, id: string): AdsConnector => deps.registry.ofKind("ads").find((c) => c.manifest.id === id)!;
/** Trend stages that mean "rising now": a plan targets what is growing, not what is cooling off. */
const POSITIVE_STAGES = ["emerging", "rising", "peaking"];

export const AdsSafety = z.object({
  min_severity: z.enum(SEVERITIES).optional().meta({ description: `Trends below this are ignored (default ${DEFAULT_SAFETY.minSeverity})` }),
  max_changes_per_entity: z.number().int().min(1).max(100).optional().meta({ description: `Default ${DEFAULT_SAFETY.maxChangesPerEntity}` }),
  max_changes_per_run: z.number().int().min(1).max(1000).optional().meta({ description: `Default ${DEFAULT_SAFETY.maxChangesPerRun}` }),
  blocklist: z.array(text({ min: 1, max: 100, trim: true })).max(500).optional().meta({ description: "Sensitive topics (words or phrases); replaces the default list" }),
}).meta({ id: "AdsSafety" });

export const AdsSelectionBody = z.object({
  trend_category: CategoryPath.meta({ description: "A trend category (its sub-categories included), e.g. `tech/ai`" }),
  strict_safety: z.boolean().default(true).meta({
    description: "On (default): plans only add targeting, at most the caps, from trends at least `min_severity`, not negative, not on the blocklist, " +
      "and a dry run must pass where the provider has one. Off: removals of targeting this service added are allowed too. Budgets, bids and schedules are never changed.",
  }),
  account_id: text({ min: 1, max: 64, trim: true }).optional().meta({
    description: "The ad account (Google Ads customer id, Meta `act_<id>`, Microsoft `<customerId>:<accountId>`; GET …/accounts lists them). " +
      "Left out: the connection's only ad account, read from the provider at each use; when it reaches several, the routes that need one answer 422 `ad_account_required`.",
  }),
  safety: AdsSafety.optional(),
}).meta({ id: "AdsSelection" });
type AdsSelection = z.infer<typeof AdsSelectionBody>;

const MappingsBody = z.object({
  entities: z.array(z.object({ id: text({ min: 1, max: 64, trim: true }), name: text({ max: 200 }).optional(), field: z.enum(TARGETING_FIELDS) })).max(200),
}).meta({ id: "AdsMappings" });
const AdAccountList = z.object({
  data: z.array(z.object({ id: z.string().meta({ description: "What `account_id` takes" }), name: z.string().nullable() })),
}).meta({ id: "AdsAccountList" });

const safetyOf = (s: AdsSelection): SafetySettings => ({
  strict: s.strict_safety,
  minSeverity: s.safety?.min_severity ?? DEFAULT_SAFETY.minSeverity,
  maxChangesPerEntity: s.safety?.max_changes_per_entity ?? DEFAULT_SAFETY.maxChangesPerEntity,
  maxChangesPerRun: s.safety?.max_changes_per_run ?? DEFAULT_SAFETY.maxChangesPerRun,
  blocklist: s.safety?.blocklist ?? DEFAULT_SAFETY.blocklist,
});

const AdsProvider = z.object({
  id: z.string(), display_name: z.string(), connected: z.boolean(),
  configured: z.boolean().meta({ description: "This server has the provider's OAuth client (id and secret): false means GET …/auth answers 501 `provider_not_configured`" }),
  capabilities: z.object({ dry_run: z.boolean(), audience_estimate: z.boolean(), sandbox: z.boolean(), targeting: z.array(z.string()) }),
  base_path: z.string(),
}).meta({ id: "AdsProvider" });

export const PlanView = z.object({
  id: z.string(), provider: z.string(), status: z.string(), ad_account_id: z.string(), category: z.string(), strict_safety: z.boolean(),
  changes: z.array(z.unknown()), diff: z.array(z.unknown()), refused: z.array(z.unknown()),
  dry_run: z.object({
    ran: z.boolean(), passed: z.boolean().nullable(), results: z.array(z.unknown()),
    by: z.enum(["provider", "connector"]).meta({ description: "`provider`: the provider's own dry run; `connector`: our checks against the provider's documented constraints (it has no dry run)" }),
  }),
  plan_hash: z.string().meta({ description: "Hash of the plan's changes, calls and prior state: what `acknowledged_plan_hash` repeats" }),
  requires_acknowledgement: z.boolean().meta({ description: "strict_safety on a provider without a dry run: apply only with `acknowledged_plan_hash`" }),
  calls: z.array(z.unknown()).meta({ description: "The exact provider calls the apply makes (no credentials)" }),
  prior_state_hash: z.string(), expires_at: z.string(), created_at: z.string(),
  run_id: z.string().nullable().meta({ description: "The apply's run (set by POST …/apply)" }),
  results: z.array(z.unknown()).nullable().meta({ description: "Per change: ok, error, the provider's request id, what it made; `review` marks refusals for a person" }),
  status_reason: z.string().nullable(), applied_at: z.string().nullable(),
  rollback_of: z.string().nullable().meta({ description: "The applied plan this plan undoes" }),
}).meta({ id: "AdsPlan" });

const RunList = z.object({ data: z.array(PlanView), next_cursor: z.string().nullable() }).meta({ id: "AdsRunList" });
export const AdsApplyRequest = z.object({
  plan_id: Id.meta({ description: "A plan id from POST …/preview" }),
  acknowledged_plan_hash: text({ min: 1, max: 100 }).optional().meta({
    description: "The plan's `plan_hash`, repeated to say the plan was read as previewed. Required when the plan's `requires_acknowledgement` " +
      "is true (strict_safety on a provider without a dry run); checked whenever sent.",
  }),
}).meta({ id: "AdsApplyRequest" });
const AdsApplyAccepted = z.object({ plan_id: z.string(), run_id: z.string(), status: z.literal("applying") }).meta({ id: "AdsApplyAccepted" });
const EntityPage = z.object({ data: z.array(z.unknown()), next_cursor: z.string().nullable() }).meta({ id: "AdsEntityPage" });
const EntitiesQuery = z.object({ cursor: text({ min: 1, max: 2000 }).optional(), limit: z.coerce.number().int().min(1).max(200).default(50) });

export type PlanRow = Awaited<ReturnType<GatewayDeps["db"]["adsPlan"]["findFirst"]>> & {};
/** What an acknowledgement names: the plan exactly as previewed (its changes, the calls, the state they apply to). */
const planHashOf = (p: { changes: unknown; calls: unknown; priorStateHash: string }) => stateHash({ changes: p.changes, calls: p.calls, prior_state_hash: p.priorStateHash });
/** strict_safety without a provider dry run: a person (or the caller's code) must have read this exact plan. */
const needsAcknowledgement = (p: { provider: string; strictSafety: boolean }) =>
  p.strictSafety && !registry.ofKind("ads").find((c) => c.manifest.id === p.provider)?.capabilities.dryRun;

export function planView(p: PlanRow) {
  const dry = p.dryRun as DryRun | null;
  return {
    id: p.id, provider: p.provider, status: p.status, ad_account_id: p.adAccountId, category: p.category, strict_safety: p.strictSafety,
    changes: p.changes as unknown[], diff: p.diff as unknown[], refused: p.refused as unknown[], calls: p.calls as unknown[],
    dry_run: dry ?? { ran: false, passed: null, results: [], by: "provider" }, prior_state_hash: p.priorStateHash,
    plan_hash: planHashOf(p), requires_acknowledgement: needsAcknowledgement(p),
    expires_at: p.expiresAt.toISOString(), created_at: p.createdAt.toISOString(),
    run_id: p.runId, results: (p.results as unknown[] | null) ?? null, status_reason: p.statusReason, applied_at: p.appliedAt?.toISOString() ?? null,
    rollback_of: p.rollbackOf,
  };
}

type DryRun = { ran: boolean; passed: boolean | null; by: "provider" | "connector"; results: { change_id: string; ok: boolean; error: string | null; request_id: string | null; note?: string }[] };


/** The dry run of the calls, per change: the provider's own where it has one, else the connector's checks. */
async function dryRunOf(c: AdsConnector, client: AdsClient, adAccountId: string, calls: ProviderCall[]): Promise<DryRun> {
  const by = c.capabilities.dryRun ? "provider" : "connector";
  if (!calls.length) return { ran: false, passed: null, by, results: [] };
  const rs = await client.run(adAccountId, calls, { dryRun: true });
  return { ran: true, passed: rs.every((r) => r.ok), by, results: rs.map((r) => ({ change_id: r.change_id, ok: r.ok, error: r.error?.message ?? null, request_id: r.request_id ?? null, ...(r.note ? { note: r.note } : {}) })) };
}

type NewPlan = Omit<Prisma.AdsPlanUncheckedCreateInput, "id" | "status" | "createdAt" | "expiresAt">;
/** Stores a previewed plan (expiring after ADS_PLAN_TTL_SECONDS) and answers its view. */
async function storePlan(deps: GatewayDeps, plan: NewPlan) {
  const now = new Date();
  const row = await deps.db.adsPlan.create({ data: { ...plan, id: newId("pln"), status: "previewed", createdAt: now, expiresAt: new Date(now.getTime() + deps.config.ADS_PLAN_TTL_SECONDS * 1000) } });
  return { status: 201 as const, body: planView(row) };
}
const json = (v: unknown) => v as Prisma.InputJsonValue;

const RUN_STATUSES = ["applying", "issued", "applied", "partially_applied", "failed", "refused"] as const;
const RunsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: text({ min: 1, max: 64 }).optional(),
  status: z.enum(RUN_STATUSES).optional(),
});

/**
 * Locks a plan for a run (our apply, or an executor plan) and checks it may start one: previewed (so never run
 * twice), not expired, not empty, and acknowledged where strict_safety asks for it.
 */
export async function claimPreviewedPlan(tx: Tx, q: { accountId: string; provider: string; name: string; planId: string; acknowledgedPlanHash?: string }) {
  const [p] = await tx.$queryRawUnsafe<{ id: string; status: string; expires_at: Date; connection_id: string; changes: unknown[]; calls: unknown[]; prior_state_hash: string; strict_safety: boolean; run_id: string | null }[]>(
    "SELECT id, status, expires_at AT TIME ZONE 'UTC' AS expires_at, connection_id, changes, calls, prior_state_hash, strict_safety, run_id FROM ads_plans WHERE id = $1 AND account_id = $2 AND provider = $3 FOR UPDATE",
    q.planId, q.accountId, q.provider);
  if (!p) throw notFound("Plan");
  if (p.status !== "previewed") throw new ApiError("conflict", `This plan is ${p.status} (run ${p.run_id}): a plan is applied once; preview again for a new one`);
  if (p.expires_at.getTime() < Date.now()) throw new ApiError("conflict", `This plan expired at ${p.expires_at.toISOString()}: preview again (the targets may have changed)`);
  if (!p.changes.length) throw new ApiError("conflict", "This plan has no changes to apply");
  const hash = planHashOf({ changes: p.changes, calls: p.calls, priorStateHash: p.prior_state_hash });
  const at = { location: "body" as const, path: "acknowledged_plan_hash", code: "invalid_value" };
  if (q.acknowledgedPlanHash === undefined && needsAcknowledgement({ provider: q.provider, strictSafety: p.strict_safety }))
    throw new ApiError("acknowledgement_required", `${q.name} has no dry run: with strict_safety on, read the plan and send its plan_hash as acknowledged_plan_hash`, { errors: [{ ...at, message: "required: the plan's plan_hash" }] });
  if (q.acknowledgedPlanHash !== undefined && q.acknowledgedPlanHash !== hash)
    throw new ApiError("acknowledgement_required", "acknowledged_plan_hash is not this plan's plan_hash: read the plan again (GET …/plans/{id})", { errors: [{ ...at, message: "does not match the plan's plan_hash" }] });
  return p;
}

function routesOf(c: AdsConnector): RouteDef[] {
  const m = c.manifest;
  const base = basePathOf(m);
  const name = m.displayName;
  const authorize = `authorize via GET ${base}/auth`;

  async function connected(deps: GatewayDeps, accountId: string): Promise<{ conn: ConnectionRow; selection: AdsSelection | null; client: ReturnType<AdsConnector["client"]> }> {
    const conn = await connectionOrConflict(deps, accountId, m.id, { name, reconnect: authorize, usable: true });
    const parsed = AdsSelectionBody.safeParse(conn.selection ?? undefined);
    let accessToken: string;
    try {
      accessToken = await deps.connections.accessToken(conn);
    } catch (err) {
      return providerProblem(deps, conn, err, { name, reconnect: authorize });
    }
    const client = connectorOf(deps, m.id).client({ baseUrl: baseUrlOf(m, deps.config.PROVIDER_ENV), accessToken, env: deps.config.PROVIDER_ENV });
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
      if (!(err instanceof AdAccountChoiceError)) return providerProblem(deps, conn, err, { name, reconnect: authorize });
      throw new ApiError("ad_account_required", `No ad account is selected and ${err.message}: PUT ${base}/selection with account_id (GET ${base}/accounts lists them)`, {
        errors: [{ location: "body", path: "account_id", message: err.accounts.length ? `required: one of ${err.accounts.map((a) => a.id).join(", ")}` : "no ad account is reachable", code: "ad_account_required" }],
      });
    }
    return { conn, selection, client, adAccountId };
  }

  /** Mapped entities the selected ad account has at the provider, with a field each can take; else 422 naming them. */
  async function assertKnownEntities(deps: GatewayDeps, accountId: string, entities: { id: string; field: TargetingField }[]) {
    const { conn, client, adAccountId } = await selected(deps, accountId, "ad account is");
    let problems;
    try {
      problems = await checkMappedEntities(client, adAccountId, entities);
    } catch (err) {
      return providerProblem(deps, conn, err, { name, reconnect: authorize });
    }
    if (!problems.length) return;
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
        await deps.db.connection.update({ where: { id: conn.id }, data: { selection: body as Prisma.InputJsonValue } });
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
      responses: { 200: { description: "The ad accounts", schema: AdAccountList }, 409: { description: "`not_connected`" } },
      async handler({ deps, auth }) {
        const { conn, client } = await connected(deps, auth.accountId);
        try {
          return { status: 200, body: { data: await client.listAccounts() } };
        } catch (err) {
          return providerProblem(deps, conn, err, { name, reconnect: authorize });
        }
      },
    }),
    defineRoute({
      method: "get", path: `${base}/entities`, operationId: `list${m.operationName}Entities`, tag: TAG, auth: "apiKey",
      summary: `The selected ${name} ad account's campaign entities, to map to the trend category`,
      description: "Pass `next_cursor` back as `cursor`. `targeting` lists the fields a plan can change on the entity.",
      query: EntitiesQuery,
      responses: {
        200: { description: "A page of entities", schema: EntityPage }, 409: { description: "`not_connected`: no connection or no selection" },
        422: { description: "`ad_account_required`: no account_id selected and the connection reaches several ad accounts (named)" },
      },
      async handler({ deps, auth, query }) {
        const { conn, client, adAccountId } = await selected(deps, auth.accountId, "ad account is");
        try {
          return { status: 200, body: await client.listEntities(adAccountId, { cursor: query.cursor, limit: query.limit }) };
        } catch (err) {
          return providerProblem(deps, conn, err, { name, reconnect: authorize });
        }
      },
    }),
    defineRoute({
      method: "put", path: `${base}/mappings`, operationId: `put${m.operationName}Mappings`, tag: TAG, auth: "apiKey",
      summary: `Map ${name} campaign entities to the trend category (replaces the mapping)`,
      description:
        `Each entity is checked at ${name} against the selected ad account's entities (GET ${base}/entities): an id it does not have ` +
        "answers 422 naming `entities.<i>.id` (code `unknown_entity`), a field the entity's targeting is not 422 naming `entities.<i>.field`. " +
        "Needs a selection (409), except to clear the mapping (`entities: []`). Read it back with GET.",
      body: MappingsBody,
      responses: {
        200: { description: "The saved mapping", schema: MappingsBody }, 409: { description: "`not_connected`: no connection or no selection" },
        422: { description: "`validation_failed`: an entity the ad account does not have, or a field it cannot change; `ad_account_required`" },
      },
      async handler({ deps, auth, body }) {
        const bad = body.entities.findIndex((e) => !c.capabilities.targeting.includes(e.field));
        if (bad >= 0) throw new ApiError("validation_failed", `entities.${bad}.field: ${name} plans change ${c.capabilities.targeting.join(", ")}`, {
          errors: [{ location: "body", path: `entities.${bad}.field`, message: `one of ${c.capabilities.targeting.join(", ")}`, code: "invalid_value" }] });
        if (body.entities.length) await assertKnownEntities(deps, auth.accountId, body.entities);
        else await connectionOrConflict(deps, auth.accountId, m.id, { name, reconnect: authorize, usable: false }); // clearing needs no provider
        await deps.db.$transaction([
          deps.db.adsMapping.deleteMany({ where: { accountId: auth.accountId, provider: m.id } }),
          deps.db.adsMapping.createMany({ data: body.entities.map((e) => ({ accountId: auth.accountId, provider: m.id, entityId: e.id, entityName: e.name ?? null, field: e.field })) }),
        ]);
        return { status: 200, body };
      },
    }),
    defineRoute({
      method: "get", path: `${base}/mappings`, operationId: `get${m.operationName}Mappings`, tag: TAG, auth: "apiKey",
      summary: `The saved ${name} mapping`,
      description: "The mapped entities as PUT saved them, by id; `entities` is empty when nothing is mapped.",
      responses: { 200: { description: "The saved mapping", schema: MappingsBody }, 409: { description: "`not_connected`" } },
      async handler({ deps, auth }) {
        await connectionOrConflict(deps, auth.accountId, m.id, { name, reconnect: authorize, usable: false });
        const rows = await deps.db.adsMapping.findMany({ where: { accountId: auth.accountId, provider: m.id }, orderBy: { entityId: "asc" } });
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
        `targets changed or the plan expired (ADS_PLAN_TTL_SECONDS). ${c.capabilities.dryRun ? `${name} has a dry run.` : `${name} has no dry run.`}`,
      responses: {
        201: { description: "The plan", schema: PlanView }, 409: { description: "`not_connected`: no connection, selection or mapping" },
        422: { description: "`ad_account_required`: no account_id selected and the connection reaches several ad accounts (named in the detail and `errors`)" },
      },
      async handler({ deps, auth }) {
        const { conn, selection, client, adAccountId } = await selected(deps, auth.accountId, "ad account and category are");
        const entities = await deps.db.adsMapping.findMany({ where: { accountId: auth.accountId, provider: m.id }, orderBy: { entityId: "asc" } });
        if (!entities.length) throw new ApiError("not_connected", `No campaign entities are mapped: PUT ${base}/mappings first`);
        const cat = selection.trend_category;
        const rows = await deps.db.trend.findMany({
          where: { accountId: auth.accountId, status: "active", stage: { in: POSITIVE_STAGES }, OR: [{ category: cat }, { category: { startsWith: `${cat}/` } }] },
          orderBy: { velocity: "desc" }, take: 50,
        });
        const trends: PlanTrend[] = rows.map((t) => ({ id: t.id, name: t.name, category: t.category, severity: t.severity as Severity, sentiment: t.sentiment }));
        let plan, calls, prior: EntityTargeting[], dry: DryRun;
        try {
          prior = await readTargets(client, adAccountId, entities.map((e) => ({ id: e.entityId, field: e.field as TargetingField })));
          const resolved = new Map<TargetingField, Map<string, TargetingItem[]>>();
          for (const f of new Set(entities.map((e) => e.field as TargetingField))) resolved.set(f, await client.resolveItems(adAccountId, f, trends.map((t) => t.name)));
          plan = computePlan({ trends, entities: entities.map((e) => ({ id: e.entityId, name: e.entityName ?? undefined, field: e.field as TargetingField })), prior, resolved, safety: safetyOf(selection) });
          calls = client.calls(adAccountId, plan.changes, prior);
          // The provider's verdict per change; what it refuses leaves the plan (refused, with its reason), so what is
          // applied is exactly what passed the dry run.
          dry = await dryRunOf(c, client, adAccountId, calls);
          const failed = new Map(dry.results.filter((r) => !r.ok).map((r) => [r.change_id, r]));
          if (failed.size) {
            for (const ch of plan.changes.filter((x) => failed.has(x.id)))
              plan.refused.push({ change_id: ch.id, entity_id: ch.entity_id, field: ch.field, item: ch.item.text, trend_id: ch.trend_id, rule: "dry_run_failed", reason: `${name}'s dry run refused it: ${failed.get(ch.id)!.error ?? "refused"}` });
            plan.changes = plan.changes.filter((x) => !failed.has(x.id));
            for (const d of plan.diff) {
              const gone = new Set(d.changes.filter((x) => failed.has(x.change_id)).map((x) => x.item));
              d.changes = d.changes.filter((x) => !failed.has(x.change_id));
              d.after = d.after.filter((x) => !gone.has(x) || d.before.includes(x));
            }
            calls = client.calls(adAccountId, plan.changes, prior);
          }
        } catch (err) {
          return providerProblem(deps, conn, err, { name, reconnect: authorize });
        }
        return storePlan(deps, {
          accountId: auth.accountId, provider: m.id, connectionId: conn.id, adAccountId, category: cat, strictSafety: selection.strict_safety,
          changes: json(plan.changes), calls: json(calls), diff: json(plan.diff), refused: json(plan.refused), dryRun: json(dry),
          priorState: json(prior), priorStateHash: plan.prior_state_hash,
        });
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
        let rows: OutboxRow[] = [];
        const reply = await atomically(async (tx) => {
          const p = await claimPreviewedPlan(tx, { accountId: auth.accountId, provider: m.id, name, planId: body.plan_id, acknowledgedPlanHash: body.acknowledged_plan_hash });
          rows = await addOutboxMessages(tx, [{ queue: QUEUES.adsApplies, accountId: auth.accountId, connectionId: p.connection_id, subjectId: p.id, dedupKey: p.id, payload: { plan_id: p.id } }]);
          const runId = rows[0].id;
          await tx.adsPlan.update({ where: { id: p.id }, data: { status: "applying", runId } });
          return { status: 202, body: { plan_id: p.id, run_id: runId, status: "applying" as const } };
        });
        await dispatchAfterCommit(deps, rows);
        return reply;
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
      params: z.object({ id: Id }),
      responses: { 201: { description: "The rollback plan", schema: PlanView }, 404: { description: "No such plan" }, 409: { description: "`conflict`" } },
      async handler({ deps, auth, params }) {
        const applied = await deps.db.adsPlan.findFirst({ where: { id: params.id, accountId: auth.accountId, provider: m.id } });
        if (!applied) throw notFound("Plan");
        if (applied.status !== "applied" && applied.status !== "partially_applied") throw new ApiError("conflict", `This plan is ${applied.status}: only an applied plan can be rolled back`);
        const open = await deps.db.adsPlan.findFirst({ where: { rollbackOf: applied.id, status: { in: ["previewed", "applying", "applied", "partially_applied"] } } });
        if (open) throw new ApiError("conflict", `Rollback plan ${open.id} of this plan is ${open.status}: a plan is rolled back once`);
        const { conn, client } = await connected(deps, auth.accountId);
        const results = new Map(((applied.results as { change_id: string; ok: boolean }[] | null) ?? []).map((r) => [r.change_id, r.ok]));
        const done = (applied.changes as unknown as TargetingChange[]).filter((ch) => results.get(ch.id));
        const prior0 = applied.priorState as unknown as EntityTargeting[];
        let prior: EntityTargeting[], changes: TargetingChange[], calls: ProviderCall[], dry: DryRun;
        try {
          prior = await readTargets(client, applied.adAccountId, prior0.map((t) => ({ id: t.entity_id, field: t.field })));
          const now = new Map(prior.map((t) => [`${t.entity_id}|${t.field}`, new Map(t.items.map((i) => [i.key, i]))]));
          changes = done.flatMap((ch, i): TargetingChange[] => {
            const present = now.get(`${ch.entity_id}|${ch.field}`)?.get(ch.item.key);
            if (ch.op === "add" && present) return [{ ...ch, id: `rb_${i + 1}`, op: "remove", item: present }]; // its resource as read now
            if (ch.op === "remove" && !present) return [{ ...ch, id: `rb_${i + 1}`, op: "add" }];
            return []; // already undone (by someone, or the provider)
          });
          calls = client.calls(applied.adAccountId, changes, prior);
          dry = await dryRunOf(c, client, applied.adAccountId, calls);
        } catch (err) {
          return providerProblem(deps, conn, err, { name, reconnect: authorize });
        }
        const diff = prior.map((t) => {
          const mine = changes.filter((x) => x.entity_id === t.entity_id && x.field === t.field);
          const removed = new Set(mine.filter((x) => x.op === "remove").map((x) => x.item.key));
          return {
            entity_id: t.entity_id, entity_name: null, field: t.field, before: t.items.map((x) => x.text),
            after: [...t.items.filter((x) => !removed.has(x.key)).map((x) => x.text), ...mine.filter((x) => x.op === "add").map((x) => x.item.text)],
            changes: mine.map((x) => ({ change_id: x.id, op: x.op, item: x.item.text, trend: null })),
          };
        });
        return storePlan(deps, {
          accountId: auth.accountId, provider: m.id, connectionId: conn.id, adAccountId: applied.adAccountId, category: applied.category, strictSafety: applied.strictSafety,
          changes: json(changes), calls: json(calls), diff: json(diff), refused: [], dryRun: json(dry), priorState: json(prior),
          priorStateHash: stateHash(hashablePrior(prior)), rollbackOf: applied.id,
        });
      },
    }),
    defineRoute({
      method: "get", path: `${base}/runs`, operationId: `list${m.operationName}Runs`, tag: TAG, auth: "apiKey",
      summary: `Applied ${name} plans (runs), newest first`,
      description: "Every plan that was applied (or is being applied), rollbacks included, with its status and per-change results. Pass `next_cursor` back as `cursor`.",
      query: RunsQuery,
      responses: { 200: { description: "A page of runs", schema: RunList } },
      async handler({ deps, auth, query }) {
        const rows = await deps.db.adsPlan.findMany({
          where: { accountId: auth.accountId, provider: m.id, runId: { not: null }, ...(query.status ? { status: query.status } : {}), ...(query.cursor ? { runId: { lt: query.cursor } } : {}) },
          orderBy: { runId: "desc" }, take: query.limit + 1,
        });
        const page = rows.slice(0, query.limit);
        return { status: 200, body: { data: page.map(planView), next_cursor: rows.length > query.limit ? page[page.length - 1].runId : null } };
      },
    }),
    defineRoute({
      method: "get", path: `${base}/plans/{id}`, operationId: `get${m.operationName}Plan`, tag: TAG, auth: "apiKey",
      summary: `One ${name} plan`,
      params: z.object({ id: Id }),
      responses: { 200: { description: "The plan", schema: PlanView }, 404: { description: "No such plan" } },
      async handler({ deps, auth, params }) {
        const p = await deps.db.adsPlan.findFirst({ where: { id: params.id, accountId: auth.accountId, provider: m.id } });
        if (!p) throw notFound("Plan");
        return { status: 200, body: planView(p) };
      },
    }),
  ];
}

const providersRoute = defineRoute({
  method: "get", path: "/api/integrations/ads/providers", operationId: "listAdsProviders", tag: TAG, auth: "apiKey",
  summary: "The ads providers: display name, whether connected, whether this server can connect it (`configured`), capabilities",
  responses: { 200: { description: "The providers", schema: z.object({ data: z.array(AdsProvider) }) } },
  async handler({ deps, auth }) {
    const ads = deps.registry.ofKind("ads");
    const conns = await deps.db.connection.findMany({ where: { accountId: auth.accountId, provider: { in: ads.map((c) => c.manifest.id) } }, select: { provider: true, status: true } });
    return {
      status: 200,
      body: {
        data: ads.map((c) => ({
          id: c.manifest.id, display_name: c.manifest.displayName, connected: conns.some((x) => x.provider === c.manifest.id && x.status !== "needs_reauth"),
          configured: !("missing" in oauthClientOf(c.manifest, deps.config.PROVIDER_ENV)),
          capabilities: { dry_run: c.capabilities.dryRun, audience_estimate: c.capabilities.audienceEstimate, sandbox: c.capabilities.sandbox, targeting: c.capabilities.targeting },
          base_path: basePathOf(c.manifest),
        })),
      },
    };
  },
});

export const adsRoutes: RouteDef[] = [providersRoute, ...PROVIDERS.flatMap(routesOf)];
