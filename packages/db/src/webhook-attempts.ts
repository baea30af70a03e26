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

/**
 * Writes a batch of attempts in one transaction: the execution rows, the deliveries' new states, the subscriptions'
 * failing_since bookkeeping, and auto-disabling of subscriptions that fail for too long or answered 410.
 * Returns the subscriptions it disabled (the caller tells their accounts).
 */
export async function recordAttempts(db: Db, records: AttemptRecord[], disableAfterSeconds: number): Promise<DisabledSubscription[]> {
  const ok = records.filter((r) => r.execution.outcome === "succeeded").map((r) => r.execution.subscriptionId);
  const failed = records.filter((r) => r.execution.outcome !== "succeeded").map((r) => r.execution.subscriptionId);
  const gone = records.filter((r) => r.disableReason).map((r) => [r.execution.subscriptionId, r.disableReason!]);
  const d = records.map((r) => r.delivery);
  const results = await db.$transaction([
    db.webhookExecution.createMany({ data: records.map((r) => r.execution) }),
    db.$executeRawUnsafe(
      `UPDATE webhook_deliveries AS d SET status = v.status, attempts = v.attempts, next_attempt_at = v.next_at, last_error = v.err,
              completed_at = CASE WHEN v.status = 'pending' THEN NULL ELSE now() END
         FROM unnest($1::text[], $2::text[], $3::int[], $4::timestamptz[], $5::text[]) AS v(id, status, attempts, next_at, err)
        WHERE d.id = v.id`,
      records.map((r) => r.execution.deliveryId), d.map((x) => x.status), d.map((x) => x.attempts),
      d.map((x) => x.nextAttemptAt.toISOString()), d.map((x) => x.lastError),
    ),
    db.$executeRawUnsafe(`UPDATE webhook_subscriptions SET failing_since = NULL WHERE id = ANY($1::text[]) AND failing_since IS NOT NULL`, ok),
    db.$executeRawUnsafe(`UPDATE webhook_subscriptions SET failing_since = now() WHERE id = ANY($1::text[]) AND failing_since IS NULL`, failed),
    db.$queryRawUnsafe<DisabledSubscription[]>(
      `UPDATE webhook_subscriptions AS s SET status = 'disabled', disabled_reason = v.reason, updated_at = now()
         FROM (SELECT * FROM unnest($1::text[], $2::text[]) AS g(id, reason)
               UNION ALL
               SELECT id, 'failing continuously since ' || to_char(failing_since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
                 FROM webhook_subscriptions
                WHERE id = ANY($3::text[]) AND failing_since < now() - $4 * interval '1 second') AS v(id, reason)
        WHERE s.id = v.id AND s.status = 'active'
      RETURNING s.id, s.account_id, s.disabled_reason`,
      gone.map((g) => g[0]), gone.map((g) => g[1]), failed, disableAfterSeconds,
    ),
  ]);
  const disabled = results[4] as DisabledSubscription[];
  if (disabled.length) {
    await db.accountEvent.createMany({
      data: disabled.map((s) => ({ id: newId("evt"), accountId: s.account_id, type: "webhook.disabled", data: { webhook_id: s.id, reason: s.disabled_reason } })),
    });
  }
  return disabled;
}
