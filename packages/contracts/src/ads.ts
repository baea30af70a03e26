import { z } from "zod";
import { Id, pageQuery, text, Timestamp } from "./common.ts";
import { CategoryPath } from "./signals.ts";
import { SEVERITIES } from "./vocabulary.ts";

// The ads connectors' API: the selection and mapping a plan is computed from, the plan as previewed and applied
// (its runs), and executor plans for callers that make the provider writes themselves. Provider specifics (how a
// change becomes a provider call) live in the providers' folders.

/** The targeting a plan may change; budgets, bids and schedules are never among them. */
export const ADS_TARGETING_FIELDS = ["keywords", "interests"] as const;
export type AdsTargetingField = (typeof ADS_TARGETING_FIELDS)[number];

/** strict_safety's limits when a selection leaves them out (the blocklist's default is the ads engine's). */
export const ADS_SAFETY_DEFAULTS = { minSeverity: "medium", maxChangesPerEntity: 10, maxChangesPerRun: 50 } as const;

export const AdsSafety = z.object({
  min_severity: z.enum(SEVERITIES).optional().meta({ description: `Trends below this are ignored (default ${ADS_SAFETY_DEFAULTS.minSeverity})` }),
  max_changes_per_entity: z.number().int().min(1).max(100).optional().meta({ description: `Default ${ADS_SAFETY_DEFAULTS.maxChangesPerEntity}` }),
  max_changes_per_run: z.number().int().min(1).max(1000).optional().meta({ description: `Default ${ADS_SAFETY_DEFAULTS.maxChangesPerRun}` }),
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
export type AdsSelection = z.infer<typeof AdsSelectionBody>;

export const AdsMappingsBody = z.object({
  entities: z.array(z.object({ id: text({ min: 1, max: 64, trim: true }), name: text({ max: 200 }).optional().meta({
    description: "The entity's name as plans show it (`diff[].entity_name`); left out, the name GET …/entities lists for it is saved",
  }), field: z.enum(ADS_TARGETING_FIELDS) })).max(200)
    // An entity is mapped once (its id is the mapping's key): a repeat is the client's to fix, refused before any
    // provider call or write, not a conflict to retry.
    .superRefine((entities, ctx) => {
      const first = new Map<string, number>();
      entities.forEach((e, i) => {
        const at = first.get(e.id);
        if (at === undefined) first.set(e.id, i);
        else ctx.addIssue({ code: "custom", path: [i, "id"], message: `entity ${e.id} is already at entities.${at}: list each entity once`, params: { code: "duplicate_entity" }, input: e.id });
      });
    }),
}).meta({ id: "AdsMappings" });
export type AdsMappings = z.infer<typeof AdsMappingsBody>;

export const AdsAccountList = z.object({
  data: z.array(z.object({ id: z.string().meta({ description: "What `account_id` takes" }), name: z.string().nullable().meta({ description: "The provider's account name; null when the provider would not tell it (a Google customer the token lists but may not read)" }) })),
}).meta({ id: "AdsAccountList" });

export const AdsProvider = z.object({
  id: z.string(), display_name: z.string(), connected: z.boolean(),
  configured: z.boolean().meta({ description: "This server has the provider's OAuth client (id and secret): false means GET …/auth answers 501 `provider_not_configured`" }),
  capabilities: z.object({ dry_run: z.boolean(), audience_estimate: z.boolean(), sandbox: z.boolean(), targeting: z.array(z.string()) }),
  base_path: z.string(),
}).meta({ id: "AdsProvider" });
export const AdsProviderList = z.object({ data: z.array(AdsProvider) });

export const AdsEntitiesQuery = pageQuery({ limit: 50, max: 200, cursor: "opaque" });
export const AdsEntityPage = z.object({ data: z.array(z.unknown()), next_cursor: z.string().nullable() }).meta({ id: "AdsEntityPage" });

/** A plan's dry run: per change, the provider's verdict (or the connector's checks where the provider has none). */
export const AdsDryRun = z.object({
  ran: z.boolean(), passed: z.boolean().nullable(),
  results: z.array(z.object({ change_id: z.string(), ok: z.boolean(), error: z.string().nullable(), request_id: z.string().nullable(), note: z.string().optional() })),
  by: z.enum(["provider", "connector"]).meta({ description: "`provider`: the provider's own dry run; `connector`: our checks against the provider's documented constraints (it has no dry run)" }),
});
export type AdsDryRun = z.infer<typeof AdsDryRun>;

/**
 * Why a plan (or one entity's diff row) has no changes: machine-readable, so a client can say what to do about it.
 * `no_rising_trends`: no trend of the category is rising; `no_interest_matched` / `no_keyword_matched`: the provider's
 * lookup found nothing for the trends' terms; `all_refused`: every change was refused (see `refused`);
 * `already_targeted`: the entities target all of it already; `nothing_to_undo` (rollbacks): nothing left to undo.
 */
// In precedence order: a plan whose entities differ gives the first its rows give.
export const ADS_EMPTY_REASONS = ["no_rising_trends", "no_interest_matched", "no_keyword_matched", "all_refused", "already_targeted", "nothing_to_undo"] as const;
export type AdsEmptyReason = (typeof ADS_EMPTY_REASONS)[number];

export const AdsPlanView = z.object({
  id: z.string(), provider: z.string(), status: z.string(), ad_account_id: z.string(), category: z.string(), strict_safety: z.boolean(),
  changes: z.array(z.unknown()),
  diff: z.array(z.unknown()).meta({
    description: "Per mapped entity: `entity_id`, `entity_name` (as the provider lists it), `field`, `before`, `after`, its `changes` with the trend behind " +
      "each, and `empty_reason` / `empty_detail` when it gets no change (as on the plan)",
  }),
  refused: z.array(z.unknown()),
  empty_reason: z.enum(ADS_EMPTY_REASONS).nullable().meta({
    description: "Why `changes` is empty; null when the plan has changes. `no_rising_trends`: no trend of the category is emerging, rising or peaking; " +
      "`no_interest_matched` / `no_keyword_matched`: the provider's lookup found nothing for the trends' terms; `already_targeted`: the mapped " +
      "entities already target everything the trends resolve to; `all_refused`: the guardrails or the dry run refused every change (see `refused`); " +
      "`nothing_to_undo`: a rollback finds nothing of the applied plan left to undo",
  }),
  empty_detail: z.string().nullable().meta({
    description: "The reason for people, naming what was looked at (e.g. the trend terms searched in the provider's interest search); null when the plan has changes",
  }),
  dry_run: AdsDryRun,
  plan_hash: z.string().meta({ description: "Hash of the plan's changes, calls and prior state: what `acknowledged_plan_hash` repeats" }),
  requires_acknowledgement: z.boolean().meta({ description: "strict_safety on a provider without a dry run: apply only with `acknowledged_plan_hash`" }),
  calls: z.array(z.unknown()).meta({ description: "The exact provider calls the apply makes (no credentials)" }),
  prior_state_hash: z.string(), expires_at: z.string(), created_at: z.string(),
  run_id: z.string().nullable().meta({ description: "The apply's run (set by POST …/apply)" }),
  results: z.array(z.unknown()).nullable().meta({ description: "Per change: ok, error, the provider's request id, what it made; `review` marks refusals for a person" }),
  status_reason: z.string().nullable(), applied_at: z.string().nullable(),
  rollback_of: z.string().nullable().meta({ description: "The applied plan this plan undoes" }),
  approved_by: z.string().nullable().meta({ description: "Who approved it from an operator card (`chat:<workspace>/<user>`), when it was applied that way" }),
}).meta({ id: "AdsPlan" });
export type AdsPlanView = z.infer<typeof AdsPlanView>;

export const ADS_RUN_STATUSES = ["applying", "issued", "applied", "partially_applied", "failed", "refused"] as const;
// Runs are ordered by run id: the outbox message id (obx) for our applies, a run id (run) for executor plans.
export const AdsRunsQuery = pageQuery({ limit: 20, max: 100, cursor: { ids: ["obx", "run"] } }).extend({
  status: z.enum(ADS_RUN_STATUSES).optional(),
});
export const AdsRunList = z.object({ data: z.array(AdsPlanView), next_cursor: z.string().nullable() }).meta({ id: "AdsRunList" });

export const AdsApplyRequest = z.object({
  plan_id: Id.meta({ description: "A plan id from POST …/preview" }),
  acknowledged_plan_hash: text({ min: 1, max: 100 }).optional().meta({
    description: "The plan's `plan_hash`, repeated to say the plan was read as previewed. Required when the plan's `requires_acknowledgement` " +
      "is true (strict_safety on a provider without a dry run); checked whenever sent.",
  }),
}).meta({ id: "AdsApplyRequest" });
export const AdsApplyAccepted = z.object({ plan_id: z.string(), run_id: z.string(), status: z.literal("applying") }).meta({ id: "AdsApplyAccepted" });

// ---- Executor plans ------------------------------------------------------------------------------------------------

export const AdsExecutorStep = z.object({
  seq: z.number().int(),
  change_ids: z.array(z.string()),
  request: z.unknown().meta({ description: "ExecutorRequest: method, absolute url, headers, body, and `credentials` (where your own token goes)" }),
  dry_run: z.unknown().meta({ description: "The provider's validate-only variant of `request` (null: it has none). Run it first." }),
  precondition: z.object({
    targets: z.array(z.unknown()).meta({ description: "The step's entities' targeting as read at preview: entity_id, field, items (key, text, match type or id)" }),
    state_hash: z.string(),
  }).meta({ description: "Read the targets first; if they differ from `targets`, do not run the step (report `skipped` with `precondition_held: false`)" }),
  rollback: z.array(z.unknown()).meta({ description: "Requests that undo the step; `{{resource:<change_id>}}` stands for what the step's response named for that change" }),
}).meta({ id: "AdsExecutorStep" });

export const AdsExecutorPlanDocument = z.object({
  plan_id: z.string(), provider: z.string(), ad_account_id: z.string(), plan_hash: z.string(), prior_state_hash: z.string(),
  steps: z.array(AdsExecutorStep), report: z.object({ url: z.string(), by: z.string() }),
}).meta({ id: "AdsExecutorPlanDocument" });
export type AdsExecutorPlanDocument = z.infer<typeof AdsExecutorPlanDocument>;

export const AdsExecutorPlan = z.object({
  plan_id: z.string(), run_id: z.string(),
  executor_plan: z.string().meta({ description: "The signed plan: a compact JWS (JWT, alg EdDSA, typ `trendgate-executor-plan+jwt`); `plan` claim = the document, `aud` = your account id, `jti` = the plan id" }),
  kid: z.string(), jwks_url: z.string(), expires_at: z.string(),
  plan: AdsExecutorPlanDocument.meta({ description: "The signed document, for reading: execute the copy inside the verified token" }),
}).meta({ id: "AdsExecutorPlan" });

export const AdsExecutorStepResult = z.object({
  seq: z.number().int().min(1),
  status: z.enum(["succeeded", "failed", "skipped"]),
  precondition_held: z.boolean().optional().meta({ description: "false: the targets differed from the precondition (the step was not run)" }),
  http_status: z.number().int().min(100).max(599).optional(),
  request_id: text({ max: 200 }).optional().meta({ description: "The provider's request id" }),
  error: text({ max: 2000 }).optional(),
  changes: z.array(z.object({ change_id: text({ min: 1, max: 64 }), ok: z.boolean(), error: text({ max: 2000 }).optional(), resource: text({ max: 500 }).optional() })).optional()
    .meta({ description: "Per change, where the provider answered per item (e.g. a partial failure); default: the step's status for all its changes" }),
});
export type AdsExecutorStepResult = z.infer<typeof AdsExecutorStepResult>;

export const AdsExecutorResults = z.object({
  executor_plan: text({ min: 20, max: 200_000 }).meta({ description: "The token exactly as issued" }),
  executed_at: Timestamp,
  steps: z.array(AdsExecutorStepResult).min(1).max(1000),
}).meta({ id: "AdsExecutorResults" });

export const ExecutorKeys = z.object({
  keys: z.array(z.object({ kty: z.string(), crv: z.string(), x: z.string(), kid: z.string(), alg: z.string(), use: z.string() })),
}).meta({ id: "ExecutorKeys" });

/** POST …/plans/{id}/request-approval: the operator item whose card asks for the plan's approval. */
export const AdsApprovalRequested = z.object({
  plan_id: z.string(),
  plan_hash: z.string().meta({ description: "The hash the card's approve button is bound to" }),
  item_id: z.string().meta({ description: "The operator item (GET /api/operator/items/{item_id}); its card is posted to the route it matches" }),
  created: z.boolean().meta({ description: "false when the plan already had its approval item" }),
}).meta({ id: "AdsApprovalRequested" });
