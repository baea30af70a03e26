import crypto from "node:crypto";
import type { SecretBox } from "@trendgate/crypto";
import {
  claimIdempotencyKey, completeIdempotencyKey, purgeExpiredIdempotencyKeys, readIdempotencyKey, releaseIdempotencyKey,
  type Db, type Tx,
} from "@trendgate/db";
import type { Logger } from "@trendgate/logger";
import { ApiError } from "./api-error.ts";
import type { Reply } from "./route.ts";

// Idempotency-Key handling, after the IETF httpapi draft and Stripe: per account, keyed by the caller's key, bound
// to a fingerprint of the request (method, path, raw body), kept IDEMPOTENCY_TTL_SECONDS in Postgres.
// Crash safety: a request that writes rows completes its key inside the same transaction (HandlerContext.atomically),
// so "committed" and "answer recorded" are one event: a retry after a crash between commit and answer replays.
// Secrets: the recorded answer may hold a secret shown once (an API key, a webhook secret), so it is sealed with the
// SecretBox that seals credentials; nothing of it is stored in Redis.
const KEY_RE = /^[\x21-\x7e]{1,255}$/; // visible ASCII
const PURGE_EVERY_MS = 10 * 60_000;

export type Begin = { replay: Reply } | { proceed: true; token: string };

export class IdempotencyStore {
  private purgeTimer?: NodeJS.Timeout;

  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly ttlSeconds: number,
    /** How long a request holds its key: one that died before committing frees it after this long. */
    private readonly lockSeconds: number,
    private readonly logger?: Logger,
  ) {}

  static checkHeader(value: string | undefined): string | undefined {
    if (value === undefined) return undefined;
    if (!KEY_RE.test(value)) throw new ApiError("invalid_idempotency_key", "Idempotency-Key must be 1-255 visible ASCII characters");
    return value;
  }

  static fingerprint(method: string, path: string, raw: Buffer | undefined) {
    return crypto.createHash("sha256").update(`${method} ${path}\n`).update(raw ?? Buffer.alloc(0)).digest("base64url");
  }

  /** Expired records are deleted in the background (every gateway does it; the deletes do not conflict). */
  start() {
    this.purgeTimer = setInterval(() => {
      purgeExpiredIdempotencyKeys(this.db).catch((err) => this.logger?.warn({ err: String(err) }, "idempotency purge failed"));
    }, PURGE_EVERY_MS);
    this.purgeTimer.unref();
  }

  stop() { clearInterval(this.purgeTimer); }

  async begin(accountId: string, key: string, fingerprint: string): Promise<Begin> {
    for (let tries = 0; tries < 2; tries++) {
      const token = crypto.randomUUID();
      if (await claimIdempotencyKey(this.db, { accountId, key, fingerprint, token, lockSeconds: this.lockSeconds, ttlSeconds: this.ttlSeconds }))
        return { proceed: true, token };
      const stored = await readIdempotencyKey(this.db, accountId, key);
      if (!stored) continue; // expired between the two statements: claim again
      if (stored.fingerprint !== fingerprint)
        throw new ApiError("idempotency_key_reused", "This Idempotency-Key was used with a different request (method, path or body)");
      if (stored.status === "processing")
        throw new ApiError("idempotency_request_in_progress", "The first request with this Idempotency-Key has not finished; retry shortly", { headers: { "Retry-After": "1" } });
      const { headers, body } = JSON.parse(this.box.open(stored.responseSealed)) as Omit<Reply, "status">;
      return { replay: { status: stored.responseStatus, headers, body } };
    }
    throw new ApiError("idempotency_request_in_progress", "This Idempotency-Key is changing hands; retry shortly", { headers: { "Retry-After": "1" } });
  }

  /**
   * Records the answer: in `tx` when the request wrote rows in a transaction (then a false return must roll it back).
   * 5xx answers are not kept, so the caller's retry runs the request again.
   */
  async complete(db: Db | Tx, accountId: string, key: string, token: string, reply: Reply): Promise<boolean> {
    if (reply.status >= 500) { await this.release(accountId, key, token); return true; }
    const sealed = this.box.seal(JSON.stringify({ headers: reply.headers, body: reply.body }));
    return completeIdempotencyKey(db, accountId, key, token, reply.status, sealed);
  }

  async release(accountId: string, key: string, token: string) {
    await releaseIdempotencyKey(this.db, accountId, key, token).catch(() => {});
  }
}
