import type { ConversionsConnector } from "../kind.ts";
import { hashIdentifiers, RedditAdsConversionsClient } from "./client.ts";
import { testIdPlacementOf } from "./config.ts";
import { manifest } from "./manifest.ts";
import { CommunityAdsPushBody, CommunityAdsTokenBody } from "./schemas.ts";

export const redditAds: ConversionsConnector = {
  manifest,
  client: (ctx) => new RedditAdsConversionsClient({ ...ctx, testIdPlacement: testIdPlacementOf(ctx.env ?? {}) }),
  hashIdentifiers,
  pushBody: CommunityAdsPushBody,
  tokenBody: CommunityAdsTokenBody,
  // RudderStack sends up to 1,000 per request; Reddit's own maximum is unconfirmed.
  limits: { maxBatchSize: 1000, maxEventAgeMs: 7 * 86_400_000, maxFutureMs: 5 * 60_000 },
};

export { CommunityAdsPushBody, CommunityAdsSelectionBody, trackingTypeOf } from "./schemas.ts";
export { v3Body, v3Event } from "./client.ts";
export { testIdPlacementOf, type TestIdPlacement } from "./config.ts";
