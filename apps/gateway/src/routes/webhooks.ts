import {
  AccountEventList, type BodyTemplate, CreateWebhookBody, TREND_EVENT_TYPES, text, ExecutionIdParam, ExecutionsQuery, pageQuery, QueuedDelivery, RecoverBody, RecoverResult, RotatedSecret,
  RotateSecretBody, subscriptionProblems, UpdateWebhookBody, Webhook, WebhookBacktest, WebhookExecution, WebhookPreviewBody, WebhookExecutionList, WebhookIdParam, WebhookList, WebhookPayload, WebhookWithSecret,
} from "@trendgate/contracts";
import { deliveryBody, serializePayload, templateProblem, testPayload, type DeliveryJob, type DeliveryToQueue } from "@trendgate/webhooks";
import {
  createTestDelivery, createWebhookSubscription, deleteWebhookSubscription, findAccountWebhook, findDelivery, findPendingDeliveries,
  findWebhookExecution, listAccountEvents, listWebhookExecutions, listWebhookSubscriptions, newId,
  pauseWebhookSubscription, reopenDelivery, reopenFailedDeliveries, resumeWebhookSubscription, saveWebhookSecret, updateWebhookSubscription,
  type PendingDeliveryFilter, type WebhookExecutionRow, type WebhookSubscriptionRow,
} from "@trendgate/db";
import { generateSecret } from "@trendgate/delivery";
import { backtestWebhook } from "../services/backtest/index.ts";
import { assertPublicDestination } from "../http/outbound-url.ts";
import { ApiError, notFound } from "../http/api-error.ts";
import { keysetPage } from "../http/paginate.ts";
import { defineRoute } from "../http/route.ts";
import type { GatewayDeps } from "../deps.ts";

const BASE = "/api/integrations/webhooks";
const TAG = "Webhooks";
const RECOVER_MAX_DAYS = 14;

type Row = WebhookSubscriptionRow;
type ExecRow = WebhookExecutionRow;
const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** The custom headers' names, in the order given; the sealed values are never opened for an answer. */
const headerNames = (r: Row) => r.headerNames;

export function toWebhook(r: Row): Webhook {
  return {
    id: r.id, url: r.url, trigger_type: r.triggerType as Webhook["trigger_type"], delivery_mode: r.deliveryMode as Webhook["delivery_mode"],
    threshold_value: r.thresholdValue, cooldown_seconds: r.cooldownSeconds, category: r.category, description: r.description,
    event_types: r.eventTypes as Webhook["event_types"], filter: (r.filter ?? null) as Webhook["filter"], header_names: headerNames(r),
    body_template: (r.bodyTemplate ?? null) as Webhook["body_template"],
    sensitivity: r.sensitivity as Webhook["sensitivity"], trigger_window_minutes: r.triggerWindowMinutes, recovery_window_minutes: r.recoveryWindowMinutes,
    rate_limit: r.rateLimit,
    status: r.status as Webhook["status"], disabled_reason: r.disabledReason, failing_since: iso(r.failingSince),
    secret_rotating_until: r.previousSecretExpiresAt && r.previousSecretExpiresAt > new Date() ? r.previousSecretExpiresAt.toISOString() : null,
    created_at: r.createdAt.toISOString(), updated_at: r.updatedAt.toISOString(),
  };
}

function toExecution(e: ExecRow): WebhookExecution {
  return {
    id: e.id, webhook_id: e.subscriptionId, delivery_id: e.deliveryId, attempt: e.attempt, trigger: e.trigger as WebhookExecution["trigger"],
    outcome: e.outcome as WebhookExecution["outcome"],
    request: { url: e.requestUrl, headers: e.requestHeaders as Record<string, string>, body_bytes: e.requestBodyBytes },
    response_status: e.responseStatus, response_body: e.responseBody, response_body_truncated: e.responseBodyTruncated,
    duration_ms: e.durationMs, error_class: e.errorClass as WebhookExecution["error_class"], error_message: e.errorMessage,
    next_retry_at: iso(e.nextRetryAt), created_at: e.createdAt.toISOString(),
  };
}

/** A body template that cannot render valid JSON for every event type the subscription may receive is refused, naming why. */
function assertTemplate(t: BodyTemplate | null | undefined, sub: { trigger_type: string; event_types?: readonly string[] | null }) {
  const problem = t ? templateProblem(t, sub.trigger_type === "event_types" ? sub.event_types ?? [] : TREND_EVENT_TYPES) : null;
  if (problem) {
    const path = t!.format === "custom" ? "body_template.template" : "body_template";
    throw new ApiError("validation_failed", `${path}: ${problem}`, { errors: [{ location: "body", path, message: problem, code: "invalid_template" }] });
  }
}

/** Custom headers sealed like the signing secret, their names kept in clear to show back; null clears them. */
function sealedHeaders(deps: GatewayDeps, headers: Record<string, string> | null) {
  const names = Object.keys(headers ?? {});
  return { headersCiphertext: names.length ? deps.secrets.seal(JSON.stringify(headers)) : null, headerNames: names };
}

async function findOwn(deps: GatewayDeps, accountId: string, id: string) {
  const row = await findAccountWebhook(deps.db, accountId, id);
  if (!row) throw notFound("Webhook");
  return row;
}


/**
 * The pending deliveries of a subscription to queue again (after resume/recover/replay), for the reply: the router
 * queues them after the commit, each only while its row still waits for that attempt; the sweeper catches any beyond
 * `limit`. A replay or recovery is the attempt's trigger whatever the delivery (a test one stays a test: `test`);
 * resumed deliveries (`null`) keep their own.
 */
async function pendingToQueue(deps: GatewayDeps, which: PendingDeliveryFilter, trigger: "recovery" | "replay" | null, limit = 1000): Promise<DeliveryToQueue[]> {
  const rows = await findPendingDeliveries(deps.db, which, limit);
  return rows.map((d) => ({
    job: {
      delivery_id: d.id, webhook_id: d.subscriptionId, attempt: d.attempts + 1, trigger: trigger ?? (d.trigger as DeliveryJob["trigger"]),
      test: d.trigger === "test", body: deliveryBody(d.payload),
    },
    delayMs: d.nextAttemptAt.getTime() - Date.now(),
    pendingAttempts: d.attempts,
  }));
}

export const webhookRoutes = [
  defineRoute({
    method: "post", path: BASE, operationId: "createWebhook", tag: TAG, auth: "apiKey", idempotent: "transactional",
    summary: "Create a signed webhook subscription",
    description: "The answer carries the signing secret (`secret`, `whsec_…`) once; it is never returned again. See docs/webhooks.md › Verifying signatures.",
    body: CreateWebhookBody,
    responses: { 201: { description: "Created", schema: WebhookWithSecret } },
    async handler({ deps, auth, body, atomically }) {
      assertPublicDestination(deps.guard, body.url, "url");
      assertTemplate(body.body_template, body);
      const secret = generateSecret();
      return atomically(async (tx) => {
        const row = await createWebhookSubscription(tx, {
          accountId: auth.accountId, url: body.url, triggerType: body.trigger_type, deliveryMode: body.delivery_mode,
          thresholdValue: body.threshold_value, cooldownSeconds: body.cooldown_seconds, category: body.category ?? null,
          description: body.description ?? null, eventTypes: body.event_types ?? [], filter: body.filter ?? null,
          ...sealedHeaders(deps, body.headers ?? null), bodyTemplate: body.body_template ?? null, secretCiphertext: deps.secrets.seal(secret),
          sensitivity: body.sensitivity, triggerWindowMinutes: body.trigger_window_minutes, recoveryWindowMinutes: body.recovery_window_minutes,
          rateLimit: body.rate_limit ?? null,
        });
        return { status: 201, body: { ...toWebhook(row), secret }, headers: { Location: `${BASE}/${row.id}`, "Cache-Control": "no-store" } }; // shown once: no cache keeps it
      });
    },
  }),
  defineRoute({
    method: "post", path: `${BASE}/preview`, operationId: "previewWebhook", tag: TAG, auth: "apiKey",
    summary: "Backtest a subscription's rules before saving: what it would have received over the last days",
    description: "Replays the account's stored trend events (what its detection passes published, up to 14 days back) through the rules: " +
      "trigger, category, filter, sensitivity, recovery window, trigger window (the detector re-assesses each held firing's trend at the window's end " +
      "from the stored buckets) and cooldown. Nothing is saved or sent. Mutes are not replayed (they hold events back for every destination). " +
      "Bounded: after BACKTEST_MAX_EVENTS events or BACKTEST_MAX_SECONDS the answer covers the history up to there, marked `truncated`; " +
      "an account runs at most BACKTEST_CONCURRENCY_PER_ACCOUNT backtests (webhook and chat ones together) at once.",
    body: WebhookPreviewBody,
    responses: {
      200: { description: "What it would have received (`truncated`: up to `to` only)", schema: WebhookBacktest },
      429: { description: "`too_many_backtests`: the account already runs BACKTEST_CONCURRENCY_PER_ACCOUNT backtests; retry after Retry-After seconds" },
    },
    async handler({ deps, auth, body }) {
      const rules = {
        triggerType: body.trigger_type, thresholdValue: body.threshold_value, category: body.category ?? null, eventTypes: body.event_types ?? [],
        filter: body.filter ?? null, sensitivity: body.sensitivity ?? "high", deliveryMode: body.delivery_mode, cooldownSeconds: body.cooldown_seconds,
        triggerWindowMinutes: body.trigger_window_minutes ?? 0, recoveryWindowMinutes: body.recovery_window_minutes ?? 0,
      };
      return { status: 200, body: await backtestWebhook(deps, auth.accountId, rules, body.days) };
    },
  }),
  defineRoute({
    method: "get", path: BASE, operationId: "listWebhooks", tag: TAG, auth: "apiKey",
    summary: "List webhook subscriptions, newest first", query: pageQuery({ limit: 50, max: 200, cursor: { ids: ["wh"] } }),
    responses: { 200: { description: "A page of subscriptions", schema: WebhookList } },
    async handler({ deps, auth, query }) {
      const body = await keysetPage(query, (p) => listWebhookSubscriptions(deps.db, auth.accountId, p), toWebhook);
      return { status: 200, body };
    },
  }),
  defineRoute({
    method: "get", path: `${BASE}/{webhook_id}`, operationId: "getWebhook", tag: TAG, auth: "apiKey",
    summary: "One webhook subscription (never its secret)", params: WebhookIdParam,
    responses: { 200: { description: "The subscription", schema: Webhook } },
    async handler({ deps, auth, params }) {
      return { status: 200, body: toWebhook(await findOwn(deps, auth.accountId, params.webhook_id)) };
    },
  }),
  defineRoute({
    method: "patch", path: `${BASE}/{webhook_id}`, operationId: "updateWebhook", tag: TAG, auth: "apiKey",
    summary: "Change a subscription's URL, trigger, threshold, cooldown, mode, category, description, event types, filter, sensitivity, windows, rate limit or headers",
    params: WebhookIdParam, body: UpdateWebhookBody,
    responses: { 200: { description: "The updated subscription", schema: Webhook } },
    async handler({ deps, auth, params, body }) {
      const current = await findOwn(deps, auth.accountId, params.webhook_id);
      assertPublicDestination(deps.guard, body.url, "url");
      // The rules between fields hold for the subscription as it will be; leaving event_types switches its list off.
      const triggerType = body.trigger_type ?? current.triggerType;
      const eventTypes = body.event_types ?? (triggerType === "event_types" ? current.eventTypes : []);
      const problems = subscriptionProblems({ trigger_type: triggerType, threshold_value: body.threshold_value ?? current.thresholdValue, event_types: eventTypes });
      if (problems.length) {
        throw new ApiError("validation_failed", `${problems.length} field(s) failed validation`, {
          errors: problems.map((p) => ({ location: "body", path: p.path.join("."), message: p.message, code: "invalid_combination" })),
        });
      }
      // The template as it will be, against the events the subscription will receive.
      assertTemplate(body.body_template === undefined ? current.bodyTemplate as BodyTemplate | null : body.body_template, { trigger_type: triggerType, event_types: eventTypes });
      const row = await updateWebhookSubscription(deps.db, params.webhook_id, {
        url: body.url, triggerType: body.trigger_type, deliveryMode: body.delivery_mode, thresholdValue: body.threshold_value,
        cooldownSeconds: body.cooldown_seconds, category: body.category, description: body.description, eventTypes,
        filter: body.filter, ...(body.headers === undefined ? {} : sealedHeaders(deps, body.headers)), bodyTemplate: body.body_template,
        sensitivity: body.sensitivity, triggerWindowMinutes: body.trigger_window_minutes, recoveryWindowMinutes: body.recovery_window_minutes,
        rateLimit: body.rate_limit,
      });
      return { status: 200, body: toWebhook(row) };
    },
  }),
  defineRoute({
    method: "delete", path: `${BASE}/{webhook_id}`, operationId: "deleteWebhook", tag: TAG, auth: "apiKey",
    summary: "Delete a subscription, its pending deliveries and its execution history", params: WebhookIdParam,
    responses: { 204: { description: "Deleted" } },
    async handler({ deps, auth, params }) {
      await findOwn(deps, auth.accountId, params.webhook_id);
      await deleteWebhookSubscription(deps.db, params.webhook_id);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: "post", path: `${BASE}/{webhook_id}/test`, operationId: "testWebhook", tag: TAG, auth: "apiKey", idempotent: "transactional",
    summary: "Send the deterministic test payload to the webhook's URL",
    description: "Queues a delivery whose body is the same every time for this subscription (category `test/webhook`), sent with `X-Webhook-Test: true`. It is signed, retried and recorded like any delivery; follow it in the executions. " +
      "A subscription deleted meanwhile (a DELETE racing the test) answers 404 and queues nothing.",
    params: WebhookIdParam,
    responses: { 202: { description: "Queued", schema: QueuedDelivery } },
    async handler({ deps, auth, params, atomically }) {
      const sub = await findOwn(deps, auth.accountId, params.webhook_id);
      const payload = testPayload(sub, deps.config.PUBLIC_BASE_URL);
      const id = newId("msg");
      const reply = await atomically(async (tx) => {
        // Deleted since findOwn (a DELETE racing this test): not found, and the transaction writes nothing.
        if (!(await createTestDelivery(tx, { id, accountId: sub.accountId, subscriptionId: sub.id, payload, velocity: payload.velocity }))) throw notFound("Webhook");
        return { status: 202, body: { delivery_id: id, webhook_id: sub.id, status: "queued" } };
      });
      return { ...reply, deliveries: [{ job: { delivery_id: id, webhook_id: sub.id, attempt: 1, trigger: "test", body: serializePayload(payload) } }] };
    },
  }),
  defineRoute({
    method: "get", path: `${BASE}/{webhook_id}/executions`, operationId: "listWebhookExecutions", tag: TAG, auth: "apiKey",
    summary: "Delivery attempts of a webhook, newest first (default 20, maximum 100 per page); filter by outcome, trigger and time",
    params: WebhookIdParam, query: ExecutionsQuery,
    responses: { 200: { description: "A page of executions", schema: WebhookExecutionList } },
    async handler({ deps, auth, params, query }) {
      await findOwn(deps, auth.accountId, params.webhook_id);
      const filter = {
        outcome: query.outcome, trigger: query.trigger,
        since: query.since ? new Date(query.since) : undefined, until: query.until ? new Date(query.until) : undefined,
      };
      const body = await keysetPage(query, (p) => listWebhookExecutions(deps.db, params.webhook_id, p, filter), toExecution);
      return { status: 200, body };
    },
  }),
  defineRoute({
    method: "post", path: `${BASE}/{webhook_id}/pause`, operationId: "pauseWebhook", tag: TAG, auth: "apiKey",
    summary: "Pause deliveries; firings while paused are held as pending deliveries and sent on resume", params: WebhookIdParam,
    responses: { 200: { description: "The paused subscription", schema: Webhook } },
    async handler({ deps, auth, params }) {
      await findOwn(deps, auth.accountId, params.webhook_id);
      const row = await pauseWebhookSubscription(deps.db, params.webhook_id);
      return { status: 200, body: toWebhook(row) };
    },
  }),
  defineRoute({
    method: "post", path: `${BASE}/{webhook_id}/resume`, operationId: "resumeWebhook", tag: TAG, auth: "apiKey",
    summary: "Resume a paused or disabled subscription and send its held deliveries", params: WebhookIdParam,
    responses: { 200: { description: "The active subscription", schema: Webhook } },
    async handler({ deps, auth, params }) {
      await findOwn(deps, auth.accountId, params.webhook_id);
      const row = await resumeWebhookSubscription(deps.db, params.webhook_id);
      return { status: 200, body: toWebhook(row), deliveries: await pendingToQueue(deps, { subscriptionId: row.id }, null) };
    },
  }),
  defineRoute({
    method: "post", path: `${BASE}/{webhook_id}/rotate-secret`, operationId: "rotateWebhookSecret", tag: TAG, auth: "apiKey", idempotent: "transactional",
    summary: "Rotate the signing secret; both secrets sign during the grace period", params: WebhookIdParam,
    body: RotateSecretBody.optional().transform((b) => b ?? RotateSecretBody.parse({})),
    responses: { 200: { description: "The new secret (shown once)", schema: RotatedSecret } },
    async handler({ deps, auth, params, body, atomically }) {
      const sub = await findOwn(deps, auth.accountId, params.webhook_id);
      const secret = generateSecret();
      const until = body.grace_period_seconds > 0 ? new Date(Date.now() + body.grace_period_seconds * 1000) : null;
      return atomically(async (tx) => {
        await saveWebhookSecret(tx, sub.id, { secretCiphertext: deps.secrets.seal(secret), previousSecretCiphertext: until ? sub.secretCiphertext : null, previousSecretExpiresAt: until });
        return { status: 200, body: { secret, previous_secret_expires_at: iso(until) }, headers: { "Cache-Control": "no-store" } };
      });
    },
  }),
  defineRoute({
    method: "post", path: `${BASE}/{webhook_id}/executions/{execution_id}/replay`, operationId: "replayWebhookExecution", tag: TAG, auth: "apiKey", idempotent: "transactional",
    summary: "Send an execution's delivery again (same payload and X-Webhook-Id, new attempt)", params: ExecutionIdParam,
    description: "The new attempt's execution has `trigger: replay`, whatever the delivery; a test delivery is sent again as a test (`X-Webhook-Test: true`).",
    responses: { 202: { description: "Queued", schema: QueuedDelivery } },
    async handler({ deps, auth, params, atomically }) {
      await findOwn(deps, auth.accountId, params.webhook_id);
      const exe = await findWebhookExecution(deps.db, params.webhook_id, params.execution_id);
      const delivery = exe && await findDelivery(deps.db, exe.deliveryId);
      if (!exe || !delivery) throw notFound("Execution");
      if (delivery.status === "pending") throw new ApiError("conflict", "This delivery is still pending (queued or waiting for a retry); replay it once it has succeeded or failed");
      const reply = await atomically(async (tx) => {
        await reopenDelivery(tx, exe.deliveryId);
        return { status: 202, body: { delivery_id: exe.deliveryId, webhook_id: params.webhook_id, status: "queued" } };
      });
      return { ...reply, deliveries: await pendingToQueue(deps, { id: exe.deliveryId }, "replay") };
    },
  }),
  defineRoute({
    method: "post", path: `${BASE}/{webhook_id}/recover`, operationId: "recoverWebhook", tag: TAG, auth: "apiKey", idempotent: "transactional",
    summary: `Re-send every failed delivery of this subscription created since a time (at most ${RECOVER_MAX_DAYS} days back)`,
    params: WebhookIdParam, body: RecoverBody,
    responses: { 202: { description: "How many deliveries were queued again", schema: RecoverResult } },
    async handler({ deps, auth, params, body, atomically }) {
      const sub = await findOwn(deps, auth.accountId, params.webhook_id);
      const since = new Date(body.since);
      if (since.getTime() < Date.now() - RECOVER_MAX_DAYS * 86_400_000)
        throw new ApiError("validation_failed", `since may be at most ${RECOVER_MAX_DAYS} days ago`, { errors: [{ location: "body", path: "since", message: `at most ${RECOVER_MAX_DAYS} days ago`, code: "too_small" }] });
      const reply = await atomically(async (tx) => {
        const recovered = await reopenFailedDeliveries(tx, sub.id, since);
        return { status: 202, body: { recovered } };
      });
      return sub.status === "active" ? { ...reply, deliveries: await pendingToQueue(deps, { subscriptionId: sub.id, dueBy: new Date() }, "recovery", 10_000) } : reply;
    },
  }),
  defineRoute({
    method: "get", path: "/api/events", operationId: "listAccountEvents", tag: "Events", auth: "apiKey",
    summary: "Things the service told your account about, newest first (e.g. `webhook.disabled`)",
    query: pageQuery({ limit: 50, max: 200, cursor: { ids: ["evt"] } }).extend({ type: text({ max: 100 }).optional() }),
    responses: { 200: { description: "A page of events", schema: AccountEventList } },
    async handler({ deps, auth, query }) {
      const body = await keysetPage(
        query,
        (p) => listAccountEvents(deps.db, auth.accountId, query.type, p),
        (r) => ({ id: r.id, type: r.type, data: r.data as Record<string, unknown>, created_at: r.createdAt.toISOString() }),
      );
      return { status: 200, body };
    },
  }),
];
