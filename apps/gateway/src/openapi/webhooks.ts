import type { ZodOpenApiPathItemObject } from "zod-openapi";
import { z } from "zod";
import {
  ACCOUNT_EVENT_SCHEMAS, EVENT_CATALOG, exampleOperationalEvent, exampleTrendEvent, OPERATIONAL_EVENT_TYPES, OPERATIONAL_EVENTS, TREND_EVENT_TYPES,
  WebhookPayload,
} from "@trendgate/contracts";
import { EVENT_TYPE_HEADER, payloadFromEvent, TREND_ID_HEADER } from "@trendgate/webhooks";

// The document's `webhooks`: what Trendgate POSTs to a subscription's url, one entry per event type, with its body's
// schema (an operational event's data typed by its type) and an example, from the same contracts and example
// builders as /asyncapi.json.

const headers = (type: string, withTrend: boolean) => z.object({
  [EVENT_TYPE_HEADER]: z.literal(type).meta({ description: "The event's type: route on it" }),
  ...(withTrend ? { [TREND_ID_HEADER]: z.string().meta({ description: "The trend: the same on every event of one trend" }) } : {}),
  "webhook-id": z.string().meta({ description: "Standard Webhooks: the delivery's id, the same on every attempt (de-duplicate on it)" }),
  "webhook-timestamp": z.string().meta({ description: "Standard Webhooks: seconds since the epoch when signed" }),
  "webhook-signature": z.string().meta({ description: "Standard Webhooks: space-separated `v1,<base64 HMAC-SHA256>`" }),
});

const received = { "2XX": { description: "Received: any 2xx ends the delivery (other answers are retried, 410 disables the subscription)" } };

const opName = (type: string) => `webhook_${type.replace(/\W/g, "_")}`;

export function webhookDocs(): Record<string, ZodOpenApiPathItemObject> {
  const out: Record<string, ZodOpenApiPathItemObject> = {};
  for (const type of TREND_EVENT_TYPES) {
    out[type] = {
      post: {
        operationId: opName(type), tags: ["Webhooks"], security: [], summary: EVENT_CATALOG[type].title, description: EVENT_CATALOG[type].summary,
        requestParams: { header: headers(type, true) },
        requestBody: { required: true, content: { "application/json": { schema: WebhookPayload, example: payloadFromEvent(exampleTrendEvent(type)) } } },
        responses: received,
      },
    };
  }
  for (const type of OPERATIONAL_EVENT_TYPES) {
    out[type] = {
      post: {
        operationId: opName(type), tags: ["Webhooks"], security: [], summary: type,
        description: `${OPERATIONAL_EVENTS[type]}. Sent to subscriptions with \`trigger_type: event_types\` that list it; the body is the account event (GET /api/events).`,
        requestParams: { header: headers(type, false) },
        requestBody: { required: true, content: { "application/json": { schema: ACCOUNT_EVENT_SCHEMAS[type], example: exampleOperationalEvent(type) } } },
        responses: received,
      },
    };
  }
  return out;
}
