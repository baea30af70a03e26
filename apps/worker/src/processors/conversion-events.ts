import { ProviderError, baseUrlOf } from "@trendgate/connector-core";
import type { ConversionPush, ConversionResult } from "@trendgate/connector-conversions";
import { QUEUES } from "@trendgate/contracts";
import { recordOutboxAttempt, type OutboxMessage } from "@trendgate/db";
import type { RetrySchedule } from "@trendgate/delivery";
import { queueOutboxAttempt } from "@trendgate/queues";
import { DeferError, judgeFailure, OUTBOX_MAX_RETRY_AFTER_SECONDS, OUTBOX_RETRY_JITTER, outboxProcessor, type OutboxHandler } from "../outbox/index.ts";
import type { WorkerDeps } from "./types.ts";

// Conversion events (community ads, spec 4.3) on the shared outbox (QUEUES.conversionEvents), sent in batches per
// pixel while every message keeps its own attempt record:
// - A message's job that runs first becomes the batch's leader. A young message first waits up to
//   CONVERSION_BATCH_WAIT_MS (from its creation) for others to join, unless a full batch is already pending.
// - The leader claims its own message and up to maxBatchSize-1 other due, pending messages of the same connection,
//   pixel and test id (a Redis key per message, SET NX with a TTL), sends them in one request, then records each
//   claimed message's attempt (recordOutboxAttempt, the same record the processor writes: it only applies while the
//   message has fewer attempts) and queues the next attempt of those to retry. Its own message is recorded by the
//   processor from what send returns or throws.
// - A job whose message is claimed by another leader defers itself briefly; when it runs again it finds its attempt
//   recorded and stops (the processor's rule), or, when the leader died, its claim expired and it sends itself.
// Crash safety: rows are the record, claims only avoid double sends. A kill between the send and the records
// leaves the messages pending with their jobs (or the sweeper's) due: they are sent again once the claims expire
// (at least once; Reddit de-duplicates on conversion_id, which every event carries). A FLUSHALL loses jobs and
// claims only; the sweeper re-queues the pending rows.
// Credentials refused: the connection is marked needs_reauth and the messages are deferred (not failed) until
// someone authorizes again; they are then sent unless older than the provider's 7 days by then.

/** How long a young message waits for others to fill its batch. */
export const CONVERSION_BATCH_WAIT_MS = 200;
/** A claim's lifetime: longer than one request (15 s timeout) plus the records; after a leader's death, its batch waits this long. */
const CLAIM_TTL_MS = 20_000;
/** A claimed message's job looks again after this long. */
const CLAIMED_RETRY_MS = 1_000;
/** Messages of a connection that needs re-authorization look again after this long. */
export const CONVERSION_REAUTH_WAIT_MS = 30_000;

interface Payload { pixel_id: string; ad_account_id: string; test_id: string | null; event: ConversionPush }
const payloadOf = (m: { payload: unknown }): Payload | null => {
  const p = m.payload as Partial<Payload> | null;
  return p && typeof p.pixel_id === "string" && p.event && typeof p.event === "object" ? (p as Payload) : null;
};

type Member = { id: string; attempts: number; payload: Payload };

export function conversionEventHandler(deps: WorkerDeps): OutboxHandler {
  const { db, config, logger, queues } = deps;
  const redis = queues.connection;
  const claimKey = (id: string) => `${config.QUEUE_PREFIX}:conversions:claim:${id}`;
  const schedule: RetrySchedule = { delaysSeconds: config.OUTBOX_RETRY_SCHEDULE_SECONDS, jitter: OUTBOX_RETRY_JITTER, maxRetryAfterSeconds: OUTBOX_MAX_RETRY_AFTER_SECONDS };

  async function claim(ids: string[], leader: string): Promise<Set<string>> {
    if (!ids.length) return new Set();
    const p = redis.pipeline();
    for (const id of ids) p.set(claimKey(id), leader, "PX", CLAIM_TTL_MS, "NX");
    const r = (await p.exec()) ?? [];
    return new Set(ids.filter((_, i) => r[i]?.[1] === "OK"));
  }
  async function release(ids: string[]) {
    if (ids.length) await redis.del(...ids.map(claimKey)).catch(() => undefined);
  }

  /** Due, pending messages of the same batch group, oldest first (not the leader's). */
  async function companions(m: OutboxMessage, p: Payload, limit: number): Promise<Member[]> {
    if (limit <= 0) return [];
    const { rows } = await db.$pool.query<{ id: string; attempts: number; payload: Payload }>(
      `SELECT id, attempts, payload FROM outbox_messages
        WHERE queue = $1 AND connection_id = $2 AND status = 'pending' AND id <> $3 AND subject_id = $4
          AND coalesce(payload->>'test_id', '') = $5 AND next_attempt_at <= now() AT TIME ZONE 'UTC'
        ORDER BY next_attempt_at, id LIMIT $6`,
      [QUEUES.conversionEvents, m.connectionId, m.id, p.pixel_id, p.test_id ?? "", limit]);
    return rows;
  }

  async function pendingCount(m: OutboxMessage, p: Payload, max: number): Promise<number> {
    const { rows } = await db.$pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM (SELECT 1 FROM outbox_messages WHERE queue = $1 AND connection_id = $2 AND status = 'pending'
          AND subject_id = $3 AND coalesce(payload->>'test_id', '') = $4 LIMIT $5) x`,
      [QUEUES.conversionEvents, m.connectionId, p.pixel_id, p.test_id ?? "", max]);
    return rows[0]?.n ?? 0;
  }

  /** Records a companion's attempt (and queues its next one); a companion recorded meanwhile is left as it is. */
  async function recordCompanion(c: Member, r: ConversionResult, leader: string, size: number, ms: number) {
    const attempt = c.attempts + 1;
    if (r.ok) {
      await recordOutboxAttempt(db, { messageId: c.id, attempt, outcome: "succeeded", durationMs: ms, result: { batch_leader: leader, batch_size: size } });
      return;
    }
    const v = judgeFailure(r.error, schedule, attempt);
    const nextRetryAt = v.delayMs === null ? null : new Date(Date.now() + v.delayMs);
    const saved = await recordOutboxAttempt(db, {
      messageId: c.id, attempt, outcome: v.outcome, durationMs: ms, responseStatus: v.responseStatus, errorClass: v.errorClass, errorMessage: v.errorMessage, nextRetryAt,
    });
    if (saved.recorded && saved.status === "pending" && nextRetryAt)
      await queueOutboxAttempt(queues, QUEUES.conversionEvents, { message_id: c.id, attempt: attempt + 1 }, nextRetryAt.getTime() - Date.now())
        .catch((err) => logger.warn({ message_id: c.id, err: String(err) }, "retry not queued; the sweeper will queue it"));
  }

  return {
    async send(message) {
      const p = payloadOf(message);
      if (!p) throw new ProviderError("conversions", "bad_request", "not a conversion event payload");
      const connector = deps.registry.single("conversions");
      const { limits } = connector;
      const conn = message.connectionId ? await db.connection.findUnique({ where: { id: message.connectionId } }) : null;
      if (!conn) throw new ProviderError(connector.manifest.id, "bad_request", "the connection was removed (disconnected) before the event could be sent");
      if (conn.status === "needs_reauth") throw new DeferError(CONVERSION_REAUTH_WAIT_MS);

      // A short wait to fill a batch: young messages wait for companions unless a full batch is already there.
      const age = Date.now() - message.createdAt.getTime();
      if (message.attempts === 0 && age < CONVERSION_BATCH_WAIT_MS && (await pendingCount(message, p, limits.maxBatchSize)) < limits.maxBatchSize)
        throw new DeferError(CONVERSION_BATCH_WAIT_MS - age);

      const mine = await claim([message.id], message.id);
      if (!mine.size) {
        if ((await redis.get(claimKey(message.id))) !== message.id) throw new DeferError(CLAIMED_RETRY_MS); // in another leader's batch
      }
      const candidates = await companions(message, p, limits.maxBatchSize - 1);
      const claimed = await claim(candidates.map((c) => c.id), message.id);
      const members: Member[] = candidates.filter((c) => claimed.has(c.id) && payloadOf(c));
      await release(candidates.filter((c) => !members.includes(c)).map((c) => c.id).filter((id) => claimed.has(id)));
      const all: Member[] = [{ id: message.id, attempts: message.attempts, payload: p }, ...members];
      const claimedIds = all.map((m) => m.id);
      const started = Date.now();

      try {
        // Events that aged past the provider's window while waiting (retries, re-authorization) are refused here.
        const results = new Map<string, ConversionResult>();
        const tooOld = (m: Member) => m.payload.event.data.event_at < Date.now() - limits.maxEventAgeMs;
        for (const m of all) if (tooOld(m)) results.set(m.id, { ok: false, error: new ProviderError(connector.manifest.id, "bad_request", "event_at is now more than 7 days old: the provider refuses it") });

        let accessToken: string;
        try {
          accessToken = await deps.connections.accessToken(conn);
        } catch (err) {
          if (err instanceof ProviderError && err.kind === "unauthorized") throw new DeferError(CONVERSION_REAUTH_WAIT_MS);
          throw err;
        }
        const client = connector.client({ baseUrl: baseUrlOf(connector.manifest, config.PROVIDER_ENV), accessToken });
        // One request; when the provider refuses some events of it by name, once more with the others.
        for (let round = 0; round < 2; round++) {
          const batch = all.filter((m) => !results.has(m.id) || (round > 0 && isBatchRefused(results.get(m.id)!)));
          if (!batch.length) break;
          let out: ConversionResult[];
          try {
            out = await client.sendBatch(p.pixel_id, batch.map((m) => m.payload.event), { testId: p.test_id ?? undefined });
          } catch (err) {
            if (err instanceof ProviderError && err.kind === "unauthorized") {
              await deps.connections.markNeedsReauth(conn.id, err.message).catch((e) => logger.warn({ err: String(e) }, "needs_reauth not recorded"));
              throw new DeferError(CONVERSION_REAUTH_WAIT_MS); // the messages wait for re-authorization
            }
            const error = err instanceof ProviderError ? err : new ProviderError(connector.manifest.id, "unavailable", String(err));
            for (const m of batch) results.set(m.id, { ok: false, error });
            break;
          }
          batch.forEach((m, i) => results.set(m.id, out[i]));
          if (!batch.some((m) => isBatchRefused(results.get(m.id)!))) break;
        }

        const ms = Date.now() - started;
        for (const c of members) {
          await recordCompanion(c, results.get(c.id)!, message.id, all.length, ms)
            .catch((err) => logger.warn({ message_id: c.id, err: String(err) }, "companion attempt not recorded; its own job sends it again"));
        }
        const own = results.get(message.id)!;
        if (!own.ok) throw own.error;
        return { pixel_id: p.pixel_id, batch_size: all.length, conversion_id: p.event.data.conversion_id };
      } finally {
        await release(claimedIds);
      }
    },
  };
}

const isBatchRefused = (r: ConversionResult) => !r.ok && r.error.detail.providerCode === "batch_refused";

export const conversionEvents = outboxProcessor(QUEUES.conversionEvents, conversionEventHandler);
