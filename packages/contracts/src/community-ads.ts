import { z } from "zod";
import { OUTBOX_STATUSES } from "./outbox.ts";

// The community-ads (conversions) connector's API answers (apps/gateway/src/routes/connectors/community-ads.ts); its
// request bodies are the provider's schemas (packages/connectors/conversions), a queued event's payload is
// ConversionMessagePayload (./outbox.ts).

export const CommunityAdsSelection = z.object({ account_id: z.string(), pixel_id: z.string(), event_name: z.string() }).meta({ id: "CommunityAdsSelection" });
/** The selection as stored on the connection row (connections.selection). */
export type CommunityAdsSelection = z.infer<typeof CommunityAdsSelection>;
export const CommunityAdsPushAccepted = z.object({
  id: z.string().meta({ description: "The queued event's id (GET .../events/{id})" }),
  status: z.enum(OUTBOX_STATUSES),
  conversion_id: z.string(),
  duplicate: z.boolean().meta({ description: "An event with this conversion_id was already pushed: nothing new was queued" }),
}).meta({ id: "CommunityAdsPushAccepted" });
export const CommunityAdsEvent = z.object({
  id: z.string(), status: z.string(), event_name: z.string(), conversion_id: z.string(), pixel_id: z.string(), test_id: z.string().nullable(),
  attempts: z.array(z.object({ attempt: z.number(), outcome: z.string(), response_status: z.number().nullable(), error: z.string().nullable(), at: z.string() })),
  last_error: z.string().nullable(), created_at: z.string(), completed_at: z.string().nullable(),
}).meta({ id: "CommunityAdsEvent" });
export type CommunityAdsEvent = z.infer<typeof CommunityAdsEvent>;
export const CommunityAdsEventList = z.object({ data: z.array(CommunityAdsEvent), next_cursor: z.string().nullable() }).meta({ id: "CommunityAdsEventList" });
export const CommunityAdsTokenSaved = z.object({ provider: z.string(), status: z.string(), credential: z.literal("conversion_access_token") }).meta({ id: "CommunityAdsTokenSaved" });
