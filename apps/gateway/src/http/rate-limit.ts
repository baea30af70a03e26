import type { NextFunction, Request, Response } from "express";
import type { Redis } from "ioredis";
import { RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import { ApiError } from "./api-error.ts";

/**
 * Fixed-window quota per API key, counted in Redis so every gateway instance shares it. The quota comes from the
 * account's plan (RATE_LIMIT_PLANS); an unknown plan falls back to `free`.
 */
export class RateLimits {
  private readonly limiters = new Map<string, RateLimiterRedis>();

  constructor(redis: Redis, private readonly plans: Record<string, number>, windowSeconds: number, prefix: string) {
    for (const [plan, points] of Object.entries(plans)) {
      this.limiters.set(plan, new RateLimiterRedis({ storeClient: redis, keyPrefix: `${prefix}:rl:${plan}`, points, duration: windowSeconds }));
    }
  }

  middleware() {
    return async (req: Request, res: Response, next: NextFunction) => {
      const auth = req.auth!;
      const plan = this.limiters.has(auth.plan) ? auth.plan : "free";
      const limiter = this.limiters.get(plan)!;
      let r: RateLimiterRes;
      let limited = false;
      try {
        r = await limiter.consume(auth.keyId);
      } catch (e) {
        if (!(e instanceof RateLimiterRes)) throw e; // Redis unreachable: becomes 503
        r = e;
        limited = true;
      }
      res.setHeader("X-RateLimit-Limit", String(limiter.points));
      res.setHeader("X-RateLimit-Remaining", String(Math.max(0, r.remainingPoints)));
      res.setHeader("X-RateLimit-Reset", String(Math.ceil((Date.now() + r.msBeforeNext) / 1000)));
      if (limited) {
        throw new ApiError("rate_limited", `Quota of ${limiter.points} requests per window exceeded`, {
          headers: { "Retry-After": String(Math.max(1, Math.ceil(r.msBeforeNext / 1000))) },
        });
      }
      next();
    };
  }
}
