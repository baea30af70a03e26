import type { RedisConnection } from "@trendgate/queues";
import type { NextFunction, Request, Response } from "express";
import { RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import { ApiError } from "./api-error.ts";
import type { AuthContext } from "./auth-context.ts";

/**
 * Fixed-window quota per account, shared by all its keys (minting keys adds no quota), counted in Redis so every
 * gateway instance shares it. The quota comes from the account's plan (RATE_LIMIT_PLANS); an unknown plan falls back
 * to `free`.
 */
export class RateLimits {
  private readonly limiters = new Map<string, RateLimiterRedis>();

  constructor(redis: RedisConnection, private readonly plans: Record<string, number>, windowSeconds: number, prefix: string) {
    for (const [plan, points] of Object.entries(plans)) {
      this.limiters.set(plan, new RateLimiterRedis({ storeClient: redis, keyPrefix: `${prefix}:rl:${plan}`, points, duration: windowSeconds }));
    }
  }

  /**
   * Counts one request against the account's quota (`accountId`: also any other subject, e.g. a client address). Returns the X-RateLimit-* headers; over quota, throws a 429 ApiError
   * carrying them and Retry-After. Used by every authenticated route and by stream upgrades.
   */
  async consume(auth: AuthContext): Promise<Record<string, string>> {
    const limiter = this.limiters.get(this.limiters.has(auth.plan) ? auth.plan : "free")!;
    let r: RateLimiterRes;
    let limited = false;
    try {
      r = await limiter.consume(auth.accountId);
    } catch (e) {
      if (!(e instanceof RateLimiterRes)) throw e; // Redis unreachable: becomes 503
      r = e;
      limited = true;
    }
    const headers = {
      "X-RateLimit-Limit": String(limiter.points),
      "X-RateLimit-Remaining": String(Math.max(0, r.remainingPoints)),
      "X-RateLimit-Reset": String(Math.ceil((Date.now() + r.msBeforeNext) / 1000)),
    };
    if (limited) {
      throw new ApiError("rate_limited", `Quota of ${limiter.points} requests per window exceeded`, {
        headers: { ...headers, "Retry-After": String(Math.max(1, Math.ceil(r.msBeforeNext / 1000))) },
      });
    }
    return headers;
  }

  middleware() {
    return async (req: Request, res: Response, next: NextFunction) => {
      for (const [k, v] of Object.entries(await this.consume(req.auth!))) res.setHeader(k, v);
      next();
    };
  }
}

/**
 * Failed authentications per client address (brute force, credential stuffing), counted in Redis so every gateway
 * instance shares the count. Over AUTH_FAILURES_PER_MINUTE, the address's failures answer 429 with Retry-After until
 * the minute is over; its valid API keys still pass (see Authenticator), and the admin token is not even compared.
 */
export class AuthFailureLimiter {
  private readonly limiter: RateLimiterRedis;

  constructor(redis: RedisConnection, prefix: string, private readonly perMinute: number) {
    this.limiter = new RateLimiterRedis({ storeClient: redis, keyPrefix: `${prefix}:authfail`, points: perMinute, duration: 60 });
  }

  async assertAllowed(address: string) {
    const r = await this.limiter.get(address);
    if (r && r.consumedPoints >= this.perMinute) {
      throw new ApiError("rate_limited", `Too many failed authentications from this address (more than ${this.perMinute} a minute); retry later`, {
        headers: { "Retry-After": String(Math.max(1, Math.ceil(r.msBeforeNext / 1000))) },
      });
    }
  }

  async recordFailure(address: string) {
    await this.limiter.consume(address).catch((e) => { if (!(e instanceof RateLimiterRes)) throw e; });
  }
}
