import type { Signal } from "@trendgate/contracts";
import type { Db, Tx } from "./client.ts";
import { newId } from "./ids.ts";

// One statement for one or more batches (of one or more accounts): store the signals (a signal already stored, same
// account/source/id, is skipped), make sure their topics exist, and add the NEW signals only into their topic's time
// bucket, so a re-sent batch never counts twice. A topic's id is derived from (account, normalised name, category),
// hence no lookup round trip. Rows arrive sorted by (account, source, id), topics and bucket rows are upserted in
// key order: concurrent statements take their locks in the same order, so merged batches cannot deadlock each other.
// `batch` numbers each row's batch so the caller learns how many of each batch were new.
const INGEST_SQL = `
WITH input AS (
  SELECT * FROM unnest($1::int[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::float8[], $9::float8[], $10::timestamptz[], $11::text[], $13::text[])
    AS v(batch, account_id, id, source, external_id, topic, category, count, sentiment, observed_at, link, text)
), ins AS (
  INSERT INTO signals (id, account_id, source, external_id, topic, category, count, sentiment, observed_at, link, text, created_at)
  SELECT id, account_id, source, external_id, topic, category, count, sentiment, observed_at, link, text, now() FROM input
  ON CONFLICT (account_id, source, external_id, observed_at) DO NOTHING
  RETURNING id, account_id, topic, category, count, sentiment, observed_at
), keyed AS (
  SELECT account_id, lower(topic) || '|' || category AS key, topic, category, count, sentiment, observed_at,
         'top_' || md5(account_id || ':' || lower(topic) || '|' || category) AS topic_id
    FROM ins
), topics_up AS (
  INSERT INTO topics (id, account_id, key, name, category, created_at, last_seen_at)
  SELECT DISTINCT ON (topic_id) topic_id, account_id, key, topic, category, now(), now() FROM keyed ORDER BY topic_id
  ON CONFLICT (account_id, key) DO UPDATE SET last_seen_at = now()
  RETURNING id
), buckets_up AS (
INSERT INTO topic_buckets (topic_id, bucket_start, count, sentiment_sum, sentiment_count)
SELECT k.topic_id, date_bin($12 * interval '1 second', k.observed_at, timestamptz '1970-01-01'), sum(k.count), coalesce(sum(k.sentiment), 0), count(k.sentiment)
  FROM keyed k JOIN topics_up t ON t.id = k.topic_id
 GROUP BY 1, 2 ORDER BY 1, 2
ON CONFLICT (topic_id, bucket_start) DO UPDATE SET
  count = topic_buckets.count + excluded.count,
  sentiment_sum = topic_buckets.sentiment_sum + excluded.sentiment_sum,
  sentiment_count = topic_buckets.sentiment_count + excluded.sentiment_count
RETURNING topic_id
)
SELECT i.batch, count(*)::int AS inserted FROM ins JOIN input i ON i.id = ins.id GROUP BY i.batch`;

/** One account's signals, as one unit of ingestion (a job's batch). */
export interface SignalBatch { accountId: string; signals: Signal[] }

/**
 * Stores several batches in one statement and adds the new signals to their topics' buckets; returns how many of
 * each batch were new (a signal repeated in a later batch of the same call counts for the first one only, as if
 * the batches had been stored one after the other). All or nothing: one value Postgres refuses fails every batch.
 */
export async function insertSignalBatches(db: Db, batches: SignalBatch[], bucketSeconds = 3600): Promise<number[]> {
  const rows: { batch: number; accountId: string; key: string; s: Signal }[] = [];
  const seen = new Set<string>();
  batches.forEach(({ accountId, signals }, batch) => {
    for (const s of signals) {
      const key = JSON.stringify([accountId, s.source, s.id]);
      if (seen.has(key)) continue;
      seen.add(key);
      rows.push({ batch, accountId, key, s });
    }
  });
  const counts = batches.map(() => 0);
  if (!rows.length) return counts;
  rows.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)); // the lock order, see INGEST_SQL
  const col = <T>(f: (r: (typeof rows)[number]) => T) => rows.map(f);
  const { rows: out } = await db.$pool.query<{ batch: number; inserted: number }>(INGEST_SQL, [
    col((r) => r.batch), col((r) => r.accountId), col(() => newId("sig")), col((r) => r.s.source), col((r) => r.s.id),
    col((r) => r.s.topic), col((r) => r.s.category), col((r) => r.s.count), col((r) => r.s.sentiment ?? null),
    col((r) => r.s.observed_at), col((r) => r.s.link ?? null), bucketSeconds, col((r) => r.s.text ?? null),
  ]);
  for (const r of out) counts[r.batch] = Number(r.inserted);
  return counts;
}

/**
 * Stores a batch of validated signals and adds the new ones to their topics' buckets; returns how many were new.
 * All or nothing: one value Postgres refuses fails the whole batch (see storeSignals for the tolerant version).
 */
export async function insertSignals(db: Db, accountId: string, signals: Signal[], bucketSeconds = 3600): Promise<number> {
  if (!signals.length) return 0;
  return (await insertSignalBatches(db, [{ accountId, signals }], bucketSeconds))[0];
}

// ---- Tolerant ingestion: a poison item never takes its batch down ----

/** Why one signal of a batch was not stored: `code` is stable, `reason` is for people (never quotes the value). */
export interface SignalRejection {
  /** Position in the batch as the caller numbered it (the request's index for gateway batches). */
  index: number;
  id: string;
  source: string;
  code: string;
  reason: string;
}

export interface StoreSignalsResult {
  /** Newly stored signals (a signal seen before is not counted, and never reaches the buckets twice). */
  inserted: number;
  /** Signals Postgres refused, each isolated by bisection. */
  rejections: SignalRejection[];
  /** Statements run (1 for a clean batch; about 2 x log2(batch) more per poison item). */
  statements: number;
}

const SUSPECT = /[\u0000\uD800-\uDFFF]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const YEAR = /^(\d{4})-/;

/**
 * The first reason Postgres could not store this (schema-valid) signal as sent, or null. Mirrors what the column
 * types refuse, so the gateway can reject such an item at once and the worker skips it without a failed statement:
 * NUL characters (text refuses them), lone UTF-16 surrogates (not representable in UTF-8: the driver would silently
 * store U+FFFD instead, changing the signal's identity), and year 0000 (PostgreSQL has no year zero).
 */
export function signalStorageProblem(s: Signal): { path: string; code: string; message: string } | null {
  for (const [path, v] of Object.entries(s)) {
    if (typeof v !== "string" || !SUSPECT.test(v)) continue; // the common case: one cheap scan per field
    if (v.includes("\u0000")) return { path, code: "nul_character", message: "contains a NUL character, which cannot be stored" };
    if (LONE_SURROGATE.test(v)) return { path, code: "invalid_unicode", message: "contains an unpaired UTF-16 surrogate (not valid Unicode)" };
  }
  const year = YEAR.exec(s.observed_at)?.[1];
  if (year !== undefined && Number(year) < 1) return { path: "observed_at", code: "date_out_of_range", message: "year must be 0001 or later" };
  if (!Number.isFinite(Date.parse(s.observed_at))) return { path: "observed_at", code: "date_out_of_range", message: "not a valid date" };
  return null;
}

// SQLSTATE class 22 (data exception) and 23 (integrity constraint violation) mean "this data", not "this moment":
// retrying the same rows cannot help, so the batch is split to find them. 23503 (foreign key) is the exception: the
// only foreign key is the account, so every row would fail the same way; it is thrown like any other error.
export function isSignalDataError(err: unknown): err is { code: string } {
  const code = (err as { code?: unknown })?.code;
  return typeof code === "string" && /^2[23][0-9A-Z]{3}$/.test(code) && code !== "23503";
}

const SQLSTATE_REASONS: Record<string, [code: string, reason: string]> = {
  "22021": ["invalid_text", "a text field holds a byte sequence the database cannot store (e.g. a NUL character)"],
  "22P05": ["invalid_text", "a text field holds a character the database cannot store"],
  "22008": ["date_out_of_range", "observed_at is outside the range the database can store"],
  "22007": ["invalid_date", "observed_at is not a date the database accepts"],
  "22003": ["number_out_of_range", "a number is outside the range the database can store"],
  "22001": ["value_too_long", "a value is longer than the database can store"],
};

/** A stable code and a human reason for a data error; never the database's message (it quotes the value). */
export function describeSignalDataError(err: { code: string }): { code: string; reason: string } {
  const known = SQLSTATE_REASONS[err.code];
  return known ? { code: known[0], reason: known[1] } : { code: "not_storable", reason: `the database refused the signal (SQLSTATE ${err.code})` };
}

/**
 * insertSignals for a batch that may hold a value Postgres refuses: the whole batch is tried in one statement; when
 * that fails with a data error it is split in halves, recursively, so every good signal is stored and each bad one
 * ends up alone and is returned as a rejection. Each statement stores its signals and their bucket increments
 * atomically, and only new signals reach the buckets, so a retried batch (after a crash half way) counts nothing
 * twice. Other errors (database unreachable, deadlock) are thrown: retry the batch.
 */
export async function storeSignals(
  db: Db, accountId: string, items: { index: number; signal: Signal }[], bucketSeconds = 3600,
): Promise<StoreSignalsResult> {
  const result: StoreSignalsResult = { inserted: 0, rejections: [], statements: 0 };
  const run = async (chunk: { index: number; signal: Signal }[]): Promise<void> => {
    if (!chunk.length) return;
    result.statements++;
    try {
      result.inserted += await insertSignals(db, accountId, chunk.map((c) => c.signal), bucketSeconds);
    } catch (err) {
      if (!isSignalDataError(err)) throw err;
      if (chunk.length === 1) {
        const { index, signal } = chunk[0];
        result.rejections.push({ index, id: signal.id, source: signal.source, ...describeSignalDataError(err) });
        return;
      }
      const mid = chunk.length >> 1;
      await run(chunk.slice(0, mid));
      await run(chunk.slice(mid));
    }
  };
  await run(items);
  result.rejections.sort((a, b) => a.index - b.index);
  return result;
}

/** How many signals the account stored from `source` since `since`. */
export const countSignalsSince = (db: Db, accountId: string, source: string, since: Date) =>
  db.signal.count({ where: { accountId, source, createdAt: { gte: since } } });

/** Per topic name: the distinct sources of its signals observed since `since` (the (account, topic, observed_at) index). */
export async function sourcesByTopic(db: Db, accountId: string, topics: string[], since: Date): Promise<Map<string, string[]>> {
  if (topics.length === 0) return new Map();
  const { rows } = await db.$pool.query<{ topic: string; sources: string[] }>(
    `SELECT topic, array_agg(DISTINCT source ORDER BY source) AS sources FROM signals
      WHERE account_id = $1 AND topic = ANY($2::text[]) AND observed_at >= ($3::timestamptz AT TIME ZONE 'UTC')
      GROUP BY topic`,
    [accountId, topics, since.toISOString()],
  );
  return new Map(rows.map((r) => [r.topic, r.sources]));
}

/**
 * A topic's signals observed in [from, to), newest first, at most `limit` (what a trend's drivers are read from). By
 * the topic's name as spelled (the (account, topic, observed_at) index): a detection pass reads this for each new
 * trend, so it must not scan the account's signals; other spellings of the name are left out.
 */
export async function topicSignalsBetween(db: Db, t: { accountId: string; name: string; category: string }, from: Date, to: Date, limit: number) {
  const { rows } = await db.$pool.query<{ source: string; count: number; sentiment: number | null; text: string | null; link: string | null; observed_at: Date }>({
    name: "tg_topic_signals_between",
    text: `SELECT source, count, sentiment, text, link, observed_at FROM signals
            WHERE account_id = $1 AND topic = $2 AND category = $3
              AND observed_at >= ($4::timestamptz AT TIME ZONE 'UTC') AND observed_at < ($5::timestamptz AT TIME ZONE 'UTC')
            ORDER BY observed_at DESC LIMIT $6`,
    values: [t.accountId, t.name, t.category, from.toISOString(), to.toISOString(), limit],
  });
  return rows.map((r) => ({ source: r.source, count: Number(r.count), sentiment: r.sentiment, text: r.text, link: r.link, observedAt: r.observed_at }));
}

/** The sources a topic drew signals from since `since` (operator routing rules match on them). */
export async function topicSourcesSince(db: Db | Tx, t: { accountId: string; name: string; category: string }, since: Date): Promise<string[]> {
  const rows = await db.$queryRawUnsafe<{ source: string }[]>(
    `SELECT DISTINCT source FROM signals WHERE account_id = $1 AND topic = $2 AND category = $3 AND observed_at >= ($4::timestamptz AT TIME ZONE 'UTC')`,
    t.accountId, t.name, t.category, since.toISOString());
  return rows.map((r) => r.source);
}
