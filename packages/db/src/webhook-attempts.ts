import type { Db } from "./client.ts";
import { newId, timeOfId } from "./ids.ts";

/** Everything one delivery attempt changes, written in batches (see packages/delivery/src/batch-writer.ts). */
export interface AttemptRecord {
  execution: {
    id: string;
    accountId: string;
    subscriptionId: string;
    deliveryId: string;
    attempt: number;
    trigger: string;
    outcome: "succeeded" | "retrying" | "failed";
    requestUrl: string;
    requestHeaders: Record<string, string>;
    requestBodyBytes: number;
    responseStatus: number | null;
    responseBody: string | null;
    responseBodyTruncated: boolean;
    durationMs: number;
    errorClass: string | null;
    errorMessage: string | null;
    nextRetryAt: Date | null;
  };
  /** The delivery's new state. */
  delivery: { status: "pending" | "succeeded" | "failed"; attempts: number; nextAttemptAt: Date; lastError: string | null };
  /** 410 Gone: disable the subscription now, if it still has the URL that answered (execution.requestUrl). */
  disableReason?: string;
}

export interface DisabledSubscription { id: string; account_id: string; disabled_reason: string }

// Why two statements, and why each is safe to run concurrently from any number of writers:
//
// 1. ATTEMPTS_SQL, the hot one: insert the execution rows and move the deliveries to their new state. It touches
//    only rows no other batch touches (new execution rows; a delivery is in one batch at a time, because its next
//    attempt is queued only after this one's record committed), so concurrent batches never wait for each other.
//    It used to also keep each subscription's failing_since: concurrent batches then updated overlapping sets of
//    subscription rows, each in its own order, and deadlocked (hundreds per run when many endpoints failed).
// 2. SUBSCRIPTIONS_SQL: one row per subscription of the batch, and only the rows whose state really changes
//    (failing_since set or cleared, disabled) are locked, all of them first and in id order (ORDER BY id FOR NO
//    KEY UPDATE, then the UPDATE of exactly those rows). Every writer takes subscription locks in the same order and
//    holds no other lock meanwhile, so no cycle, hence no deadlock, can form. NO KEY UPDATE does not conflict with
//    the KEY SHARE lock that inserting a delivery takes on its subscription, so fan-out never waits for it.
//    It is skipped when it would change nothing: each subscription had a success (and no 410) and ATTEMPTS_SQL
//    (reading, locking nothing) found none of them marked failing. A failure committed by another writer after that read is
//    then ordered after this batch, as it would be had it committed a moment later: the outcome is one the two
//    statements could give too.
//
// Both are idempotent, so a batch whose commit was not confirmed (a dropped connection) can simply be written again:
// execution ids are fixed before the first try (ON CONFLICT DO NOTHING), a delivery never steps back
// (attempts <= attempt), and a subscription already in its new state is not selected again. The webhook.disabled
// account event is written by the same statement as the disable, so it exists exactly once.
const ATTEMPTS_SQL = `
WITH v AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::text[], $7::text[], $8::text[], $9::json[],
                       $10::int[], $11::int[], $12::text[], $13::bool[], $14::int[], $15::text[], $16::text[], $17::timestamptz[],
                       $18::text[], $19::timestamptz[], $21::timestamptz[])
    AS v(id, account_id, subscription_id, delivery_id, attempt, trigger, outcome, request_url, request_headers,
         request_body_bytes, response_status, response_body, response_body_truncated, duration_ms, error_class, error_message, next_retry_at,
         delivery_status, next_attempt_at, created_at)
), ins AS (
  INSERT INTO webhook_executions (id, account_id, subscription_id, delivery_id, attempt, trigger, outcome, request_url, request_headers,
                                  request_body_bytes, response_status, response_body, response_body_truncated, duration_ms, error_class,
                                  error_message, next_retry_at, created_at)
  SELECT id, account_id, subscription_id, delivery_id, attempt, trigger, outcome, request_url, request_headers, request_body_bytes,
         response_status, response_body, response_body_truncated, duration_ms, error_class, error_message, next_retry_at, created_at AT TIME ZONE 'UTC'
    FROM v
  ON CONFLICT (id, created_at) DO NOTHING -- a batch written again after an unconfirmed commit (created_at: the id's time)
), upd AS (
  UPDATE webhook_deliveries d
     SET status = v.delivery_status, attempts = v.attempt, next_attempt_at = v.next_attempt_at, last_error = v.error_message,
         completed_at = CASE WHEN v.delivery_status = 'pending' THEN NULL ELSE now() END
    FROM v WHERE d.id = v.delivery_id AND d.attempts <= v.attempt -- batches may commit out of order: never step back
)
SELECT count(*)::int AS failing FROM webhook_subscriptions WHERE id = ANY($20::text[]) AND failing_since IS NOT NULL`;

const DISABLE_IF = `(l.gone IS NOT NULL OR (NOT l.any_ok AND s.failing_since < now() - $5 * interval '1 second'))`;
// A 410 counts only from the URL the subscription still has: a late answer from the URL it had before an edit (a
// request in flight while the owner moved the endpoint) is an ordinary failure, never a reason to disable the new one.
// In the locking statement itself, so the check is made again on the row's latest version once its lock is granted.
const GONE = `CASE WHEN s.url = v.gone_url THEN v.gone END`;
const SUBSCRIPTIONS_SQL = `
WITH v AS (
  SELECT * FROM unnest($1::text[], $2::bool[], $3::text[], $4::text[], $6::text[]) AS v(id, any_ok, gone, event_id, gone_url)
), l AS (
  SELECT s.id, s.status AS old_status, v.any_ok, ${GONE} AS gone, v.event_id
    FROM webhook_subscriptions s JOIN v ON v.id = s.id
   WHERE (${GONE} IS NOT NULL AND s.status = 'active')
      OR (${GONE} IS NULL AND v.any_ok AND s.failing_since IS NOT NULL)
      OR (${GONE} IS NULL AND NOT v.any_ok AND (s.failing_since IS NULL OR (s.status = 'active' AND s.failing_since < now() - $5 * interval '1 second')))
   ORDER BY s.id
   FOR NO KEY UPDATE OF s
), upd AS (
  UPDATE webhook_subscriptions s
     SET failing_since = CASE WHEN l.gone IS NOT NULL THEN s.failing_since WHEN l.any_ok THEN NULL ELSE coalesce(s.failing_since, now()) END,
         status = CASE WHEN s.status = 'active' AND ${DISABLE_IF} THEN 'disabled' ELSE s.status END,
         disabled_reason = CASE WHEN s.status = 'active' AND ${DISABLE_IF}
           THEN coalesce(l.gone, 'failing continuously since ' || to_char(s.failing_since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
           ELSE s.disabled_reason END,
         updated_at = CASE WHEN s.status = 'active' AND ${DISABLE_IF} THEN now() ELSE s.updated_at END
    FROM l WHERE s.id = l.id
  RETURNING s.id, s.account_id, s.status, s.disabled_reason, l.old_status, l.event_id
), ev AS (
  INSERT INTO account_events (id, account_id, type, data, created_at)
  SELECT event_id, account_id, 'webhook.disabled', jsonb_build_object('webhook_id', id, 'reason', disabled_reason), now() AT TIME ZONE 'UTC'
    FROM upd WHERE status = 'disabled' AND old_status = 'active'
  ON CONFLICT (id) DO NOTHING
)
SELECT id, account_id, disabled_reason FROM upd WHERE status = 'disabled' AND old_status = 'active'`;

/**
 * Writes a batch of attempts (executions and delivery states), then the state of their subscriptions (failing_since,
 * disabled on a 410 or after failing for `disableAfterSeconds`, with a webhook.disabled account event). Returns the
 * subscriptions it disabled. Safe to call again with the same records after an error (see above).
 */
export async function recordAttempts(db: Db, records: AttemptRecord[], disableAfterSeconds: number): Promise<DisabledSubscription[]> {
  if (!records.length) return [];
  // In delivery id order: a statement locks the rows it updates in the order its plan meets them (here the array's).
  const rs = [...records].sort((a, b) => (a.execution.deliveryId < b.execution.deliveryId ? -1 : a.execution.deliveryId > b.execution.deliveryId ? 1 : 0));
  const col = <T>(f: (r: AttemptRecord) => T) => rs.map(f);
  const iso = (d: Date | null) => (d ? d.toISOString() : null);
  const subs = new Map<string, { anyOk: boolean; gone: string | null; goneUrl: string | null }>();
  for (const r of rs) {
    const s = subs.get(r.execution.subscriptionId) ?? { anyOk: false, gone: null, goneUrl: null };
    s.anyOk ||= r.execution.outcome === "succeeded";
    if (r.disableReason && !s.gone) [s.gone, s.goneUrl] = [r.disableReason, r.execution.requestUrl];
    subs.set(r.execution.subscriptionId, s);
  }
  const ids = [...subs.keys()];
  const { rows: [{ failing }] } = await db.$pool.query<{ failing: number }>({ name: "tg_record_attempts", text: ATTEMPTS_SQL, values: [
    col((r) => r.execution.id), col((r) => r.execution.accountId), col((r) => r.execution.subscriptionId), col((r) => r.execution.deliveryId),
    col((r) => r.execution.attempt), col((r) => r.execution.trigger), col((r) => r.execution.outcome), col((r) => pgText(r.execution.requestUrl)),
    col((r) => JSON.stringify(r.execution.requestHeaders)), col((r) => r.execution.requestBodyBytes), col((r) => r.execution.responseStatus),
    col((r) => pgText(r.execution.responseBody)), col((r) => r.execution.responseBodyTruncated), col((r) => r.execution.durationMs),
    col((r) => r.execution.errorClass), col((r) => pgText(r.execution.errorMessage)), col((r) => iso(r.execution.nextRetryAt)),
    col((r) => r.delivery.status), col((r) => iso(r.delivery.nextAttemptAt)), ids, col((r) => timeOfId(r.execution.id).toISOString()),
  ] });
  if (failing === 0 && [...subs.values()].every((s) => s.anyOk && !s.gone)) return []; // SUBSCRIPTIONS_SQL would change nothing
  const { rows } = await db.$pool.query<DisabledSubscription>({ name: "tg_record_subscriptions", text: SUBSCRIPTIONS_SQL, values: [
    ids, ids.map((id) => subs.get(id)!.anyOk), ids.map((id) => subs.get(id)!.gone), ids.map(() => newId("evt")), disableAfterSeconds,
    ids.map((id) => subs.get(id)!.goneUrl),
  ] });
  return rows;
}

/** Text Postgres can store: it refuses NUL characters, which a receiver's response body may well contain. */
const pgText = (s: string | null) => (s === null ? null : s.includes("\u0000") ? s.replaceAll("\u0000", "\uFFFD") : s);

/**
 * Whether a failed statement may succeed if simply run again: a dropped or refused connection, a pool that could not
 * hand out a connection in time, a deadlock or serialization failure, a server shutting down or out of resources.
 * Not: errors in the statement or its data (SQLSTATE classes 22, 23, 42, ...), nor bugs in our own code.
 */
export function isTransientDbError(err: unknown): boolean {
  if (err instanceof TypeError || err instanceof RangeError || err instanceof SyntaxError || err instanceof ReferenceError) return false;
  const e = err as { code?: unknown; severity?: unknown } | null;
  // Errors from the server carry a severity and a SQLSTATE; anything else is about the connection (reset, terminated,
  // refused, timed out waiting for a pool client), not the statement.
  if (e && typeof e.severity === "string" && typeof e.code === "string")
    return /^(08|40|53|57|58)/.test(e.code) || e.code === "55P03" || e.code === "55006";
  return true;
}

/**
 * An attempt a worker began and never recorded (it stopped mid-request), as an execution of its own with outcome
 * `interrupted`: the receiver may have it. The delivery is left as it is (the same attempt is sent again). Written
 * once (the id is fixed when the send begins).
 */
export async function recordInterruptedAttempt(db: Db, e: Pick<AttemptRecord["execution"],
  "id" | "accountId" | "subscriptionId" | "deliveryId" | "attempt" | "trigger" | "requestUrl" | "requestBodyBytes" | "durationMs">): Promise<void> {
  await db.webhookExecution.createMany({
    data: [{
      ...e, outcome: "interrupted", requestHeaders: {}, responseStatus: null, responseBody: null, responseBodyTruncated: false, errorClass: "interrupted",
      errorMessage: "the worker stopped during the request, before its answer was recorded; the receiver may have received it; sent again",
      nextRetryAt: null, createdAt: timeOfId(e.id),
    }],
    skipDuplicates: true,
  });
}
