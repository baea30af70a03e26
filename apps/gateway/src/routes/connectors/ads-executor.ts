import { claimPreviewedPlan, executorReportProblem, executorSteps, loadExecutorSigningKey, recordExecutorResults, signExecutorPlan, verifyExecutorPlan, type ExecutorSigningKey } from "@trendgate/ads";
import type { AdsConnector } from "@trendgate/connector-ads";
import { baseUrlOf } from "@trendgate/connector-core";
import type { ConnectorRegistry } from "@trendgate/connectors";
import { AdsApplyRequest, AdsExecutorPlan, AdsExecutorResults, AdsPlanView, ExecutorKeys, type AdsExecutorPlanDocument } from "@trendgate/contracts";
import { markPlanIssued, newId } from "@trendgate/db";
import { ApiError, notFound } from "../../http/api-error.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import type { GatewayDeps } from "../../deps.ts";
import { planReply } from "./ads.ts";
import { planProblem } from "./ads-problem.ts";
import { basePathOf } from "./paths.ts";

// Executor plans: for callers that make provider writes from their own runtime and credential
// vault. A previewed plan is issued instead of applied: the exact provider requests without credentials, each step
// with the precondition it assumes (the targets as read at preview, and their hash), its validate-only variant where
// the provider has a dry run, and the requests that undo it. The plan is a JWT signed with Ed25519 (packages/ads
// executor-signing), verifiable with the keys at /.well-known/executor-keys; it is single use (the plan leaves
// `previewed`, so it is neither applied by us nor issued again) and expires after EXECUTOR_PLAN_TTL_SECONDS. The
// caller reports per-step results once, with the token it was given; they are recorded like our own runs (finishRun:
// the same statuses, review marks and operator item).

const TAG = "Ads executor";
const RESULTS_PATH = "/api/integrations/ads/executor/results";
const KEYS_PATH = "/.well-known/executor-keys";
let cached: { jwk: string; key: Promise<ExecutorSigningKey> } | null = null;
/** The configured signing key (parsed once per process); 501 when none is configured. */
function signingKey(deps: GatewayDeps): Promise<ExecutorSigningKey> {
  const jwk = deps.config.EXECUTOR_SIGNING_KEY;
  if (!jwk) throw new ApiError("provider_not_configured", "Executor plans need EXECUTOR_SIGNING_KEY (a private Ed25519 JWK; `npm run setup` writes one into .env)");
  if (cached?.jwk !== jwk) cached = { jwk, key: loadExecutorSigningKey(jwk) };
  return cached.key;
}

function issueRoute(c: AdsConnector): RouteDef {
  const m = c.manifest;
  const base = basePathOf(m);
  return defineRoute({
    method: "post", path: `${base}/executor/plans`, operationId: `issue${m.operationName}ExecutorPlan`, tag: TAG, auth: "apiKey", idempotent: "transactional",
    summary: `Issue a previewed ${m.displayName} plan as a signed executor plan (you make the writes)`,
    description:
      "Instead of POST …/apply: the plan's exact provider requests, signed (Ed25519 JWT; verify with the keys at " + KEYS_PATH + "), for your own " +
      "runtime and credentials. Per step: its validate-only variant (run it first, where present), its precondition (read the targets; if they differ, " +
      "skip the step: the plan is stale), and the requests that undo it. The plan is single use (it is not applied by us, nor issued again) and must be " +
      `started before \`expires_at\`; report the results to POST ${RESULTS_PATH} once, within EXECUTOR_REPORT_WINDOW_SECONDS after that. ` +
      "The same strict_safety acknowledgement as apply.",
    body: AdsApplyRequest,
    responses: {
      201: { description: "The signed plan", schema: AdsExecutorPlan }, 404: { description: "No such plan" },
      409: { description: "`conflict`: applied or issued before, expired, or nothing to apply" },
      422: { description: "`acknowledgement_required`" }, 501: { description: "`provider_not_configured`: no EXECUTOR_SIGNING_KEY" },
    },
    async handler({ deps, auth, body, atomically }) {
      const key = await signingKey(deps);
      return atomically(async (tx) => {
        const p = await claimPreviewedPlan(tx, { accountId: auth.accountId, connector: c, planId: body.plan_id, acknowledgedPlanHash: body.acknowledged_plan_hash })
          .catch(planProblem);
        // Requests are built, never sent: the client needs no token here.
        const client = c.client({ baseUrl: baseUrlOf(m, deps.config.PROVIDER_ENV), accessToken: "", env: deps.config.PROVIDER_ENV });
        const steps = executorSteps(c, client, p);
        if (!steps) throw new ApiError("conflict", `${m.displayName} plans cannot be executed by a caller yet: apply them with POST ${base}/apply`);
        const now = Date.now();
        const expiresAt = new Date(now + deps.config.EXECUTOR_PLAN_TTL_SECONDS * 1000);
        const reportBy = new Date(expiresAt.getTime() + deps.config.EXECUTOR_REPORT_WINDOW_SECONDS * 1000);
        const doc: AdsExecutorPlanDocument = {
          plan_id: p.id, provider: m.id, ad_account_id: p.adAccountId, plan_hash: planReply(deps, p).plan_hash, prior_state_hash: p.priorStateHash, steps,
          report: { url: new URL(RESULTS_PATH, deps.config.PUBLIC_BASE_URL).toString(), by: reportBy.toISOString() },
        };
        const token = await signExecutorPlan(key, doc, { planId: p.id, audience: auth.accountId, ttlSeconds: deps.config.EXECUTOR_PLAN_TTL_SECONDS, issuer: deps.config.PUBLIC_BASE_URL });
        const runId = newId("run");
        await markPlanIssued(tx, p.id, { runId, executorExpiresAt: expiresAt, statusReason: "issued to a caller's executor: waiting for its results" });
        return {
          status: 201,
          body: { plan_id: p.id, run_id: runId, executor_plan: token, kid: key.kid, jwks_url: new URL(KEYS_PATH, deps.config.PUBLIC_BASE_URL).toString(), expires_at: expiresAt.toISOString(), plan: doc },
        };
      });
    },
  });
}

const resultsRoute = defineRoute({
  method: "post", path: RESULTS_PATH, operationId: "reportAdsExecutorResults", tag: TAG, auth: "apiKey", idempotent: "transactional",
  summary: "Report what your executor did with a signed plan (once)",
  description:
    "With the API key of the account the plan was issued to, the token as issued (checked: our signature, your account, within the report window), " +
    "and one result per step. Recorded like our own runs: `applied`, `partially_applied` (refused changes marked for review; an operator item when chat " +
    "is connected), `failed`, or `refused` when a precondition did not hold and nothing was written. Accepted once: a second report answers 409 " +
    "(send an Idempotency-Key to retry a report safely: the retry gets the first answer).",
  body: AdsExecutorResults,
  responses: {
    200: { description: "The plan with its recorded results", schema: AdsPlanView }, 404: { description: "No such plan for this account" },
    409: { description: "`conflict`: results were recorded already, or the plan was not issued to an executor" },
    422: { description: "`validation_failed`: a token that does not verify (tampered, another account's, past the report window), or steps that do not match the plan" },
    501: { description: "`provider_not_configured`: no EXECUTOR_SIGNING_KEY" },
  },
  async handler({ deps, auth, body, atomically }) {
    const key = await signingKey(deps);
    const bad = (path: string, message: string) => new ApiError("validation_failed", `${path}: ${message}`, { errors: [{ location: "body", path, message, code: "invalid_value" }] });
    let verified;
    try {
      verified = await verifyExecutorPlan(body.executor_plan, [key.publicJwk], {
        audience: auth.accountId, issuer: deps.config.PUBLIC_BASE_URL, clockTolerance: deps.config.EXECUTOR_REPORT_WINDOW_SECONDS,
      });
    } catch (err) {
      throw bad("executor_plan", `does not verify (${(err as { code?: string }).code ?? (err as Error).message}): report with the token exactly as issued, within its report window`);
    }
    const doc = verified.plan as unknown as AdsExecutorPlanDocument;
    const problem = executorReportProblem(doc, body.steps);
    if (problem) throw new ApiError("validation_failed", `${problem.path}: ${problem.message}`, { errors: [problem] });

    return atomically(async (tx) => {
      if (!verified.jti) throw notFound("Plan");
      const recorded = await recordExecutorResults(tx, deps, {
        accountId: auth.accountId, planId: verified.jti, doc, steps: body.steps, publicBaseUrl: deps.config.PUBLIC_BASE_URL,
        providerName: (id) => deps.registry.find("ads", id)?.manifest.displayName ?? id,
      }).catch(planProblem);
      return { status: 200, body: planReply(deps, recorded.plan), outbox: recorded.outbox };
    });
  },
});

const keysRoute = defineRoute({
  method: "get", path: KEYS_PATH, operationId: "getExecutorKeys", tag: TAG, auth: "public",
  summary: "The public keys that verify executor plans (a JWKS)",
  description: "Match the token's `kid`. Cache it for a while; fetch again on an unknown `kid` (the key was rotated).",
  responses: { 200: { description: "A JSON Web Key Set", schema: ExecutorKeys }, 501: { description: "No EXECUTOR_SIGNING_KEY" } },
  async handler({ deps, res }) {
    const key = await signingKey(deps);
    res.setHeader("cache-control", "public, max-age=300");
    return { status: 200, body: { keys: [key.publicJwk] } };
  },
});

/** One issue route per ads provider of the registry, and the routes every provider shares. */
export const adsExecutorRoutes = (registry: ConnectorRegistry): RouteDef[] => [...registry.ofKind("ads").map(issueRoute), resultsRoute, keysRoute];
