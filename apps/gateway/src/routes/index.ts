import type { RouteDef } from "../http/route.ts";
import { briefingRoutes } from "./briefings.ts";
import { keyRoutes } from "./keys.ts";
import { opsRoutes } from "./ops.ts";
import { signalRoutes } from "./signals.ts";
import { socialRoutes } from "./connectors/social.ts";
import { connectionRoutes } from "./connectors/oauth.ts";
import { chatRoutes } from "./connectors/chat.ts";
import { adsRoutes } from "./connectors/ads.ts";
import { adsExecutorRoutes } from "./connectors/ads-executor.ts";
import { reportRoutes } from "./reports.ts";
import { communityAdsRoutes } from "./connectors/community-ads.ts";
import { workflowRoutes } from "./connectors/workflow.ts";
import { operatorRoutes } from "./operator.ts";
import { statusRoutes } from "./status.ts";
import { trendRoutes } from "./trends.ts";
import { webhookRoutes } from "./webhooks.ts";

/** Every route the gateway serves. The OpenAPI document is generated from this list. */
export const allRoutes: RouteDef[] = [...statusRoutes, ...opsRoutes, ...keyRoutes, ...signalRoutes, ...trendRoutes, ...briefingRoutes, ...webhookRoutes, ...socialRoutes, ...connectionRoutes, ...chatRoutes, ...communityAdsRoutes, ...adsRoutes, ...adsExecutorRoutes, ...reportRoutes, ...workflowRoutes, ...operatorRoutes];
