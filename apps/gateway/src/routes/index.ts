import { registry as defaultRegistry, type ConnectorRegistry } from "@trendgate/connectors";
import type { RouteDef } from "../http/route.ts";
import { buildOpenApiDocument } from "../openapi/document.ts";
import { briefingRoutes } from "./briefings.ts";
import { consoleRoutes } from "./console.ts";
import { keyRoutes } from "./keys.ts";
import { muteRoutes } from "./mutes.ts";
import { feedbackRoutes } from "./feedback.ts";
import { calendarRoutes } from "./calendar.ts";
import { opsRoutes, type OpenApiOf } from "./ops.ts";
import { signalRoutes } from "./signals.ts";
import { socialRoutes } from "./connectors/social.ts";
import { oauthRoutes } from "./connectors/oauth.ts";
import { chatRoutes } from "./connectors/chat.ts";
import { adsRoutes } from "./connectors/ads.ts";
import { adsExecutorRoutes } from "./connectors/ads-executor.ts";
import { reportRoutes } from "./reports.ts";
import { communityAdsRoutes } from "./connectors/community-ads.ts";
import { workflowRoutes } from "./connectors/workflow.ts";
import { operatorRoutes } from "./operator.ts";
import { scheduleRoutes } from "./schedules.ts";
import { statusRoutes } from "./status.ts";
import { trendRoutes } from "./trends.ts";
import { webhookRoutes } from "./webhooks.ts";

export interface GatewayRoutes {
  routes: RouteDef[];
  /** The OpenAPI document of exactly these routes. */
  openApi: OpenApiOf;
}

// One set per registry: gateways (and tests) sharing a registry share its routes and build its document once.
const built = new WeakMap<ConnectorRegistry, GatewayRoutes>();

/** Every route a gateway serves with `registry`: the connector routes are generated from its providers. */
export function routesFor(registry: ConnectorRegistry): GatewayRoutes {
  let set = built.get(registry);
  if (!set) {
    const routes: RouteDef[] = [];
    let doc: ReturnType<OpenApiOf> | undefined;
    const openApi = () => (doc ??= buildOpenApiDocument(routes));
    routes.push(
      ...statusRoutes, ...opsRoutes(openApi), ...keyRoutes, ...signalRoutes, ...trendRoutes, ...briefingRoutes, ...webhookRoutes,
      ...socialRoutes(registry), ...oauthRoutes(registry), ...chatRoutes(registry), ...communityAdsRoutes(registry), ...adsRoutes(registry),
      ...adsExecutorRoutes(registry), ...reportRoutes, ...workflowRoutes(registry), ...operatorRoutes, ...scheduleRoutes, ...muteRoutes, ...feedbackRoutes, ...calendarRoutes, ...consoleRoutes,
    );
    set = { routes, openApi };
    built.set(registry, set);
  }
  return set;
}

/** Every route of the default registry (what production serves; tests walk them). */
export const allRoutes: RouteDef[] = routesFor(defaultRegistry).routes;
