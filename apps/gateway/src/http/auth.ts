import type { NextFunction, Request, Response } from "express";
import { findConsoleSessionByToken, findKeyByValue, hashKey, isConsoleToken, isKeyUsable, parseConsoleToken, parseKey, type Db } from "@trendgate/db";
import type { Logger } from "@trendgate/logger";
import { createRedis, type RedisConnection } from "@trendgate/queues";
import { ApiError } from "./api-error.ts";
import type { AuthFailureLimiter } from "./rate-limit.ts";
import type { AuthContext } from "./auth-context.ts";

/** What authenticates a request: an API key, or a web console session (a bearer token scoped to one account). */
interface Credential {
  kind: AuthContext["credential"]["kind"];
  id: string;
  accountId: string;
  plan: string;
  label: string | null;
  secretHash: string;
  revokedAt: Date | null;
  expiresAt: Date | null;
}
type CachedKey = { row: Credential; fetchedAt: number };

/**
 * The id a credential is cached and invalidated under: an API key's public prefix, a console session's id; null
 * when the value is neither.
 */
export function credentialCacheKey(token: string): string | null {
  return isConsoleToken(token) ? parseConsoleToken(token)?.sessionId ?? null : parseKey(token)?.prefix ?? null;
}

async function findCredential(db: Db, token: string): Promise<Credential | null> {
  if (isConsoleToken(token)) {
    const s = await findConsoleSessionByToken(db, token);
    return s && { kind: "consoleSession", id: s.id, accountId: s.accountId, plan: s.account.plan, label: s.label, secretHash: s.tokenHash!, revokedAt: s.revokedAt, expiresAt: s.expiresAt };
  }
  const k = await findKeyByValue(db, token);
  return k && { kind: "apiKey", id: k.id, accountId: k.accountId, plan: k.account.plan, label: null, secretHash: k.secretHash, revokedAt: k.revokedAt, expiresAt: k.expiresAt };
}

const TOUCH_EVERY_MS = 60_000; // last_used_at precision: one write per key per minute at most

/**
 * Bearer API-key authentication. Verified keys are cached in-process for AUTH_CACHE_SECONDS so the hot path does
 * not hit Postgres; revocation and rotation publish an invalidation on Redis that every gateway instance applies.
 */
export class Authenticator {
  private readonly cache = new Map<string, CachedKey>();
  private readonly touched = new Map<string, number>();
  private readonly invalidationListeners = new Set<(prefix: string) => void>();
  private sub?: RedisConnection;

  constructor(
    private readonly db: Db,
    private readonly redis: RedisConnection,
    private readonly opts: { cacheMs: number; channel: string; redisUrl: string; logger: Logger; failures?: AuthFailureLimiter },
  ) {}

  async start() {
    if (this.opts.cacheMs === 0) return;
    this.sub = createRedis(this.opts.redisUrl, "worker", { lazyConnect: true });
    this.sub.on("message", (_ch, prefix: string) => this.dropCached(prefix));
    await this.sub.connect().then(() => this.sub!.subscribe(this.opts.channel)).catch((err) =>
      this.opts.logger.warn({ err: String(err) }, "auth cache invalidation unavailable; relying on cache expiry"));
  }

  async stop() { this.sub?.disconnect(); }

  /** Drops a credential (an API key's prefix, a console session's id) from every instance's cache (after revoke/rotate). */
  async invalidate(prefix: string) {
    this.dropCached(prefix);
    await this.redis.publish(this.opts.channel, prefix).catch(() => {});
  }

  /** Called with a key's prefix whenever it was revoked or rotated anywhere (long-lived connections re-check it). */
  onInvalidate(listener: (prefix: string) => void) {
    this.invalidationListeners.add(listener);
    return () => this.invalidationListeners.delete(listener);
  }

  private dropCached(prefix: string) {
    this.cache.delete(prefix);
    for (const l of this.invalidationListeners) l(prefix);
  }

  /**
   * authenticate() for a request from `address`: a key verified recently by this process passes at once. A valid key
   * always passes: every client behind one NAT or proxy shares an address, and one misconfigured neighbour must not
   * lock the others out. A failure counts against the address; over its limit, a failure answers 429 (the guesser
   * learns nothing more, and a key space of 2^258 leaves nothing to find).
   */
  async authenticateFrom(header: string | undefined, address: string): Promise<AuthContext> {
    const failures = this.opts.failures;
    if (!failures || this.isCachedValid(header)) return this.authenticate(header);
    try {
      return await this.authenticate(header);
    } catch (err) {
      if (err instanceof ApiError && err.code === "unauthorized") {
        await failures.assertAllowed(address);
        await failures.recordFailure(address);
      }
      throw err;
    }
  }

  private isCachedValid(header: string | undefined): boolean {
    const key = header && /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
    const id = key ? credentialCacheKey(key) : null;
    const hit = id && this.cache.get(id);
    return !!hit && Date.now() - hit.fetchedAt <= this.opts.cacheMs && hit.row.secretHash === hashKey(key!);
  }

  async authenticate(header: string | undefined): Promise<AuthContext> {
    const m = header && /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!m) throw unauthorized("Send the API key as `Authorization: Bearer <API_KEY>`", false);
    const key = m[1];
    const id = credentialCacheKey(key);
    if (!id) throw unauthorized("The API key is malformed", true);
    const session = isConsoleToken(key);

    const now = Date.now();
    let hit = this.cache.get(id);
    if (!hit || now - hit.fetchedAt > this.opts.cacheMs) {
      const row = await findCredential(this.db, key);
      if (!row) { this.cache.delete(id); throw unauthorized(session ? "The console session is not recognised" : "The API key is not recognised", true); }
      hit = { row, fetchedAt: now };
      if (this.opts.cacheMs > 0) this.cache.set(id, hit);
    } else if (hit.row.secretHash !== hashKey(key)) { // fixed-length hex digests: not a timing oracle on the key
      throw unauthorized("The API key is not recognised", true);
    }
    const { row } = hit;
    if (row.revokedAt) throw unauthorized(session ? "The console session has been revoked" : "The API key has been revoked", true);
    if (!isKeyUsable(row, new Date(now))) throw unauthorized(session ? "The console session has expired" : "The API key has expired", true);
    if (row.kind === "apiKey") this.touch(row.id, now);
    return { accountId: row.accountId, credential: { kind: row.kind, id: row.id, ...(row.label ? { label: row.label } : {}) }, plan: row.plan };
  }

  private touch(id: string, now: number) {
    if (now - (this.touched.get(id) ?? 0) < TOUCH_EVERY_MS) return;
    this.touched.set(id, now);
    this.db.apiKey.update({ where: { id }, data: { lastUsedAt: new Date(now) } }).catch(() => {});
  }

  middleware() {
    return async (req: Request, _res: Response, next: NextFunction) => {
      req.auth = await this.authenticateFrom(req.get("authorization"), clientAddress(req));
      next();
    };
  }
}

/** The address failed authentications are counted against (behind TRUST_PROXY: the client's, not the balancer's). */
export const clientAddress = (req: Request) => req.ip ?? req.socket.remoteAddress ?? "unknown";

function unauthorized(detail: string, invalidToken: boolean) {
  const challenge = invalidToken ? 'Bearer realm="trendgate", error="invalid_token"' : 'Bearer realm="trendgate"';
  return new ApiError("unauthorized", detail, { headers: { "WWW-Authenticate": challenge } });
}
