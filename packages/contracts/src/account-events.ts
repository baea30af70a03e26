import { z } from "zod";
import { documentedEnum, Timestamp } from "./common.ts";
import { CALLBACK_ERRORS, REVOCATIONS } from "./connections.ts";
import { EscalationStep } from "./operator-routes.ts";
import { OPERATIONAL_EVENT_TYPES } from "./vocabulary.ts";

// Each account event's `data`, one strict schema per type: the one home of its shape. packages/db's
// recordAccountEvents takes `data` typed by these (a missing or unknown field is a type error at the emitter) and
// parses it before writing, and the event catalog (/asyncapi.json, the OpenAPI document's webhooks) publishes them,
// so what is recorded, delivered and documented is one shape.

const str = (description: string) => z.string().meta({ description });
const count = (description: string) => z.number().int().min(0).meta({ description });
/** A provider id from the registry (e.g. `slack`, `x`, `n8n`). */
const provider = str("Provider id from the registry");

/** The escalation steps that tell someone (every one but `wait`): operator.escalated's step_type. */
type NoticeStep = Exclude<EscalationStep["type"], "wait">;
const NOTICE_STEPS = EscalationStep.options.map((o) => o.shape.type.value).filter((t): t is NoticeStep => t !== "wait") as [NoticeStep, ...NoticeStep[]];

/** What every operator-item notice says about its item. */
const operatorItem = {
  item_id: str("The operator item (GET /api/operator/items/{item_id})"),
  trend_id: z.string().nullable().meta({ description: "Its trend; null for an item that is not about a trend (an ads approval)" }),
  title: str("The item's title"),
  route_id: z.string().nullable().meta({ description: "The routing rule that matched it when it opened; null: the default route" }),
};
const operatorNotice = z.object({
  ...operatorItem,
  severity: str("The item's severity (`low`, `medium`, `high`, `critical`)"),
  actor: str("Who did it: `key:<api key id>`, `console:<session id>`, `chat:<team>/<user>` or `system`"),
  actor_name: z.string().nullable().meta({ description: "The actor's display name when known (a console session's label, a chat user's name)" }),
  action: str("The action taken (`acknowledge`, `resolve`, `mute`, …)"),
}).strict();

export const ACCOUNT_EVENT_DATA = {
  "webhook.disabled": z.object({
    webhook_id: str("The subscription"),
    reason: str("Why: `the endpoint answered 410 Gone`, or `failing continuously since <time>`"),
  }).strict(),
  "webhook.delivery_failed": z.object({
    webhook_id: str("The subscription"),
    delivery_id: str("The delivery that gave up (its executions: GET /api/integrations/webhooks/{webhook_id}/executions)"),
    attempts: count("Attempts made"),
    error: z.string().nullable().meta({ description: "The last attempt's error (`HTTP 503`, a network error)" }),
    event_type: str("The type of the event the delivery carried").optional(),
  }).strict(),
  "connection.connected": z.object({
    provider,
    account: z.record(z.string(), z.string().nullable()).meta({ description: "The connected account at the provider (non-secret facts, e.g. Slack `team_id`, `team_name`)" }),
  }).strict(),
  "connection.failed": z.object({
    provider,
    reason: documentedEnum(CALLBACK_ERRORS),
    message: str("What went wrong, in words"),
  }).strict(),
  "connection.needs_reauth": z.object({ provider, connection_id: str("The connection"), reason: str("The provider's refusal") }).strict(),
  "connection.disconnected": z.object({
    provider,
    revocation: documentedEnum(REVOCATIONS),
    revocation_error: str("Why revoking failed").optional(),
  }).strict(),
  "connector.needs_reauth": z.object({
    connection_id: str("The social connection"), provider, reason: z.string().nullable().meta({ description: "The provider's refusal, when it gave one" }),
  }).strict(),
  "connector.recovered": z.object({ connection_id: str("The social connection"), provider }).strict(),
  "connector.delivery_failing": z.object({
    connection_id: str("The workflow connection"),
    provider,
    message_id: str("The push that failed for good (an outbox message: GET /api/integrations/workflow/pushes)"),
    event_id: str("The event it carried"),
    workflow_id: z.string().nullable().meta({ description: "The workflow it was bound to" }),
    outcome: z.enum(["failed", "unknown"]).meta({ description: "`failed`: refused or retries exhausted; `unknown`: the workflow may have received it (not sent again)" }),
    error: str("The last error"),
  }).strict(),
  "report.export_ready": z.object({
    export_id: str("The export (GET /api/reports/exports/{export_id})"),
    rows: count("Rows written"),
    bytes: count("Size of the CSV file"),
  }).strict(),
  "operator.acknowledged": operatorNotice,
  "operator.resolved": operatorNotice,
  "operator.escalated": z.object({
    ...operatorItem,
    severity: operatorNotice.shape.severity,
    step: count("The escalation step reached (0-based)"),
    step_type: z.enum(NOTICE_STEPS).meta({ description: "The step's type (EscalationStep)" }),
    notify_webhook_id: str("A `notify_webhook` step's subscription: it receives this event whatever its event types").optional(),
  }).strict(),
  "operator.route_failed": z.object({
    ...operatorItem,
    route_id: str("The routing rule whose channel failed"),
    route: z.string().nullable().meta({ description: "The rule's name" }),
    provider: str("The rule's chat provider"),
    channel_id: z.string().nullable().meta({ description: "The rule's channel" }),
    error: str("The provider's refusal (e.g. `chat.postMessage: is_archived`)"),
    posted_to: z.object({ provider, channel_id: str("The default route's channel") }).strict().meta({ description: "Where the card went instead" }),
  }).strict(),
  "signals.rejected": z.object({
    batch_id: str("The batch (POST /api/signals answered it)"),
    index: count("The signal's position in your request"),
    id: str("The signal's id"),
    source: str("The signal's source"),
    code: str("Why, as a code (e.g. `invalid`)"),
    reason: str("Why, in words (the field and the problem)"),
    batch_rejected: count("How many signals of the batch were rejected"),
  }).strict(),
  "signals.ingest_failed": z.object({
    batch_id: str("The batch"),
    code: str("Why, as a code"),
    reason: str("Why, in words"),
    signals: z.number().int().min(0).nullable().meta({ description: "How many signals the batch held" }),
    attempts: count("Attempts made"),
  }).strict(),
} as const;

/** Every type of account event (GET /api/events); the operational events (vocabulary.ts) are the ones subscriptions can list. */
export type AccountEventType = keyof typeof ACCOUNT_EVENT_DATA;
export const ACCOUNT_EVENT_TYPES = Object.keys(ACCOUNT_EVENT_DATA) as AccountEventType[];
/** The data an emitter passes for an event of `T` (what its schema accepts). */
export type AccountEventData<T extends AccountEventType> = z.input<(typeof ACCOUNT_EVENT_DATA)[T]>;

/** `webhook.delivery_failed` -> `WebhookDeliveryFailed`: the component names of a type's schemas. */
export const accountEventSchemaName = (type: AccountEventType) =>
  type.split(/[._]/).map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join("");

/** One type's event as GET /api/events lists it and as its webhook delivery's body. */
const eventOf = <T extends AccountEventType>(type: T) =>
  z.object({
    id: z.string().meta({ description: "The account event's id (as in GET /api/events)" }),
    type: z.literal(type),
    created_at: Timestamp,
    data: ACCOUNT_EVENT_DATA[type].meta({ id: `${accountEventSchemaName(type)}Data` }),
  }).strict().meta({ id: `${accountEventSchemaName(type)}Event` });

export const ACCOUNT_EVENT_SCHEMAS = Object.fromEntries(ACCOUNT_EVENT_TYPES.map((t) => [t, eventOf(t)])) as {
  [T in AccountEventType]: ReturnType<typeof eventOf<T>>;
};

type OperationalType = (typeof OPERATIONAL_EVENT_TYPES)[number];
const operationalSchemas = OPERATIONAL_EVENT_TYPES.map((t) => ACCOUNT_EVENT_SCHEMAS[t]) as [
  (typeof ACCOUNT_EVENT_SCHEMAS)[OperationalType], ...(typeof ACCOUNT_EVENT_SCHEMAS)[OperationalType][],
];

/** The body of an operational event's delivery: the account event, its data typed by its type. */
export const OperationalPayload = z.discriminatedUnion("type", operationalSchemas).meta({ id: "OperationalPayload" });
export type OperationalPayload = z.infer<typeof OperationalPayload>;

/**
 * A stored operational delivery's body, read back to be sent as it was recorded (jobs.ts deliveryBody): only its
 * envelope is checked, so a row written before a field was added is still delivered. New events are checked against
 * their type's schema when they are recorded.
 */
export const StoredOperationalPayload = z.object({
  id: z.string(), type: z.string(), created_at: z.string(), data: z.record(z.string(), z.unknown()),
});
