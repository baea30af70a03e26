import { UnrecoverableError, type Job } from "bullmq";
import { clipText, QUEUES, Signal } from "@trendgate/contracts";
import {
  recordAccountEvents, signalStorageProblem, type AccountEventInput, type SignalRejection,
} from "@trendgate/db";
import { SignalBatcher } from "./signal-batcher.ts";
import type { ProcessorFactory, WorkerDeps } from "./types.ts";

/** At most this many `signals.rejected` events per batch (each says how many the batch rejected in all). */
export const REJECTION_EVENTS_MAX = 100;
const ID_MAX = 200; // the longest valid signal id: a valid id is quoted whole
const SOURCE_MAX = 50;
const REASON_MAX = 300;
// Jobs one process runs at once (at least this, or WORKER_CONCURRENCY when higher): their batches are merged into
// statements of up to INGEST_MERGE_SIGNALS signals, at most INGEST_STATEMENTS at a time (measured: bench/trends.ts).
export const INGEST_CONCURRENCY = 200;
export const INGEST_MERGE_SIGNALS = 5000;
export const INGEST_STATEMENTS = 2;
// "Tell once" lookups go back this far before the job was created (clock skew between hosts).
const ONCE_SLACK_MS = 3_600_000;

interface Envelope { accountId: string; batchId: string; signals: unknown[]; indexes: number[] | null }

/**
 * Stores an ingested batch and adds it to its topics' time buckets. Re-running a batch (retry, stalled job) counts
 * nothing twice: signals are unique, and only newly stored ones reach the buckets. The batches of the jobs a process
 * runs at once are stored together, one statement for many jobs (SignalBatcher): a statement per job cost a round
 * trip and a commit per batch, and concurrent ones updated the same hot topic and bucket rows (bench/trends.ts: ~10x).
 *
 * A poison item never takes its batch down: each item is validated again (defence in depth: the gateway's schema
 * may be older or newer than this worker's, and jobs can come from elsewhere), items Postgres could not store are
 * set aside before the statement, and if the statement still fails with a data error the batch is stored alone and
 * bisected (storeSignals), so the good signals are stored and every bad one becomes a `signals.rejected` account event
 * (GET /api/events). Transient errors are thrown and BullMQ retries the job; when its last attempt fails, or the
 * job cannot be processed at all, a `signals.ingest_failed` event tells the account.
 */
export const signalsIngest: ProcessorFactory = {
  queue: QUEUES.signals,
  create: (deps) => {
    const batcher = new SignalBatcher(deps.db, {
      maxSignals: INGEST_MERGE_SIGNALS, maxInFlight: INGEST_STATEMENTS, bucketSeconds: deps.config.DETECTION_BUCKET_SECONDS,
    });
    return {
      concurrency: Math.max(INGEST_CONCURRENCY, deps.config.WORKER_CONCURRENCY),
      async process(job) {
        const env = parseEnvelope(job.data);
        if (typeof env === "string") {
          await tellIngestFailed(deps, job, "invalid_payload", "the job does not hold a signal batch; nothing was stored");
          throw new UnrecoverableError(`invalid ${QUEUES.signals} payload: ${env}`);
        }
        try {
          return await ingest(deps, batcher, job, env);
        } catch (err) {
          const accountGone = (err as { code?: unknown })?.code === "23503";
          const final = accountGone || isFinalAttempt(job, err);
          if (final && !accountGone) {
            await tellIngestFailed(deps, job, "storage_failed", `the batch could not be stored after ${job.attemptsMade + 1} attempt(s); signals stored before the failure are kept`, env.signals.length);
          }
          deps.logger.warn({ queue: QUEUES.signals, job_id: job.id, batch_id: env.batchId, attempt: job.attemptsMade + 1, final, err: (err as Error)?.message }, "signal batch not stored");
          if (accountGone) throw new UnrecoverableError("the account no longer exists");
          throw err;
        }
      },
    };
  },
};

async function ingest({ db }: WorkerDeps, batcher: SignalBatcher, job: Job, env: Envelope) {
  const rejections: SignalRejection[] = [];
  const items: { index: number; signal: Signal }[] = [];
  const seen = new Set<string>();
  let repeated = 0;
  env.signals.forEach((raw, i) => {
    const index = env.indexes ? env.indexes[i] : i;
    const parsed = Signal.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      rejections.push({ index, id: field(raw, "id"), source: field(raw, "source"), code: "invalid", reason: `${issue.path.join(".") || "(item)"}: ${issue.message}` });
      return;
    }
    const s = parsed.data;
    const problem = signalStorageProblem(s);
    if (problem) {
      rejections.push({ index, id: s.id, source: s.source, code: problem.code, reason: `${problem.path}: ${problem.message}` });
      return;
    }
    const key = JSON.stringify([s.source, s.id]); // the same (source, id) twice in a batch is one signal
    if (seen.has(key)) { repeated++; return; }
    seen.add(key);
    items.push({ index, signal: s });
  });

  // Stored together with the batches of the other jobs running now (one statement); see SignalBatcher.
  const stored = await batcher.store(env.accountId, items);
  rejections.push(...stored.rejections);
  rejections.sort((a, b) => a.index - b.index);
  if (rejections.length) {
    const since = new Date(job.timestamp - ONCE_SLACK_MS);
    await recordAccountEvents(db, rejections.slice(0, REJECTION_EVENTS_MAX).map((r): AccountEventInput => ({
      accountId: env.accountId,
      type: "signals.rejected",
      data: {
        batch_id: env.batchId, index: r.index, id: clipText(r.id, ID_MAX), source: clipText(r.source, SOURCE_MAX),
        code: r.code, reason: clipText(r.reason, REASON_MAX), batch_rejected: rejections.length,
      },
      once: { match: { batch_id: env.batchId, index: r.index }, since },
    })));
  }
  return {
    inserted: stored.inserted,
    duplicates: env.signals.length - stored.inserted - rejections.length,
    repeated_in_batch: repeated,
    rejected: rejections.length,
    statements: stored.statements,
  };
}

/** The job's envelope, or why it is not one. Items are checked one by one later, so one bad item is not fatal. */
function parseEnvelope(data: unknown): Envelope | string {
  const d = (data ?? {}) as Record<string, unknown>;
  if (typeof d.account_id !== "string" || !d.account_id) return "account_id must be a non-empty string";
  if (typeof d.batch_id !== "string" || !d.batch_id) return "batch_id must be a non-empty string";
  if (!Array.isArray(d.signals)) return "signals must be an array";
  // Optional: each signal's index in the request (the gateway drops rejected and repeated items before queueing),
  // so events point at the index the caller knows. Ignored unless it fits.
  const ix = d.indexes;
  const indexes = Array.isArray(ix) && ix.length === d.signals.length && ix.every((n) => Number.isSafeInteger(n) && n >= 0) ? (ix as number[]) : null;
  return { accountId: d.account_id, batchId: d.batch_id, signals: d.signals, indexes };
}

const field = (raw: unknown, k: string) => {
  const v = raw && typeof raw === "object" ? (raw as Record<string, unknown>)[k] : undefined;
  return typeof v === "string" ? v : "";
};

/** Whether BullMQ will not run this job again after this error (its own rule, Job.shouldRetryJob). */
export function isFinalAttempt(job: Pick<Job, "attemptsMade" | "opts">, err: unknown): boolean {
  if (err instanceof UnrecoverableError || (err as Error)?.name === "UnrecoverableError") return true;
  return job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
}

/** Records `signals.ingest_failed` (once per batch) when the account can be told; never throws. */
async function tellIngestFailed({ db, logger }: WorkerDeps, job: Job, code: string, reason: string, signals?: number) {
  const d = (job.data ?? {}) as Record<string, unknown>;
  const accountId = typeof d.account_id === "string" ? d.account_id : null;
  const batchId = typeof d.batch_id === "string" && d.batch_id ? d.batch_id : String(job.id ?? "");
  if (!accountId) {
    logger.error({ queue: QUEUES.signals, job_id: job.id }, "signal batch failed and names no account to tell");
    return;
  }
  try {
    await recordAccountEvents(db, [{
      accountId,
      type: "signals.ingest_failed",
      data: {
        batch_id: clipText(batchId, ID_MAX), code, reason,
        signals: signals ?? (Array.isArray(d.signals) ? d.signals.length : null), attempts: job.attemptsMade + 1,
      },
      once: { match: { batch_id: clipText(batchId, ID_MAX) }, since: new Date(job.timestamp - ONCE_SLACK_MS) },
    }]);
  } catch (err) {
    logger.error({ queue: QUEUES.signals, job_id: job.id, account_id: accountId, err: (err as Error)?.message }, "could not record signals.ingest_failed");
  }
}
