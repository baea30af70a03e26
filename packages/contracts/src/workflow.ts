import { z } from "zod";
import { text } from "./common.ts";
import { OUTBOX_STATUSES } from "./outbox.ts";

// The workflow connector's API (apps/gateway/src/routes/connectors/workflow.ts): the connection, the provider's
// workflows, the saved selection, a push and the pushes' executions. The push's outbox payload is WorkflowPushPayload
// (./outbox.ts).

export const WorkflowConnection = z.object({
  provider: z.string(), status: z.string(), api_base_url: z.string(), include_metadata: z.boolean(), connected_at: z.string(),
  signing_secret: z.string().nullable().meta({
    description: "`whsec_…`: every push is signed with it (Standard Webhooks headers webhook-id, webhook-timestamp, webhook-signature). " +
      "Shown once, when it is made (the first connect); connecting again keeps it and answers null",
  }),
}).meta({ id: "WorkflowConnection" });

/** What a workflow's trigger asks of a caller (n8n: the Webhook node's Authentication). */
export const WORKFLOW_AUTHENTICATIONS = ["none", "header", "basic", "jwt"] as const;
const WorkflowAuthentication = z.enum(WORKFLOW_AUTHENTICATIONS).meta({
  description: "The trigger's own authentication: `none`; `header` (a header credential) or `basic` (HTTP Basic): selectable with a matching `push_auth`; `jwt`: not supported (use header auth, or none and verify our signature)",
});
/** A push credential as shown back: never its value or password. */
export const PushAuthShown = z.object({ type: z.enum(["header", "basic"]), name: z.string().optional(), username: z.string().optional() }).meta({ id: "WorkflowPushAuthShown" });

export const WorkflowItem = z.object({
  id: z.string(), name: z.string(), active: z.boolean(), tags: z.array(z.string()),
  can_receive_pushes: z.boolean().meta({ description: "It has an enabled Webhook trigger node listening to POST (or PUT/PATCH)" }),
  push_url: z.string().nullable().meta({ description: "The trigger's production URL (`{instance}/webhook/{path}`); answers only while the workflow is active" }),
  authentication: WorkflowAuthentication.nullable().meta({ description: "The trigger's own authentication; null when it cannot receive pushes" }),
}).meta({ id: "WorkflowItem" });
export type WorkflowItem = z.infer<typeof WorkflowItem>;
export const WorkflowList = z.object({ data: z.array(WorkflowItem), next_cursor: z.string().nullable() }).meta({ id: "WorkflowList" });

export const WorkflowSelection = z.object({
  workflow_id: z.string(), workflow_name: z.string(), default_event: z.string(), api_base_url: z.string(),
  push_url: z.string(), push_method: z.string(), push_url_overridden: z.boolean(), auto_push: z.boolean(),
  workflow_active: z.boolean().meta({ description: "Pushes fail (404 from n8n) until the workflow is activated" }),
  authentication: WorkflowAuthentication,
  push_auth: PushAuthShown.nullable().meta({ description: "The credential pushes carry for the trigger's authentication (its value is stored sealed, never shown)" }),
}).meta({ id: "WorkflowSelection" });
/** The selection as stored on the connection row (connections.selection). */
export type WorkflowSelection = z.infer<typeof WorkflowSelection>;

export const WorkflowPushBody = z.object({
  event: text({ min: 1, max: 64, trim: true }).optional().meta({ description: "Event name (default: the selection's default_event)", example: "trend_lifecycle" }),
  data: z.record(text({ min: 1, max: 256 }), z.unknown())
    // Postgres' jsonb (the outbox) refuses NUL and lone surrogates anywhere in the payload: refuse them here as a 422.
    .refine((d) => !/\\u0000|\\ud[89a-f][0-9a-f]{2}/i.test(JSON.stringify(d)), "must not contain NUL characters or lone surrogates")
    .meta({ description: "Free-form payload handed to the workflow", example: { trend: "AI agents", category: "tech/ai" } }),
}).strict().meta({ id: "WorkflowPushBody" });
export type WorkflowPushBody = z.infer<typeof WorkflowPushBody>;
export const WorkflowPushAccepted = z.object({ id: z.string(), event: z.string(), status: z.literal("queued") }).meta({ id: "WorkflowPushAccepted" });

const WorkflowPushAttempt = z.object({
  attempt: z.number(), outcome: z.string(), response_status: z.number().nullable(), error_class: z.string().nullable(),
  error_message: z.string().nullable(), duration_ms: z.number(), next_retry_at: z.string().nullable(), created_at: z.string(),
});
export const WorkflowPushExecution = z.object({
  id: z.string().meta({ description: "The push's event id (sent as X-Trendgate-Event-Id)" }),
  event: z.string(), source: z.string(), status: z.enum(OUTBOX_STATUSES),
  delivery: z.enum(["delivered", "confirmed"]).nullable().meta({
    description: "For a `succeeded` push (null otherwise): `delivered` when the workflow's trigger took it (2xx), `confirmed` once the run that received it " +
      "is found among the workflow's executions in n8n. A push not seen there within WORKFLOW_CONFIRM_WITHIN_SECONDS is sent again once, same event id",
  }),
  attempts: z.array(WorkflowPushAttempt),
  last_error: z.string().nullable(), created_at: z.string(), completed_at: z.string().nullable(),
}).meta({ id: "WorkflowPushExecution" });
export type WorkflowPushExecution = z.infer<typeof WorkflowPushExecution>;
export const WorkflowPushExecutionList = z.object({ data: z.array(WorkflowPushExecution), next_cursor: z.string().nullable() }).meta({ id: "WorkflowPushExecutionList" });

/** The body a workflow's trigger receives (see pushBody in @trendgate/connector-workflow). */
export const WorkflowPushSent = z.object({
  event: z.string().meta({ description: "The event name: the selection's default_event for trend events (trend_lifecycle), or what POST …/push named" }),
  data: z.record(z.string(), z.unknown()).meta({ description: "For trend events, the TrendEvent; for your own pushes, the data you sent" }),
  metadata: z.object({ event_id: z.string(), account_id: z.string(), sent_at: z.string(), trend_id: z.string().optional() }).optional()
    .meta({ description: "With include_metadata only" }),
}).strict().meta({ id: "WorkflowPushSent" });
export type WorkflowPushSent = z.infer<typeof WorkflowPushSent>;
