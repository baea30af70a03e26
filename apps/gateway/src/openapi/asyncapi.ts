import { z } from "zod";
import {
  ACCOUNT_EVENT_SCHEMAS, accountEventSchemaName, EVENT_CATALOG, exampleOperationalEvent, exampleTrendEvent, OPERATIONAL_EVENT_TYPES, OPERATIONAL_EVENTS, TREND_EVENT_TYPES, TrendEvent,
  WebhookPayload, WorkflowPushSent,
} from "@trendgate/contracts";
import { EVENT_TYPE_HEADER, payloadFromEvent, TREND_ID_HEADER } from "@trendgate/webhooks";

// The event catalog as an AsyncAPI 3 document (GET /asyncapi.json; readable at GET /docs/events): every event type,
// on each channel that carries it, with its JSON Schema generated from the zod contracts the service validates
// with and an example built by the same code that builds real deliveries.

type Json = Record<string, unknown>;

/** JSON Schemas of zod contracts, their named parts collected under components.schemas. */
class Schemas {
  readonly components: Record<string, Json> = {};

  /** A reference to `schema` (named `name` unless it names itself), its definitions added to the components. */
  ref(schema: z.ZodType, name: string): Json {
    const js = z.toJSONSchema(schema, { target: "draft-7", unrepresentable: "any" }) as Json;
    const defs = (js.definitions ?? {}) as Record<string, Json>;
    for (const [k, v] of Object.entries(defs)) this.components[k] = relink(v);
    if (typeof js.$ref === "string") return relink({ $ref: js.$ref });
    const { $schema: _s, definitions: _d, ...rest } = js;
    this.components[name] = relink(rest);
    return { $ref: `#/components/schemas/${name}` };
  }
}

/** zod's "#/definitions/X" references, pointed at the document's components. */
function relink<T>(v: T): T {
  if (Array.isArray(v)) return v.map(relink) as T;
  if (v && typeof v === "object") {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, k === "$ref" && typeof x === "string" ? x.replace("#/definitions/", "#/components/schemas/") : relink(x)])) as T;
  }
  return v;
}

/** The headers every webhook delivery of `type` carries (the trend's id on trend events only). */
const webhookHeaders = (type: string, withTrend: boolean): Json => ({
  type: "object",
  required: [EVENT_TYPE_HEADER, ...(withTrend ? [TREND_ID_HEADER] : []), "webhook-id", "webhook-timestamp", "webhook-signature"],
  properties: {
    [EVENT_TYPE_HEADER]: { type: "string", const: type, description: "The event's type: route on it (the body's fields are fixed)" },
    ...(withTrend ? { [TREND_ID_HEADER]: { type: "string", description: "The trend: the same on every event of one trend (close on trend.ended what trend.detected opened)" } } : {}),
    "webhook-id": { type: "string", description: "Standard Webhooks: the delivery's id, the same on every attempt (de-duplicate on it); also sent as X-Webhook-Id" },
    "webhook-timestamp": { type: "string", description: "Standard Webhooks: seconds since the epoch when signed; also X-Webhook-Timestamp" },
    "webhook-signature": { type: "string", description: "Standard Webhooks: space-separated `v1,<base64 HMAC-SHA256>` (two during a secret rotation); X-Webhook-Signature carries `sha256=<hex>` of `<timestamp>.<body>`" },
  },
});

const messageKey = (channel: string, type: string) => `${channel}.${type}`;

export function buildAsyncApiDocument(opts: { version: string; baseUrl?: string }) {
  const schemas = new Schemas();
  const webhookBody = schemas.ref(WebhookPayload, "WebhookPayload");
  const trendEvent = schemas.ref(TrendEvent, "TrendEvent");
  const workflowPush = schemas.ref(WorkflowPushSent, "WorkflowPushSent");
  const messages: Record<string, Json> = {};
  const channelMessages = { webhook: {} as Json, stream: {} as Json, workflow: {} as Json };
  for (const type of TREND_EVENT_TYPES) {
    const { title, summary } = EVENT_CATALOG[type];
    const example = exampleTrendEvent(type);
    const add = (channel: keyof typeof channelMessages, m: Json) => {
      const key = messageKey(channel, type);
      messages[key] = { name: type, title: `${title} (${channel})`, summary, contentType: "application/json", ...m };
      channelMessages[channel][key] = { $ref: `#/components/messages/${key}` };
    };
    add("webhook", {
      headers: webhookHeaders(type, true), payload: webhookBody,
      examples: [{ name: type, headers: { [EVENT_TYPE_HEADER]: type, [TREND_ID_HEADER]: example.trend_id, "webhook-id": "msg_01KF3EXAMPLEDELIVERY", "webhook-timestamp": "1795705200", "webhook-signature": "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=" }, payload: payloadFromEvent(example) }],
    });
    add("stream", {
      payload: { type: "object", required: ["id", "event"], properties: { id: { type: "string", description: "The position in your account's stream: pass it back as last_event_id to resume" }, event: trendEvent } },
      examples: [{ name: type, payload: { id: "1795705200123-0", event: example } }],
    });
    add("workflow", {
      payload: workflowPush,
      examples: [{ name: type, payload: { event: "trend_lifecycle", data: example } }],
    });
  }
  // Operational events: on webhook subscriptions that list them, the account event as the body, its data typed by
  // its type (contracts account-events.ts).
  for (const type of OPERATIONAL_EVENT_TYPES) {
    const key = messageKey("webhook", type);
    const example = exampleOperationalEvent(type);
    const payload = schemas.ref(ACCOUNT_EVENT_SCHEMAS[type], `${accountEventSchemaName(type)}Event`);
    messages[key] = {
      name: type, title: `${type} (webhook)`, summary: OPERATIONAL_EVENTS[type], contentType: "application/json", headers: webhookHeaders(type, false), payload,
      examples: [{ name: type, headers: { [EVENT_TYPE_HEADER]: type, "webhook-id": "msg_01KF3EXAMPLEDELIVERY", "webhook-timestamp": "1795705500", "webhook-signature": "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=" }, payload: example }],
    };
    channelMessages.webhook[key] = { $ref: `#/components/messages/${key}` };
  }
  const channels = {
    webhook: {
      address: null,
      title: "Webhook subscription",
      description: "Your subscription's `url` (POST /api/integrations/webhooks). Each delivery's body has exactly the spec's fields; its type and trend travel as headers. Which types a subscription receives: its trigger_type, or with trigger_type event_types the types it lists, then its category and filter.",
      messages: channelMessages.webhook,
    },
    stream: {
      address: "/api/stream",
      title: "Trend stream (WebSocket)",
      description: "Every event of your account, in order, as it is published; resume with last_event_id. See docs/api.md › Trend stream.",
      messages: channelMessages.stream,
      bindings: { ws: { query: { type: "object", properties: { category: { type: "string" }, last_event_id: { type: "string" } } } } },
    },
    workflow: {
      address: null,
      title: "Workflow push (n8n)",
      description: "The selected workflow's Webhook trigger, with auto_push: every trend event as `{event, data}`; signed like webhook deliveries (webhook-id is the push's event id, also in X-Trendgate-Event-Id).",
      messages: channelMessages.workflow,
    },
  };
  const operation = (channel: keyof typeof channels, action: "send" | "receive", summary: string) => ({
    action, channel: { $ref: `#/channels/${channel}` }, summary,
    messages: Object.keys(channelMessages[channel]).map((k) => ({ $ref: `#/channels/${channel}/messages/${k}` })),
  });
  return {
    asyncapi: "3.0.0",
    info: {
      title: "Trendgate events",
      version: opts.version,
      description: "Every event Trendgate sends: trend lifecycle events on webhook subscriptions, the trend stream and workflow pushes. Generated from the same zod contracts the service validates with.",
    },
    defaultContentType: "application/json",
    channels,
    operations: {
      sendWebhook: operation("webhook", "send", "Trendgate POSTs each event a subscription receives to its url"),
      sendStream: operation("stream", "send", "Trendgate sends each event of the account on the open socket"),
      sendWorkflowPush: operation("workflow", "send", "Trendgate POSTs each trend event to the selected workflow's trigger"),
    },
    components: { schemas: schemas.components, messages },
  };
}
export type AsyncApiDocument = ReturnType<typeof buildAsyncApiDocument>;
