import type { Db } from "./client.ts";
import type { OutboxRow } from "./outbox.ts";

// Confirmation of outbox messages a peer took without proof that it acted (a workflow's 2xx): the send's result says
// `confirmation: "pending"`; a later pass reads the peer's own record and settles it `confirmed`, sends it again
// (`resent`: back to pending for one more attempt, same payload and event id) or gives up (`unconfirmed`). The
// message's status stays `succeeded` throughout except while a resend waits for its attempt. A partial index
// (outbox_messages_unconfirmed_idx) keeps the pass's read off the rest of the table.

/** What the confirmation pass reads of a message whose confirmation is pending. */
export interface UnconfirmedMessage {
  id: string;
  connectionId: string | null;
  eventId: string | null;
  /** The workflow (or other target) the send went to, from its result. */
  target: string | null;
  /** Times it was already sent again for want of a confirmation. */
  resends: number;
  createdAt: Date;
  completedAt: Date;
}

/** Messages of `queue` taken at least this long ago whose confirmation is pending, the oldest first. */
export async function unconfirmedOutboxMessages(db: Db, q: { queue: string; completedBefore: Date; limit: number }): Promise<UnconfirmedMessage[]> {
  const { rows } = await db.$pool.query<UnconfirmedMessage>(
    `SELECT id, connection_id AS "connectionId", payload->>'event_id' AS "eventId", result->>'workflow_id' AS "target",
            coalesce((result->>'resends')::int, 0) AS resends, created_at AT TIME ZONE 'UTC' AS "createdAt",
            completed_at AT TIME ZONE 'UTC' AS "completedAt"
       FROM outbox_messages
      WHERE result->>'confirmation' = 'pending' AND queue = $1 AND status = 'succeeded' AND completed_at <= $2::timestamptz AT TIME ZONE 'UTC'
      ORDER BY completed_at LIMIT $3`,
    [q.queue, q.completedBefore, q.limit]);
  return rows;
}

/**
 * Settles pending confirmations: `confirmed` (with what the peer calls its run) or `unconfirmed` (with why). Only
 * messages still pending change (a resend or another pass may have moved them). Returns how many changed.
 */
export async function settleOutboxConfirmations(db: Db, settled: { id: string; confirmation: "confirmed" | "unconfirmed"; detail: Record<string, unknown> }[]): Promise<number> {
  if (!settled.length) return 0;
  const patches = settled.map((s) => ({ id: s.id, patch: { ...s.detail, confirmation: s.confirmation } }));
  const r = await db.$pool.query(
    `UPDATE outbox_messages o SET result = o.result || v.patch
       FROM jsonb_to_recordset($1::jsonb) AS v(id text, patch jsonb)
      WHERE o.id = v.id AND o.status = 'succeeded' AND o.result->>'confirmation' = 'pending'`,
    [JSON.stringify(patches)]);
  return r.rowCount ?? 0;
}

/**
 * Puts messages whose confirmation is pending back to pending for one more attempt, due now (`confirmation:
 * "resent"`, `resends` + 1); the caller queues those attempts (dispatchOutbox with `attempts`). Returns the rows to
 * queue: a message settled or resent meanwhile is left out.
 */
export async function resendUnconfirmedOutboxMessages(db: Db, ids: string[]): Promise<(OutboxRow & { attempts: number })[]> {
  if (!ids.length) return [];
  const { rows } = await db.$pool.query<OutboxRow & { attempts: number }>(
    `UPDATE outbox_messages SET status = 'pending', next_attempt_at = now() AT TIME ZONE 'UTC', completed_at = NULL,
            result = result || jsonb_build_object('confirmation', 'resent', 'resends', coalesce((result->>'resends')::int, 0) + 1)
      WHERE id = ANY($1::text[]) AND status = 'succeeded' AND result->>'confirmation' = 'pending'
      RETURNING id, queue, next_attempt_at AT TIME ZONE 'UTC' AS next_attempt_at, attempts`,
    [ids]);
  return rows;
}
