import crypto from "node:crypto";
import type { Redis } from "ioredis";
import { ApiError } from "./api-error.ts";
import type { Reply } from "./route.ts";

// Idempotency-Key handling, after the IETF httpapi draft and Stripe: per account, keyed by the caller's key, bound
// to a fingerprint of the request (method, path, raw body). Records live in Redis for IDEMPOTENCY_TTL_SECONDS.
const KEY_RE = /^[\x21-\x7e]{1,255}$/; // visible ASCII
const LOCK_SECONDS = 60; // a crashed request frees its key after this long

type Stored = { state: "processing"; fp: string } | { state: "done"; fp: string; reply: Reply };

export type Begin = { replay: Reply } | { proceed: true };

export class IdempotencyStore {
  constructor(private readonly redis: Redis, private readonly prefix: string, private readonly ttlSeconds: number) {}

  static checkHeader(value: string | undefined): string | undefined {
    if (value === undefined) return undefined;
    if (!KEY_RE.test(value)) throw new ApiError("invalid_idempotency_key", "Idempotency-Key must be 1-255 visible ASCII characters");
    return value;
  }

  static fingerprint(method: string, path: string, raw: Buffer | undefined) {
    return crypto.createHash("sha256").update(`${method} ${path}\n`).update(raw ?? Buffer.alloc(0)).digest("base64url");
  }

  private k(accountId: string, key: string) {
    return `${this.prefix}:idem:${accountId}:${key}`;
  }

  async begin(accountId: string, key: string, fp: string): Promise<Begin> {
    const k = this.k(accountId, key);
    const won = await this.redis.set(k, JSON.stringify({ state: "processing", fp }), "EX", LOCK_SECONDS, "NX");
    if (won) return { proceed: true };
    const raw = await this.redis.get(k);
    const stored: Stored | null = raw ? JSON.parse(raw) : null;
    if (stored && stored.fp !== fp)
      throw new ApiError("idempotency_key_reused", "This Idempotency-Key was used with a different request (method, path or body)");
    if (!stored || stored.state === "processing")
      throw new ApiError("idempotency_request_in_progress", "The first request with this Idempotency-Key has not finished; retry shortly", { headers: { "Retry-After": "1" } });
    return { replay: stored.reply };
  }

  /** Remembers the final answer. 5xx answers are not kept, so the caller's retry runs the request again. */
  async complete(accountId: string, key: string, fp: string, reply: Reply) {
    const k = this.k(accountId, key);
    if (reply.status >= 500) return this.redis.del(k);
    await this.redis.set(k, JSON.stringify({ state: "done", fp, reply }), "EX", this.ttlSeconds);
  }

  async release(accountId: string, key: string) {
    await this.redis.del(this.k(accountId, key)).catch(() => {});
  }
}
