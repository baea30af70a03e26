import { ProviderError, baseUrlOf } from "@trendgate/connector-core";
import { conversionBatchGroup, type ConversionResult, type ConversionsConnector } from "@trendgate/connector-conversions";
import { ConversionMessagePayload, QUEUES } from "@trendgate/contracts";
import { countOutboxGroup, findOutboxBatch, type OutboxMessage } from "@trendgate/db";
import { releaseLock, tryLock } from "@trendgate/queues";
import { DeferError, HandedOffError } from "@trendgate/delivery";
import { outboxProcessor, type OutboxHandler, type OutboxMessageOf } from "../outbox/index.ts";
import type { WorkerDeps } from "./types.ts";

// Conversion events (community ads) on the shared outbox (QUEUES.conversionEvents), sent in batches per
// connection, pixel and test id (the message's subject_id, conversionBatchGroup) while every message keeps its own
// attempt record:
// - A young message first waits up to CONVERSION_BATCH_WAIT_MS (from its creation) for others to join, unless a full
//   batch is already pending.
// - Its job then takes its group's batch lock (Redis, one batch per group at a time), reads its own message (only
//   while still pending at the attempt it loaded) and up to maxBatchSize-1 other due messages of the group, lists
//   them in the batch's member set and sends them in one request. Every member's attempt, its own included, is
//   recorded through the processor's own record (ctx.settle, which queues the next attempt of those to retry), and
//   the job ends without a second record (HandedOffError). While full batches are due it goes on (up to
//   DRAIN_BUDGET_MS), reading and sending the next batch while the last one's records are written; the lock is
//   released once every record is written.
// - A job whose message is in the batch in flight ends without a record (HandedOffError): the leader records it, or,
//   if the leader dies, the message stays pending and the outbox sweeper re-queues it once overdue (the lock lapses
//   after BATCH_LOCK_TTL_MS). A job whose group is busy with a batch it is not in looks again after LEADER_WAIT_MS.
// Crash safety: rows are the record; the lock and member set only avoid double sends. A kill between the send and
// the records leaves the messages pending with their jobs (or the sweeper's) due: they are sent again once the lock
// lapses (at least once; Reddit de-duplicates on conversion_id, which every event carries). A FLUSHALL loses jobs
// and locks only; the sweeper re-queues the pending rows.
// Credentials refused: the connection is marked needs_reauth and the messages are deferred (not failed) until
// someone authorizes again; they are then sent unless older than the provider's 7 days by then.

/** A batch lock's lifetime: longer than one request (15 s timeout) plus the records; after a leader's death, its group waits this long. */
const BATCH_LOCK_TTL_MS = 20_000;
/** A job whose group has a batch in flight (and whose message is not in it) looks again after this long. */
const LEADER_WAIT_MS = 250;
/** How long one job goes on sending its group's batches while full ones are due. */
const DRAIN_BUDGET_MS = 5_000;

type Member = OutboxMessageOf<ConversionMessagePayload>;

/**
 * The batch's rows with their payloads parsed. A row whose payload does not parse is left out: its own job records
 * it as failed (invalid_payload).
 */
const membersOf = (rows: OutboxMessage[]): Member[] => rows.flatMap((m) => {
  const p = ConversionMessagePayload.safeParse(m.payload);
  return p.success ? [{ ...m, payload: p.data }] : [];
});

export function conversionEventHandler(deps: WorkerDeps): OutboxHandler<ConversionMessagePayload> {
  const { db, config, logger } = deps;
  const redis = deps.queues.connection;
  const batchWaitMs = config.CONVERSION_BATCH_WAIT_MS;
  /** Releases the group's batch lock with its member set, only while this job still holds it. */
  const unlock = (key: string, membersKey: string, owner: string) =>
    releaseLock(redis, key, owner, membersKey).catch((err) => logger.warn({ err: String(err) }, "batch lock not released; it lapses"));
  const reauthWaitMs = config.CONVERSION_REAUTH_RECHECK_SECONDS * 1000;

  return {
    async send(message, ctx) {
      const p = message.payload;
      const connector = deps.registry.single("conversions");
      const { limits } = connector;
      const conn = message.connectionId ? await db.connection.findUnique({ where: { id: message.connectionId } }) : null;
      if (!conn) throw new ProviderError(connector.manifest.id, "bad_request", "the connection was removed (disconnected) before the event could be sent");
      if (conn.status === "needs_reauth") throw new DeferError(reauthWaitMs);

      // A short wait to fill a batch: young messages wait for companions unless a full batch is already there.
      const group = { queue: QUEUES.conversionEvents, connectionId: conn.id, subjectId: message.subjectId ?? conversionBatchGroup(p) };
      const age = Date.now() - message.createdAt.getTime();
      if (message.attempts === 0 && age < batchWaitMs && (await countOutboxGroup(db, group, limits.maxBatchSize)) < limits.maxBatchSize)
        throw new DeferError(batchWaitMs - age);

      // One batch per group at a time (a Redis lock per group): concurrent leaders would each take a slice of a big
      // group, many small requests instead of one. A job whose message rides in the batch in flight (the batch's
      // members are a Redis set) ends without a record; any other looks again shortly.
      const owner = `${message.id}:${ctx.attempt}`;
      // Hash-tagged: the lock and its members set are used together in one script (one Redis Cluster slot).
      const lockKey = `${config.QUEUE_PREFIX}:conversions:batch:{${group.connectionId}:${group.subjectId}}`;
      const membersKey = `${lockKey}:members`;
      if (!(await tryLock(redis, lockKey, owner, BATCH_LOCK_TTL_MS))) {
        if (await redis.sismember(membersKey, message.id)) throw new HandedOffError("in another job's batch");
        throw new DeferError(LEADER_WAIT_MS);
      }
      let first: OutboxMessage[] | null;
      try {
        first = await findOutboxBatch(db, group, message, limits.maxBatchSize - 1);
      } catch (err) {
        await unlock(lockKey, membersKey, owner);
        throw err;
      }
      if (!first) {
        await unlock(lockKey, membersKey, owner);
        throw new HandedOffError("recorded meanwhile by an earlier batch");
      }

      // Batches follow one another while the group has a full one due (up to DRAIN_BUDGET_MS): the next is read and
      // sent while the records of the last are written (the records are what takes longest), never with a message
      // whose record is still on its way.
      const recording: Promise<unknown>[] = [];
      let ownRecord: Promise<unknown> | null = null;
      const inFlight = new Set<string>();
      const deadline = Date.now() + DRAIN_BUDGET_MS;
      try {
        let accessToken: string;
        try {
          accessToken = await deps.connections.accessToken(conn);
        } catch (err) {
          if (err instanceof ProviderError && err.kind === "unauthorized") throw new DeferError(reauthWaitMs);
          throw err;
        }
        const client = connector.client({ baseUrl: baseUrlOf(connector.manifest, config.PROVIDER_ENV), accessToken, env: config.PROVIDER_ENV });
        for (let found = first; found.length; ) {
          // A member whose last attempt waits in the spool for its record was sent: its own job writes that first.
          const kept = await ctx.keptAmong(found.filter((m) => m.id !== message.id).map((m) => m.id));
          const rows = kept.size ? found.filter((m) => !kept.has(m.id)) : found;
          if (!rows.length) break;
          const ids = rows.map((m) => m.id);
          await redis.multi().sadd(membersKey, ...ids).pexpire(membersKey, BATCH_LOCK_TTL_MS).pexpire(lockKey, BATCH_LOCK_TTL_MS).exec();
          const members = membersOf(rows);
          const started = Date.now();
          const results = await sendBatch(client, connector, conn.id, p, members);
          const ms = Date.now() - started;
          const outcomeOf = (m: Member) => {
            const r = results.get(m.id)!;
            return r.ok
              ? { ok: true as const, result: { pixel_id: p.pixel_id, batch_leader: message.id, batch_size: members.length }, responseStatus: r.status ?? null, durationMs: ms }
              : { ok: false as const, error: r.error, durationMs: ms };
          };
          for (const id of ids) inFlight.add(id);
          recording.push(Promise.all(members.map((m) => {
            const attempt = m.id === message.id ? ctx.attempt : m.attempts + 1;
            const saved = ctx.settle(m, attempt, outcomeOf(m));
            if (m.id === message.id) { ownRecord = saved; return saved.catch(() => undefined); } // its failure fails the job
            return saved.catch((err) => logger.warn({ message_id: m.id, err: String(err) }, "batch member's attempt not recorded; the outbox sweeper re-queues it"));
          })).finally(() => { for (const id of ids) inFlight.delete(id); }));
          if (found.length < limits.maxBatchSize || Date.now() > deadline) break;
          found = (await findOutboxBatch(db, group, null, limits.maxBatchSize, [...inFlight, ...kept]))!;
        }
      } finally {
        // Every member's attempt is recorded before the lock is released: a message recorded after it could be taken
        // into the next batch and sent twice.
        await Promise.all(recording);
        await unlock(lockKey, membersKey, owner);
      }
      if (ownRecord) await ownRecord; // a failed record of its own attempt fails the job: it runs again, finds it unrecorded
      throw new HandedOffError("recorded with its batch");
    },
  };

  /**
   * One request for a batch (events that aged past the provider's window are refused here instead); when the provider
   * refuses some events of it by name, once more with the others. Refused credentials: the connection needs
   * re-authorization and the messages wait (DeferError).
   */
  async function sendBatch(client: ReturnType<ConversionsConnector["client"]>, connector: ConversionsConnector, connectionId: string, p: ConversionMessagePayload, all: Member[]) {
    const { limits } = connector;
    const results = new Map<string, ConversionResult>();
    const tooOld = (m: Member) => m.payload.event.data.event_at < Date.now() - limits.maxEventAgeMs;
    for (const m of all) if (tooOld(m)) results.set(m.id, { ok: false, error: new ProviderError(connector.manifest.id, "bad_request", "event_at is now more than 7 days old: the provider refuses it") });
    for (let round = 0; round < 2; round++) {
      const batch = all.filter((m) => !results.has(m.id) || (round > 0 && isBatchRefused(results.get(m.id)!)));
      if (!batch.length) break;
      let out: ConversionResult[];
      try {
        out = await client.sendBatch(p.pixel_id, batch.map((m) => m.payload.event), { testId: p.test_id ?? undefined });
      } catch (err) {
        if (err instanceof ProviderError && err.kind === "unauthorized") {
          await deps.connections.markNeedsReauth(connectionId, err.message).catch((e) => logger.warn({ err: String(e) }, "needs_reauth not recorded"));
          throw new DeferError(reauthWaitMs); // the messages wait for re-authorization
        }
        const error = err instanceof ProviderError ? err : new ProviderError(connector.manifest.id, "unavailable", String(err));
        for (const m of batch) results.set(m.id, { ok: false, error });
        break;
      }
      batch.forEach((m, i) => results.set(m.id, out[i]));
      if (!batch.some((m) => isBatchRefused(results.get(m.id)!))) break;
    }
    return results;
  }
}

const isBatchRefused = (r: ConversionResult) => !r.ok && r.error.detail.providerCode === "batch_refused";

export const conversionEvents = outboxProcessor(QUEUES.conversionEvents, conversionEventHandler);
