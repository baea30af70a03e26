import type { Db } from "./client.ts";
import { newId } from "./ids.ts";

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
  /** 410 Gone: disable the subscription now. */
  disableReason?: string;
}

export interface DisabledSubscription { id: string; account_id: string; disabled_reason: string }

// One statement (atomic on its own, one round trip) over column arrays: insert the execution rows, move the
// deliveries to their new state, keep each subscription's failing_since (cleared by any success in the batch, set
// by failures), and disable subscriptions that answered 410 or have failed for longer than allowed.
// Each subscription row is changed by at most one of the sub-statements (Postgres applies only one change per row
// per statement), hence the mutually exclusive conditions.
const RECORD_SQL = `
WITH v AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::text[], $7::text[], $8::text[], $9::json[],
                       $10::int[], $11::int[], $12::text[], $13::bool[], $14::int[], $15::text[], $16::text[], $17::timestamptz[],
                       $18::text[], $19::timestamptz[], $20::text[])
    AS v(id, account_id, subscription_id, delivery_id, attempt, trigger, outcome, request_url, request_headers,
         request_body_bytes, response_status, response_body, response_body_truncated, duration_ms, error_class, error_message, next_retry_at,
         delivery_status, next_attempt_at, disable_reason)
), ins AS (
  INSERT INTO webhook_executions (id, account_id, subscription_id, delivery_id, attempt, trigger, outcome, request_url, request_headers,
                                  request_body_bytes, response_status, response_body, response_body_truncated, duration_ms, error_class,
                                  error_message, next_retry_at, created_at)
  SELECT id, account_id, subscription_id, delivery_id, attempt, trigger, outcome, request_url, request_headers, request_body_bytes,
         response_status, response_body, response_body_truncated, duration_ms, error_class, error_message, next_retry_at, clock_timestamp()
    FROM v
), upd AS (
  UPDATE webhook_deliveries d
     SET status = v.delivery_status, attempts = v.attempt, next_attempt_at = v.next_attempt_at, last_error = v.error_message,
         completed_at = CASE WHEN v.delivery_status = 'pending' THEN NULL ELSE now() END
    FROM v WHERE d.id = v.delivery_id AND d.attempts <= v.attempt -- batches may commit out of order: never step back
), subs AS (
  SELECT subscription_id, bool_or(outcome = 'succeeded') AS any_ok, max(disable_reason) AS gone FROM v GROUP BY subscription_id
), cleared AS (
  UPDATE webhook_subscriptions s SET failing_since = NULL
    FROM subs WHERE s.id = subs.subscription_id AND subs.any_ok AND subs.gone IS NULL AND s.failing_since IS NOT NULL
), started AS (
  UPDATE webhook_subscriptions s SET failing_since = now()
    FROM subs WHERE s.id = subs.subscription_id AND NOT subs.any_ok AND subs.gone IS NULL AND s.failing_since IS NULL
)
UPDATE webhook_subscriptions s
   SET status = 'disabled', updated_at = now(),
       disabled_reason = coalesce(subs.gone, 'failing continuously since ' || to_char(s.failing_since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
  FROM subs
 WHERE s.id = subs.subscription_id AND s.status = 'active'
   AND (subs.gone IS NOT NULL OR (NOT subs.any_ok AND s.failing_since < now() - $21 * interval '1 second'))
RETURNING s.id, s.account_id, s.disabled_reason`;

/** Writes a batch of attempts; returns the subscriptions it disabled (their accounts are told through an event). */
export async function recordAttempts(db: Db, records: AttemptRecord[], disableAfterSeconds: number): Promise<DisabledSubscription[]> {
  const col = <T>(f: (r: AttemptRecord) => T) => records.map(f);
  const iso = (d: Date | null) => (d ? d.toISOString() : null);
  const { rows: disabled } = await db.$pool.query<DisabledSubscription>(RECORD_SQL, [
    col((r) => r.execution.id), col((r) => r.execution.accountId), col((r) => r.execution.subscriptionId), col((r) => r.execution.deliveryId),
    col((r) => r.execution.attempt), col((r) => r.execution.trigger), col((r) => r.execution.outcome), col((r) => r.execution.requestUrl),
    col((r) => JSON.stringify(r.execution.requestHeaders)), col((r) => r.execution.requestBodyBytes), col((r) => r.execution.responseStatus),
    col((r) => r.execution.responseBody), col((r) => r.execution.responseBodyTruncated), col((r) => r.execution.durationMs),
    col((r) => r.execution.errorClass), col((r) => r.execution.errorMessage), col((r) => iso(r.execution.nextRetryAt)),
    col((r) => r.delivery.status), col((r) => iso(r.delivery.nextAttemptAt)), col((r) => r.disableReason ?? null),
    disableAfterSeconds,
  ]);
  if (disabled.length) {
    await db.accountEvent.createMany({
      data: disabled.map((s) => ({ id: newId("evt"), accountId: s.account_id, type: "webhook.disabled", data: { webhook_id: s.id, reason: s.disabled_reason } })),
    });
  }
  return disabled;
}
