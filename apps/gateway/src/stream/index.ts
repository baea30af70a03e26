import crypto from "node:crypto";
import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import { Counter, Gauge } from "prom-client";
import { WebSocket, WebSocketServer } from "ws";
import { createRedis } from "@trendgate/queues";
import { trendStreamKey } from "@trendgate/trends";
import type { GatewayDeps } from "../deps.ts";
import { ApiError } from "../http/api-error.ts";
import { credentialCacheKey } from "../http/auth.ts";
import { toApiError } from "../http/problem.ts";
import { toEntries } from "./account-reader.ts";
import { CLOSE, StreamClient } from "./client.ts";
import { StreamHub } from "./hub.ts";
import { socketLeases } from "./leases.ts";
import { checkResumePoint } from "./resume.ts";
import { STREAM_PATH, parseStreamQuery, rejectUpgrade, upgradeAuthorization } from "./upgrade.ts";

export { STREAM_PATH } from "./upgrade.ts";
export { CLOSE } from "./client.ts";

export interface TrendStream {
  /** Closes every socket with 1001 (clients reconnect with last_event_id), stops the readers, detaches. */
  close(): Promise<void>;
  /** Sockets subscribed and per-account readers running. */
  stats(): { clients: number; readers: number; sockets: number };
}

const REPLAY_PAGE = 200;
const SHUTDOWN_GRACE_MS = 2000;
const READY_TIMEOUT_MS = 5000;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());
/** Redis down: 503 rather than a hung upgrade. */
const withinReadyTimeout = <T>(p: Promise<T>) => Promise.race([p, sleep(READY_TIMEOUT_MS).then(() => {
  throw new ApiError("service_unavailable", "The event stream (Redis) is unavailable");
})]);
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The trend event WebSocket stream on `GET /api/stream` (an HTTP upgrade, not an Express route). Each account's
 * events come from its Redis stream (`<prefix>:trend-stream:<account>`, written by publishTrendEvents); see docs/api.md › Trend stream.
 */
export function attachStream(server: Server, deps: GatewayDeps): TrendStream {
  const { config, logger } = deps;
  const prefix = deps.queues.prefix;
  const maxBufferBytes = config.STREAM_MAX_BUFFER_BYTES;

  const hub = new StreamHub({
    streamKey: (accountId) => trendStreamKey(prefix, accountId),
    connect: () => createRedis(config.REDIS_URL, "worker"),
    onError: (err, accountId) => logger.warn({ err: String(err), accountId }, "trend stream read failed; retrying"),
  });
  // Incoming frames are never needed; maxPayload keeps what a client can make us buffer tiny.
  const wss = new WebSocketServer({ noServer: true, maxPayload: 4096, perMessageDeflate: false });
  const metrics = streamMetrics(deps, () => wss.clients.size);
  // Socket caps hold across the fleet: a lease per socket in Redis, renewed at each heartbeat, lapsing after three.
  const leases = socketLeases(deps.redis, {
    setKey: (accountId) => `${prefix}:stream-sockets:${accountId}`,
    ttlMs: 3 * config.STREAM_HEARTBEAT_MS,
    maxPerAccount: config.STREAM_MAX_SOCKETS_PER_ACCOUNT,
    maxPerKey: config.STREAM_MAX_SOCKETS_PER_KEY,
  });
  const leaseOf = new WeakMap<StreamClient, string>();
  const releaseLease = (c: StreamClient) => {
    const leaseId = leaseOf.get(c);
    if (!leaseId) return;
    leaseOf.delete(c);
    leases.release(c.accountId, leaseId).catch((err) => logger.warn({ err: String(err) }, "trend stream lease release failed; it lapses"));
  };
  let closing = false;

  // Heartbeats: ping everyone each interval; a socket that has not answered the previous ping is cut off.
  const awaitingPong = new WeakSet<WebSocket>();
  wss.on("connection", (ws: WebSocket) => ws.on("pong", () => awaitingPong.delete(ws)));
  // A key revoked (pushed over Redis by the authenticator) or expired while connected closes its sockets with 1008:
  // revocation at once, expiry at the next heartbeat (a re-check hits the auth cache, not Postgres, most of the time).
  const recheck = (clients: StreamClient[]) => {
    for (const c of clients) {
      deps.authenticator.authenticate(c.opts.credential).catch((err) => {
        // Postgres down: keep streaming, check again later. Already dropped (two checks raced): counted once.
        if (toApiError(err).code !== "unauthorized" || c.isClosed) return;
        metrics.drops.inc({ reason: "unauthorized" });
        c.drop(CLOSE.policyViolation, "API key revoked or expired");
      });
    }
  };
  const stopWatchingKeys = deps.authenticator.onInvalidate((keyPrefix) => recheck(hub.clients().filter((c) => c.opts.keyPrefix === keyPrefix)));

  const heartbeat = setInterval(() => {
    recheck(hub.clients());
    const held = hub.clients().flatMap((c) => { const leaseId = leaseOf.get(c); return leaseId ? [{ accountId: c.accountId, leaseId }] : []; });
    leases.renew(held).catch((err) => logger.warn({ err: String(err) }, "trend stream lease renewal failed; retrying next heartbeat"));
    for (const ws of wss.clients) {
      if (awaitingPong.has(ws)) {
        metrics.drops.inc({ reason: "heartbeat_timeout" });
        ws.terminate();
        continue;
      }
      awaitingPong.add(ws);
      ws.ping();
    }
  }, config.STREAM_HEARTBEAT_MS);
  heartbeat.unref();

  async function handle(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL, requestId: string) {
    let client: StreamClient;
    try {
      const credential = upgradeAuthorization(req, url);
      const auth = await deps.authenticator.authenticateFrom(credential, req.socket.remoteAddress ?? "unknown");
      await deps.rateLimits.consume(auth); // a connection attempt counts as one request of the key's quota
      const query = parseStreamQuery(url);
      if (closing) throw new ApiError("service_unavailable", "The gateway is shutting down; reconnect");
      const key = trendStreamKey(prefix, auth.accountId);
      const keyPrefix = credentialCacheKey(credential?.replace(/^Bearer\s+/i, "").trim() ?? "");
      if (query.lastEventId) await checkResumePoint(deps.redis, key, query.lastEventId);
      // Per account and per API key across every gateway: a client reconnecting in a loop without closing must not
      // pile up readers, and one account cannot take the fleet's sockets.
      const lease = await withinReadyTimeout(leases.acquire(auth.accountId, keyPrefix ?? "-"));
      if ("full" in lease) {
        const max = lease.full === "account" ? config.STREAM_MAX_SOCKETS_PER_ACCOUNT : config.STREAM_MAX_SOCKETS_PER_KEY;
        const whose = lease.full === "account" ? "This account" : "This API key";
        throw new ApiError("too_many_connections", `${whose} already has ${lease.open} open stream connections (at most ${max}); close one first`);
      }
      client = new StreamClient({
        accountId: auth.accountId,
        credential,
        keyPrefix,
        category: query.category,
        lastEventId: query.lastEventId,
        maxBufferBytes,
        replay: async (after) => toEntries(await deps.redis.xrange(key, `(${after}`, "+", "COUNT", REPLAY_PAGE)),
        onClosed: (c) => { hub.leave(c); releaseLease(c); },
        onSlowConsumer: () => {
          metrics.drops.inc({ reason: "slow_consumer" });
          logger.info({ accountId: auth.accountId, requestId }, "trend stream client dropped: slow consumer");
        },
      });
      leaseOf.set(client, lease.leaseId);
    } catch (err) {
      return rejectUpgrade(socket, req, toApiError(err), requestId);
    }
    // A handshake that never completes (socket gone, bad WebSocket headers) must not stay subscribed.
    socket.once("close", () => { if (!client.ws) client.drop(CLOSE.goingAway, ""); });
    // Positioned: everything published from here on reaches this client. Redis down: 503 rather than a hung upgrade.
    try {
      await withinReadyTimeout(hub.join(client));
    } catch (err) {
      client.drop(CLOSE.goingAway, "");
      return rejectUpgrade(socket, req, toApiError(err), requestId);
    }
    if (client.isClosed || socket.destroyed) {
      client.drop(CLOSE.goingAway, "");
      return void socket.destroy();
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      wss.emit("connection", ws, req);
      void client.attach(ws);
    });
  }

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const incoming = req.headers["x-request-id"];
    const requestId = typeof incoming === "string" && SAFE_REQUEST_ID.test(incoming) ? incoming : `req_${crypto.randomUUID().replace(/-/g, "")}`;
    socket.on("error", () => { /* client went away; 'close' cleans up */ });
    if (url.pathname !== STREAM_PATH) {
      if (server.listenerCount("upgrade") > 1) return; // someone else's upgrade
      return rejectUpgrade(socket, req, new ApiError("route_not_found", `No WebSocket endpoint at ${url.pathname}; use ${STREAM_PATH}`), requestId);
    }
    handle(req, socket, head, url, requestId).catch((err) => {
      logger.error({ err, requestId }, "trend stream upgrade failed");
      rejectUpgrade(socket, req, toApiError(err), requestId);
    });
  };
  server.on("upgrade", onUpgrade);

  return {
    stats: () => ({ ...hub.stats(), sockets: wss.clients.size }),
    async close() {
      if (closing) return;
      closing = true;
      clearInterval(heartbeat);
      stopWatchingKeys();
      server.off("upgrade", onUpgrade);
      const open = [...wss.clients];
      const closed = Promise.all(open.map((ws) => ws.readyState === WebSocket.CLOSED ? undefined : new Promise((r) => ws.once("close", r))));
      for (const c of hub.clients()) c.drop(CLOSE.goingAway, "server shutting down");
      for (const ws of open) if (ws.readyState === WebSocket.OPEN) ws.close(CLOSE.goingAway, "server shutting down");
      hub.stop();
      const grace = new Promise((r) => setTimeout(r, SHUTDOWN_GRACE_MS).unref());
      await Promise.race([closed, grace]);
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((r) => wss.close(() => r()));
      metrics.unregister();
    },
  };
}

const METRIC_NAMES = ["trend_stream_connections", "trend_stream_drops_total"];

/** On the gateway's /metrics registry; re-attaching (tests) replaces the previous stream's metrics. */
function streamMetrics(deps: GatewayDeps, openSockets: () => number) {
  const registry = deps.metrics;
  for (const name of METRIC_NAMES) registry.removeSingleMetric(name);
  new Gauge({
    name: "trend_stream_connections", help: "Open trend stream WebSocket connections", registers: [registry],
    collect() { this.set(openSockets()); },
  });
  const drops = new Counter({
    name: "trend_stream_drops_total", help: "Trend stream sockets closed by the server, by reason", labelNames: ["reason"], registers: [registry],
  });
  return { drops, unregister() { for (const name of METRIC_NAMES) registry.removeSingleMetric(name); } };
}
