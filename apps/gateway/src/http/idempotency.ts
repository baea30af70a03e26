import type { RedisConnection } from "@trendgate/queues";
import crypto from "node:crypto";
import type pg from "pg";
import type { SecretBox } from "@trendgate/crypto";
import { findCommittedAnswer, purgeExpiredIdempotencyKeys, recordCommittedAnswer, type Tx } from "@trendgate/db";
import type { Logger } from "@trendgate/logger";
import { ApiError } from "./api-error.ts";
import type { Reply } from "./reply.ts";

// Idempotency-Key handling, after the IETF httpapi draft and Stripe: per account, keyed by the caller's key, bound
// to a fingerprint of the request (method, path, raw body), kept IDEMPOTENCY_TTL_SECONDS.
// - The claim of a request in flight is a Redis key (SET NX with IDEMPOTENCY_LOCK_SECONDS): cheap, shared by every
//   gateway, and holds nothing secret.
// - Crash safety: a route whose work commits rows (`idempotent: "transactional"`) records its answer in Postgres in
//   that same transaction (HandlerContext.atomically). A retry after a crash between commit and answer finds it and
//   replays, whatever Redis says; a crash before the commit wrote nothing, and the claim frees itself.
// - Answers are sealed with the SecretBox that seals credentials (they may hold a secret shown once: an API key, a
//   webhook secret), in Postgres and in Redis alike.
const KEY_RE = /^[\x21-\x7e]{1,255}$/; // visible ASCII
const PURGE_EVERY_MS = 10 * 60_000;

type Stored =
  | { state: "processing"; fp: string; token: string }
  | { state: "done"; fp: string; status: number; sealed: string };

export type Begin = { replay: Reply } | { proceed: true; token: string };
export interface Claim { accountId: string; key: string; fingerprint: string; token: string }

export class IdempotencyStore {
  private purgeTimer?: NodeJS.Timeout;

  constructor(
    private readonly redis: RedisConnection,
    /** The shared pg pool (db.$pool): reading committed answers and purging them. */
    private readonly pool: pg.Pool,
    private readonly box: SecretBox,
    private readonly opts: { prefix: string; ttlSeconds: number; lockSeconds: number; logger?: Logger },
  ) {}

  static checkHeader(value: string | undefined): string | undefined {
    if (value === undefined) return undefined;
    if (!KEY_RE.test(value)) throw new ApiError("invalid_idempotency_key", "Idempotency-Key must be 1-255 visible ASCII characters");
    return value;
  }

  static fingerprint(method: string, path: string, raw: Buffer | undefined) {
    return crypto.createHash("sha256").update(`${method} ${path}\n`).update(raw ?? Buffer.alloc(0)).digest("base64url");
  }

  /** Expired committed answers are deleted in the background (every gateway does it; the deletes do not conflict). */
  start() {
    this.purgeTimer = setInterval(() => {
      purgeExpiredIdempotencyKeys(this.pool).catch((err) => this.opts.logger?.warn({ err: String(err) }, "idempotency purge failed"));
    }, PURGE_EVERY_MS);
    this.purgeTimer.unref();
  }

  stop() { clearInterval(this.purgeTimer); }

  private k(accountId: string, key: string) { return `${this.opts.prefix}:idem:${accountId}:${key}`; }

  /** Claims the key, or answers with the replay / 409 / 422. `transactional`: the route records answers in Postgres. */
  async begin(accountId: string, key: string, fingerprint: string, transactional = false): Promise<Begin> {
    const k = this.k(accountId, key);
    for (let tries = 0; tries < 3; tries++) {
      const token = crypto.randomUUID();
      const claim: Stored = { state: "processing", fp: fingerprint, token };
      if (await this.redis.set(k, JSON.stringify(claim), "EX", this.opts.lockSeconds, "NX")) {
        // Redis may have lost the answer (flushed, or the claim of a request that crashed after committing expired).
        const committed = transactional && await findCommittedAnswer(this.pool, accountId, key);
        if (!committed) return { proceed: true, token };
        await this.redis.del(k);
        return this.replay(committed.fingerprint, fingerprint, committed.responseStatus, committed.responseSealed);
      }
      const raw = await this.redis.get(k);
      if (!raw) continue; // expired between the two calls: claim again
      const stored = JSON.parse(raw) as Stored;
      if (stored.state === "done") return this.replay(stored.fp, fingerprint, stored.status, stored.sealed);
      if (stored.fp !== fingerprint) throw reused();
      // In flight, or its gateway died after committing and before answering: the committed answer says which.
      const committed = transactional && await findCommittedAnswer(this.pool, accountId, key);
      if (committed) return this.replay(committed.fingerprint, fingerprint, committed.responseStatus, committed.responseSealed);
      throw new ApiError("idempotency_request_in_progress", "The first request with this Idempotency-Key has not finished; retry shortly", { headers: { "Retry-After": "1" } });
    }
    throw new ApiError("idempotency_request_in_progress", "This Idempotency-Key is changing hands; retry shortly", { headers: { "Retry-After": "1" } });
  }

  private replay(storedFp: string, fp: string, status: number, sealed: string): Begin {
    if (storedFp !== fp) throw reused();
    const { headers, body } = JSON.parse(this.box.open(sealed)) as Omit<Reply, "status">;
    return { replay: { status, headers, body } };
  }

  /** Records the answer in the request's transaction; false means another request with the key committed first. */
  recordInTransaction(tx: Tx, c: Claim, reply: Reply): Promise<boolean> {
    return recordCommittedAnswer(tx, {
      accountId: c.accountId, key: c.key, fingerprint: c.fingerprint, ttlSeconds: this.opts.ttlSeconds,
      responseStatus: reply.status, responseSealed: this.seal(reply),
    });
  }

  /** Remembers the final answer in Redis (sealed). 5xx answers are not kept, so the caller's retry runs again. */
  async complete(c: Claim, reply: Reply) {
    if (reply.status >= 500) return this.release(c);
    const done: Stored = { state: "done", fp: c.fingerprint, status: reply.status, sealed: this.seal(reply) };
    await this.redis.set(this.k(c.accountId, c.key), JSON.stringify(done), "EX", this.opts.ttlSeconds);
  }

  /** Frees the key of a request that failed without committing anything, so the caller's retry runs. */
  async release(c: Claim) {
    const k = this.k(c.accountId, c.key);
    const raw = await this.redis.get(k).catch(() => null);
    if (raw && (JSON.parse(raw) as Stored & { token?: string }).token === c.token) await this.redis.del(k).catch(() => {});
  }

  private seal(reply: Reply) { return this.box.seal(JSON.stringify({ headers: reply.headers, body: reply.body })); }
}

const reused = () => new ApiError("idempotency_key_reused", "This Idempotency-Key was used with a different request (method, path or body)");
