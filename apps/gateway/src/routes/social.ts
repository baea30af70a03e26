import {
  GoogleTrendsConnectionBody, RedditConnectionBody, SocialAction, SocialConnection, SocialConnectionStatus, TrendsValidateBody,
  XConnectionBody, XReplyBody, YouTubeConnectionBody, QUEUES, type SocialProvider,
} from "@trendgate/contracts";
import { newId, Prisma } from "@trendgate/db";
import { assertPublicDestination } from "../http/outbound-url.ts";
import type { z } from "zod";
import { ApiError, notFound } from "../http/api-error.ts";
import { defineRoute, type RouteDef } from "../http/route.ts";
import type { GatewayDeps } from "../app.ts";

// Social and search connectors: three endpoints per provider under /api/integrations/social/{provider}:
//   PUT  …/connection  configure (credentials are sealed with SecretBox and never returned)
//   GET  …/status      state of polling, quota, recent observations and recent actions
//   POST …/{action}    the provider's action: x reply, reddit/youtube poll, google_trends validate
// The gateway never calls a provider: actions are stored on the connection (cursor.actions) and queued on
// social-poll, where the worker runs them and records the outcome.

const BASE = "/api/integrations/social";
const TAG = "Social connectors";
const RECENT_HOURS = 24;
const MAX_ACTIONS = 20;

type Row = Prisma.SocialConnectionGetPayload<object>;
const iso = (d: Date | null) => (d ? d.toISOString() : null);
const NAMES: Record<SocialProvider, string> = { x: "X", reddit: "Reddit", youtube: "YouTube", google_trends: "Google Trends" };
const OP: Record<SocialProvider, string> = { x: "X", reddit: "Reddit", youtube: "YouTube", google_trends: "GoogleTrends" };
/** Google Trends connections only validate on demand; the others are polled on the schedule. */
const POLLED: Record<SocialProvider, boolean> = { x: true, reddit: true, youtube: true, google_trends: false };

export function toConnection(r: Row): SocialConnection {
  return {
    id: r.id, provider: r.provider as SocialProvider, status: r.status as SocialConnection["status"], terms: r.terms,
    options: r.options as Record<string, unknown>, base_url: r.baseUrl, last_error: r.lastError,
    last_polled_at: iso(r.lastPolledAt), next_poll_at: iso(r.nextPollAt), created_at: r.createdAt.toISOString(), updated_at: r.updatedAt.toISOString(),
  };
}

async function findOwn(deps: GatewayDeps, accountId: string, provider: SocialProvider) {
  const row = await deps.db.socialConnection.findUnique({ where: { accountId_provider: { accountId, provider } } });
  if (!row) throw notFound(`${NAMES[provider]} connection`);
  return row;
}


/**
 * Stores an action on the connection (newest first, the last MAX_ACTIONS kept) and, unless it awaits approval,
 * queues it for the worker.
 */
async function queueAction(deps: GatewayDeps, row: Row, action: SocialAction["action"], input: Record<string, unknown>, status: "queued" | "awaiting_approval" = "queued"): Promise<SocialAction> {
  const a: SocialAction = { id: newId("act"), action, status, input, result: null, error: null, created_at: new Date().toISOString(), completed_at: null };
  await deps.db.$pool.query(
    `UPDATE social_connections SET updated_at = now(), cursor = jsonb_set(cursor, '{actions}', (
       SELECT coalesce(jsonb_agg(a ORDER BY n), '[]'::jsonb)
         FROM jsonb_array_elements(jsonb_build_array($2::jsonb) || coalesce(cursor->'actions', '[]'::jsonb)) WITH ORDINALITY t(a, n)
        WHERE n <= $3))
     WHERE id = $1`,
    [row.id, JSON.stringify(a), MAX_ACTIONS],
  );
  if (status === "queued") await deps.queues.add(QUEUES.socialPoll, { connection_id: row.id, action, action_id: a.id }, { jobId: `${action}-${a.id}` });
  return a;
}

/** Approves (queues) or rejects a reply draft; only a draft still awaiting approval can be decided. */
async function decideDraft(deps: GatewayDeps, row: Row, draftId: string, decision: "approve" | "reject"): Promise<SocialAction> {
  const next = decision === "approve" ? { status: "queued" } : { status: "rejected", completed_at: new Date().toISOString() };
  const { rows } = await deps.db.$pool.query<{ a: SocialAction }>(
    `UPDATE social_connections SET updated_at = now(), cursor = jsonb_set(cursor, '{actions}', (
       SELECT jsonb_agg(CASE WHEN a->>'id' = $2 THEN a || $3::jsonb ELSE a END ORDER BY n)
         FROM jsonb_array_elements(cursor->'actions') WITH ORDINALITY t(a, n)))
     WHERE id = $1 AND cursor->'actions' @> jsonb_build_array(jsonb_build_object('id', $2::text, 'status', 'awaiting_approval'))
     RETURNING (SELECT a FROM jsonb_array_elements(cursor->'actions') a WHERE a->>'id' = $2) AS a`,
    [row.id, draftId, JSON.stringify(next)],
  );
  if (!rows.length) {
    const known = ((row.cursor as { actions?: SocialAction[] }).actions ?? []).find((x) => x.id === draftId && x.action === "reply");
    if (!known) throw notFound("Reply draft");
    throw new ApiError("conflict", `This draft is ${known.status}; only a draft awaiting approval can be approved or rejected`);
  }
  if (decision === "approve") await deps.queues.add(QUEUES.socialPoll, { connection_id: row.id, action: "reply", action_id: draftId }, { jobId: `reply-${draftId}` });
  return rows[0].a;
}

function refuseIfNeedsReauth(row: Row) {
  if (row.status === "needs_reauth") {
    throw new ApiError("conflict", `The ${NAMES[row.provider as SocialProvider]} connection needs new credentials (${row.lastError ?? "the provider refused them"}); PUT the connection again`);
  }
}

function connectionRoutes<B extends z.ZodType>(provider: SocialProvider, body: B, extra: string): RouteDef[] {
  const path = `${BASE}/${provider}`;
  return [
    defineRoute({
      method: "put", path: `${path}/connection`, operationId: `put${OP[provider]}Connection`, tag: TAG, auth: "apiKey",
      summary: `Configure the ${NAMES[provider]} connector (credentials, tracked terms, options)`,
      description:
        `Creates or replaces the account's ${NAMES[provider]} connection. Credentials are encrypted at rest and never returned. ` +
        `Replacing the connection resets its status to \`active\` (this is how a \`needs_reauth\` connection is repaired) ` +
        `and keeps its polling cursor and quota ledger. ${extra}`,
      body,
      responses: { 200: { description: "The connection (without its credentials)", schema: SocialConnection } },
      async handler({ deps, auth, body }) {
        const b = body as { credentials: Record<string, unknown>; terms: string[]; options: Record<string, unknown>; base_url?: string | null; auth_base_url?: string | null };
        assertPublicDestination(deps.guard, b.base_url, "base_url");
        assertPublicDestination(deps.guard, b.auth_base_url, "auth_base_url");
        const options = { ...b.options, ...(b.auth_base_url ? { auth_base_url: b.auth_base_url } : {}) };
        const fields = {
          status: "active", terms: b.terms, options: options as Prisma.InputJsonValue, credentialsCiphertext: deps.secrets.seal(JSON.stringify(b.credentials)),
          baseUrl: b.base_url ?? null, lastError: null, nextPollAt: POLLED[provider] ? new Date() : null,
        };
        const row = await deps.db.socialConnection.upsert({
          where: { accountId_provider: { accountId: auth.accountId, provider } },
          create: { id: newId("soc"), accountId: auth.accountId, provider, ...fields },
          update: fields,
        });
        return { status: 200, body: toConnection(row) };
      },
    }),
    defineRoute({
      method: "get", path: `${path}/status`, operationId: `get${OP[provider]}Status`, tag: TAG, auth: "apiKey",
      summary: `Status of the ${NAMES[provider]} connector: polling, quota, recent observations and actions`,
      description: `\`status\` says whether it is polled (\`active\`) or why not; \`last_error\` says what the provider answered. ` +
        `\`recent_observations\` counts the signals it stored in the last ${RECENT_HOURS} hours; \`actions\` lists the recent actions and their results.`,
      responses: { 200: { description: "The connector's status", schema: SocialConnectionStatus } },
      async handler({ deps, auth }) {
        const row = await findOwn(deps, auth.accountId, provider);
        const count = await deps.db.signal.count({
          where: { accountId: auth.accountId, source: provider, createdAt: { gte: new Date(Date.now() - RECENT_HOURS * 3_600_000) } },
        });
        const cursor = row.cursor as { actions?: SocialAction[] };
        const body: z.infer<typeof SocialConnectionStatus> = {
          connection_id: row.id, provider, status: row.status as SocialConnection["status"], last_error: row.lastError, terms: row.terms,
          last_polled_at: iso(row.lastPolledAt), next_poll_at: iso(row.nextPollAt), quota: row.quota as Record<string, unknown>,
          recent_observations: { hours: RECENT_HOURS, count }, actions: cursor.actions ?? [],
        };
        return { status: 200, body };
      },
    }),
  ];
}

const actionResponses = { 202: { description: "Queued; follow it in the status' `actions`", schema: SocialAction } };

/** `POST …/{provider}/poll`: poll now, outside the schedule (the same job a scheduled tick queues). */
function pollNowRoute(provider: "reddit" | "youtube", operationId: string, label: string, description: string) {
  return defineRoute({
    method: "post", path: `${BASE}/${provider}/poll`, operationId, tag: TAG, auth: "apiKey", idempotent: true,
    summary: `Poll ${label} now, outside the schedule`,
    description: `${description} Refused (409) while the connection needs new credentials.`,
    responses: actionResponses,
    async handler({ deps, auth }) {
      const row = await findOwn(deps, auth.accountId, provider);
      refuseIfNeedsReauth(row);
      return { status: 202, body: await queueAction(deps, row, "poll", {}) };
    },
  });
}

export const socialRoutes: RouteDef[] = [
  ...connectionRoutes("x", XConnectionBody, "Recent search needs `bearer_token`; replies need `user_token` (OAuth 2.0 user context with tweet.write)."),
  defineRoute({
    method: "post", path: `${BASE}/x/reply`, operationId: "replyOnX", tag: TAG, auth: "apiKey", idempotent: true,
    summary: "Route a response on X: draft a reply, then approve or reject it",
    description: "`{in_reply_to_id, text}` drafts a reply: it is stored awaiting approval (201) and nothing is posted. " +
      "`{draft_id, decision: \"approve\"}` queues it (202): a worker posts it with the connection's `user_token` (never the gateway); " +
      "`{draft_id, decision: \"reject\"}` discards it (200). Drafts and outcomes (the new post's id, or the error) appear in the status' `actions`. " +
      "A rate-limited reply is retried after the limit resets.",
    body: XReplyBody,
    responses: { 201: { description: "Draft stored, awaiting approval", schema: SocialAction }, 200: { description: "Draft rejected", schema: SocialAction }, ...actionResponses },
    async handler({ deps, auth, body }) {
      const row = await findOwn(deps, auth.accountId, "x");
      refuseIfNeedsReauth(row);
      const creds = JSON.parse(deps.secrets.open(row.credentialsCiphertext)) as { user_token?: string };
      if (!creds.user_token) {
        throw new ApiError("validation_failed", "Replies need a user-context token: PUT the connection with credentials.user_token", {
          errors: [{ location: "body", path: "(body)", message: "the X connection has no credentials.user_token", code: "missing_user_token" }],
        });
      }
      if ("draft_id" in body) {
        const decided = await decideDraft(deps, row, body.draft_id, body.decision);
        return { status: body.decision === "approve" ? 202 : 200, body: decided };
      }
      return { status: 201, body: await queueAction(deps, row, "reply", { in_reply_to_id: body.in_reply_to_id, text: body.text }, "awaiting_approval") };
    },
  }),
  ...connectionRoutes("reddit", RedditConnectionBody, "Searches each term in each of `options.subreddits` with an app-only token from `client_id`/`client_secret`."),
  pollNowRoute("reddit", "pollReddit", "Reddit", "Queues a poll of every term; its signals are stored like scheduled ones."),
  ...connectionRoutes("youtube", YouTubeConnectionBody, "Follows videos published in the last `published_within_days` days; counts are engagement deltas between polls."),
  pollNowRoute("youtube", "pollYouTube", "YouTube",
    "Queues a poll of every term (one search.list call per term, one videos.list call per 50 videos, counted against the daily quota)."),
  ...connectionRoutes("google_trends", GoogleTrendsConnectionBody, "Google Trends is not polled: it validates terms on demand (official Trends API, alpha)."),
  defineRoute({
    method: "post", path: `${BASE}/google_trends/validate`, operationId: "validateWithGoogleTrends", tag: TAG, auth: "apiKey", idempotent: true,
    summary: "Check a term's momentum against Google Trends search interest",
    description: "Queues a momentum validation: recent search interest (`recent_days`) against the baseline (`baseline_days`). " +
      "The verdict (`confirmed`, `refuted`, `inconclusive`), ratio and reason appear in the status' `actions`.",
    body: TrendsValidateBody,
    responses: actionResponses,
    async handler({ deps, auth, body }) {
      const row = await findOwn(deps, auth.accountId, "google_trends");
      refuseIfNeedsReauth(row);
      return { status: 202, body: await queueAction(deps, row, "validate", { term: body.term }) };
    },
  }),
];
