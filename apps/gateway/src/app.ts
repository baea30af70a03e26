import express, { type Express } from "express";
import { Connections } from "@trendgate/connections";
import { registry as defaultRegistry, type ConnectorRegistry } from "@trendgate/connectors";
import { SecretBox } from "@trendgate/crypto";
import { OutboundGuard } from "@trendgate/delivery";
import { ApiError } from "./http/api-error.ts";
import { Authenticator } from "./http/auth.ts";
import { IdempotencyStore } from "./http/idempotency.ts";
import { observe } from "./http/observe.ts";
import { problemHandler } from "./http/problem.ts";
import { AuthFailureLimiter, RateLimits } from "./http/rate-limit.ts";
import { requestId } from "./http/request-id.ts";
import { DASHBOARD_CSP, securityHeaders } from "./http/security-headers.ts";
import { adminAuth, mountRoutes } from "./http/router.ts";
import { QUEUE_DASHBOARD_PATH, queueDashboard } from "./http/queue-dashboard.ts";
import type { Deps, GatewayDeps } from "./deps.ts";
import { BacktestPool } from "./services/backtest/pool.ts";
import { routesFor } from "./routes/index.ts";
import { docsAssets } from "./routes/ops.ts";

export interface Gateway {
  app: Express;
  deps: GatewayDeps;
  stop(): Promise<void>;
}

/**
 * `registry`: the connectors this gateway serves (default: every registered provider; tests pass fixtures). Its
 * routes, the OpenAPI document and the handlers all come from this one registry.
 */
export async function createGateway(base: Deps, opts: { registry?: ConnectorRegistry } = {}): Promise<Gateway> {
  const { config } = base;
  const registry = opts.registry ?? defaultRegistry;
  // One failed-authentication count per client address, for API keys and the admin token alike.
  const authFailures = new AuthFailureLimiter(base.redis, config.QUEUE_PREFIX, config.AUTH_FAILURES_PER_MINUTE);
  const authenticator = new Authenticator(base.db, base.redis, {
    cacheMs: config.AUTH_CACHE_SECONDS * 1000,
    channel: `${config.QUEUE_PREFIX}:auth:invalidate`,
    redisUrl: config.REDIS_URL,
    logger: base.logger,
    failures: authFailures,
  });
  await authenticator.start();
  const secrets = new SecretBox(config.ENCRYPTION_KEY);
  const deps: GatewayDeps = {
    ...base,
    authenticator,
    authFailures,
    secrets,
    idempotency: new IdempotencyStore(base.redis, base.db.$pool, secrets, {
      prefix: config.QUEUE_PREFIX, ttlSeconds: config.IDEMPOTENCY_TTL_SECONDS, lockSeconds: config.IDEMPOTENCY_LOCK_SECONDS, logger: base.logger,
    }),
    guard: new OutboundGuard(config.OUTBOUND_ALLOWLIST),
    rateLimits: new RateLimits(base.redis, config.RATE_LIMIT_PLANS, config.RATE_LIMIT_WINDOW_SECONDS, config.QUEUE_PREFIX),
    registry,
    connections: new Connections({ db: base.db, secrets, config, providers: registry, logger: base.logger }),
    backtests: new BacktestPool(config),
  };

  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("trust proxy", config.TRUST_PROXY); // req.ip: the client's address behind your load balancer
  app.use(requestId);
  app.use(securityHeaders());
  app.use(observe(base.metrics, base.logger));
  const { routes, openApi } = routesFor(registry);
  mountRoutes(app, routes, deps, { auth: authenticator, rateLimits: deps.rateLimits });
  app.use("/docs", docsAssets(openApi)); // Swagger UI's static files, after the /docs page route
  app.use(QUEUE_DASHBOARD_PATH, securityHeaders(DASHBOARD_CSP), adminAuth(config.ADMIN_TOKEN, authFailures), queueDashboard(deps.queues));
  app.use((req, _res) => { throw new ApiError("route_not_found", `No route for ${req.method} ${req.path}; see /openapi.json`); });
  app.use(problemHandler(base.logger));

  deps.idempotency.start();
  return { app, deps, stop: async () => { deps.idempotency.stop(); await authenticator.stop(); await deps.backtests.close(); } };
}
