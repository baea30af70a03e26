import crypto from "node:crypto";
import express, { type Express, type NextFunction, type Request, type RequestHandler, type Response } from "express";
import { ApiError } from "./api-error.ts";
import { clientAddress, type Authenticator } from "./auth.ts";
import { IdempotencyStore } from "./idempotency.ts";
import { assertPagingRule } from "./paging-rule.ts";
import { toApiError } from "./problem.ts";
import type { AuthFailureLimiter, RateLimits } from "./rate-limit.ts";
import { shown } from "./reply.ts";
import { checkedReply, expressPath, type Reply, type RouteDef } from "./route.ts";
import { validateRequest } from "./validate.ts";
import type { Tx } from "@trendgate/db";
import { dispatchOutbox } from "@trendgate/queues";
import { queueDeliveries } from "@trendgate/webhooks";
import type { GatewayDeps } from "../deps.ts";

const BODY_METHODS = new Set(["post", "put", "patch"]);

/** Mounts each route definition with exactly the middleware it declares, then 405s for known paths. */
export function mountRoutes(app: Express, routes: RouteDef[], deps: GatewayDeps, mw: { auth: Authenticator; rateLimits: RateLimits }) {
  const jsonParser = express.json({
    limit: deps.config.BODY_LIMIT_BYTES,
    type: ["application/json", "application/*+json"],
    verify: (req, _res, buf) => { (req as Request).rawBody = buf; },
  });
  const rawParser = express.raw({ limit: deps.config.BODY_LIMIT_BYTES, type: () => true, verify: (req, _res, buf) => { (req as Request).rawBody = buf; } });
  const methodsByPath = new Map<string, string[]>();

  for (const route of routes) {
    assertPagingRule(route);
    const chain: RequestHandler[] = [];
    if (route.auth === "apiKey") chain.push(mw.auth.middleware(), mw.rateLimits.middleware());
    if (route.keyOnly) chain.push(requireApiKey);
    if (route.auth === "admin") chain.push(adminAuth(deps.config.ADMIN_TOKEN, deps.authFailures));
    if (route.rawBody) chain.push(rawParser);
    else if (BODY_METHODS.has(route.method)) chain.push(requireJson, jsonParser);
    chain.push(handle(route, deps));
    const path = expressPath(route.path);
    app[route.method](path, ...chain);
    methodsByPath.set(path, [...(methodsByPath.get(path) ?? []), route.method.toUpperCase()]);
  }
  for (const [path, methods] of methodsByPath) {
    const allow = [...methods, ...(methods.includes("GET") ? ["HEAD"] : [])].sort().join(", ");
    app.all(path, function methodNotAllowed(req, res) {
      res.setHeader("Allow", allow);
      throw new ApiError("method_not_allowed", `${req.method} is not allowed here; use ${allow}`);
    });
  }
}

/** Refuses a web console session on routes that manage credentials: a session must not mint keys or further sessions. */
const requireApiKey: RequestHandler = (req, _res, next) => {
  if (req.auth?.credential.kind !== "apiKey") throw new ApiError("api_key_required", "Use an API key for this; a console session cannot manage keys or sessions");
  next();
};

function handle(route: RouteDef, deps: GatewayDeps): RequestHandler {
  return async (req, res) => {
    const plain = (work: (tx: Tx) => Promise<Reply>) => deps.db.$transaction(work);
    const base = { deps, req, res, auth: req.auth!, atomically: plain };
    if (route.raw) { await route.handler({ ...base, body: undefined, query: undefined, params: undefined }); return; }

    const [params, query, body] = validateRequest([
      { location: "path", schema: route.params, value: req.params },
      { location: "query", schema: route.query, value: req.query },
      { location: "body", schema: route.body, value: req.body },
    ]);
    const idemKey = route.idempotent ? IdempotencyStore.checkHeader(req.get("idempotency-key")) : undefined;
    if (!idemKey) {
      const reply = (await route.handler({ ...base, params, query, body })) ?? { status: 204 };
      await dispatchQueued(deps, reply);
      if (!res.headersSent) send(res, checked(route, deps, shown(reply))); // a handler that streamed its answer (CSV) sent it already
      return;
    }

    const transactional = route.idempotent === "transactional";
    const fingerprint = IdempotencyStore.fingerprint(req.method, req.originalUrl, req.rawBody);
    const begun = await deps.idempotency.begin(req.auth!.accountId, idemKey, fingerprint, transactional);
    if ("replay" in begun) {
      res.setHeader("Idempotent-Replayed", "true");
      return send(res, begun.replay);
    }
    const claim = { accountId: req.auth!.accountId, key: idemKey, fingerprint, token: begun.token };
    let committed = false;
    const atomically = (work: (tx: Tx) => Promise<Reply>) => {
      if (!transactional) throw new Error(`${route.operationId}: declare idempotent: "transactional" to commit through atomically`);
      return deps.db.$transaction(async (tx) => {
        const reply = await work(tx);
        if (reply.status < 500 && !(await deps.idempotency.recordInTransaction(tx, claim, shown(reply))))
          throw new ApiError("idempotency_request_in_progress", "Another request with this Idempotency-Key committed first; nothing was changed", { headers: { "Retry-After": "1" } });
        committed = true;
        return reply;
      });
    };
    let reply: Reply;
    try {
      reply = (await route.handler({ ...base, params, query, body, atomically, idempotencyKey: idemKey })) ?? { status: 204 };
    } catch (err) {
      // Nothing was committed for a failed request (unless its transaction recorded the answer): free the key.
      if (!committed) await deps.idempotency.release(claim);
      throw err;
    }
    await dispatchQueued(deps, reply);
    // Also in Redis for committed answers: replays then need no database read.
    await deps.idempotency.complete(claim, shown(reply)).catch((err) =>
      deps.logger.warn({ err: String(err), request_id: req.id }, "idempotency record not saved"));
    send(res, checked(route, deps, shown(reply)));
  };
}

/** Queues what a committed handler added to the outbox and its webhook deliveries; a failure is left to the sweeper. */
async function dispatchQueued(deps: GatewayDeps, reply: Reply): Promise<void> {
  if (reply.outbox?.length) await dispatchOutbox(deps.queues, reply.outbox).catch((err) =>
    deps.logger.warn({ err: String(err), messages: reply.outbox!.length }, "outbox dispatch failed; the sweeper will queue the messages"));
  if (reply.deliveries?.length) await queueDeliveries(deps.queues, deps.db, reply.deliveries).catch((err) =>
    deps.logger.warn({ err: String(err), deliveries: reply.deliveries!.length }, "webhook deliveries not queued; the sweeper will queue them"));
}

/** In tests, the reply held to its declared schema (checkedReply). */
const checked = (route: RouteDef, deps: GatewayDeps, reply: Reply) =>
  checkedReply(route, reply, (problems) => deps.logger.warn({ operation: route.operationId, status: reply.status, problems }, "reply does not match its declared schema"));

function send(res: Response, reply: Reply) {
  for (const [k, v] of Object.entries(reply.headers ?? {})) res.setHeader(k, v);
  res.status(reply.status);
  if (reply.body === undefined) res.end();
  else res.json(reply.body);
}

/** A body, when present, must be JSON; checked before parsing so other types get 415, not a parse error. */
function requireJson(req: Request, _res: Response, next: NextFunction) {
  const hasBody = req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0;
  if (hasBody && !req.is(["application/json", "application/*+json"]))
    throw new ApiError("unsupported_media_type", `Send the body as application/json (got ${req.get("content-type") ?? "no Content-Type"})`);
  next();
}

/**
 * Operator endpoints (metrics, queue dashboard): Bearer or Basic (any user name) with ADMIN_TOKEN. Wrong tokens count
 * against the client address's failed-authentication limit shared with API keys (`failures`): over it, the address
 * gets 429 and its tokens are not even compared until the minute is over. Without Redis the count is skipped:
 * /metrics and the dashboard are how an operator looks at that outage.
 */
export function adminAuth(token: string, failures?: AuthFailureLimiter): RequestHandler {
  const verify = adminVerifier(token, failures);
  return async (req, _res, next) => {
    await verify(req);
    next();
  };
}

/** The admin check itself: resolves when the request carries ADMIN_TOKEN, else throws 401 (or 429, see adminAuth). */
export function adminVerifier(token: string, failures?: AuthFailureLimiter): (req: Request) => Promise<void> {
  const expected = crypto.createHash("sha256").update(token).digest();
  return async (req) => {
    const address = clientAddress(req);
    await failures?.assertAllowed(address).catch((e) => { if (e instanceof ApiError) throw e; });
    const h = req.get("authorization") ?? "";
    let presented = "";
    if (/^Bearer /i.test(h)) presented = h.slice(7).trim();
    else if (/^Basic /i.test(h)) presented = Buffer.from(h.slice(6), "base64").toString().split(":").slice(1).join(":");
    const got = crypto.createHash("sha256").update(presented).digest();
    if (!presented || !crypto.timingSafeEqual(got, expected)) {
      await failures?.recordFailure(address).catch(() => {});
      // Two header lines, Basic first: browsers read only the first challenge of a line, and Basic is the one that
      // makes them offer a login (the queue dashboard in a browser); scripts use Bearer.
      throw new ApiError("unauthorized", "Operator endpoints need the admin token", {
        headers: { "WWW-Authenticate": ['Basic realm="trendgate-admin"', 'Bearer realm="trendgate-admin"'] },
      });
    }
  };
}
