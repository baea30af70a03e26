import { z } from "zod";
import { HttpHeaderValue, OutboundUrl, SendableHeaderName, text } from "@trendgate/contracts";

// Request bodies of the n8n workflow connector, validated by the gateway and documented in OpenAPI.

export const N8nConnectBody = z
  .object({
    api_key: text({ min: 1, max: 4096, trim: true })
      .regex(/^[\x21-\x7e]+$/, "an n8n API key: visible ASCII characters only")
      .meta({ description: "An n8n API key (n8n: Settings → n8n API → Create an API key). Stored encrypted, never returned", example: "n8n_api_2f0c1d..." }),
    api_base_url: OutboundUrl
      .meta({ description: "The n8n instance's address, without `/api/v1` (n8n Cloud: `https://<name>.app.n8n.cloud`)", example: "https://acme.app.n8n.cloud" }),
    include_metadata: z.boolean().default(false)
      .meta({ description: "Add `metadata` ({event_id, account_id, sent_at, trend_id}) to every push body (default `false`)" }),
  })
  .strict()
  .meta({ id: "WorkflowConnectBody" });

export const N8nSelectionBody = z
  .object({
    workflow_id: text({ min: 1, max: 64, trim: true }).meta({ description: "The workflow's id (from GET /api/integrations/workflow/workflows)", example: "2tUt1wbLX592XDdX" }),
    workflow_name: text({ min: 1, max: 256, trim: true }).meta({ description: "Its name, as shown to users (n8n's current name is kept when they differ)", example: "Trend to content brief" }),
    default_event: text({ min: 1, max: 64, trim: true }).default("trend_lifecycle")
      .meta({ description: "The `event` name trend events are pushed with (and the default of POST …/push)", example: "trend_lifecycle" }),
    api_base_url: OutboundUrl.meta({ description: "The instance's address; must be the connected one", example: "https://acme.app.n8n.cloud" }),
    push_url: OutboundUrl.nullable().optional()
      .meta({ description: "Overrides the derived production webhook URL (instances behind a proxy, or with a renamed webhook prefix)", example: "https://hooks.acme.example/webhook/trendgate" }),
    auto_push: z.boolean().default(true).meta({ description: "Push every trend event to the workflow as `default_event` (default `true`)" }),
    push_auth: z.discriminatedUnion("type", [
      z.object({
        type: z.literal("header"),
        // The rule a webhook's custom headers follow: an HTTP token, and not a header the service sets itself
        // (Host, Content-Length, Transfer-Encoding, our signature and event-id headers…).
        name: SendableHeaderName,
        value: HttpHeaderValue,
      }).strict(),
      z.object({ type: z.literal("basic"), username: text({ min: 1, max: 200 }).refine((u) => !u.includes(":"), "no colon"), password: text({ min: 1, max: 2000 }) }).strict(),
    ]).nullable().optional().meta({
      id: "WorkflowPushAuth",
      description: "For a Webhook node with Authentication set: `{type: \"header\", name, value}` as in its Header Auth credential, or `{type: \"basic\", username, password}`. " +
        "Stored sealed, never shown back; omit to keep the saved one (only while the same workflow stays selected: selecting another drops it), null to remove it",
    }),
  })
  .strict()
  .meta({ id: "WorkflowSelectionBody" });

export type N8nSelection = z.output<typeof N8nSelectionBody> & { push_method?: string };
