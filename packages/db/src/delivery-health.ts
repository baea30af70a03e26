import type { Db } from "./client.ts";

// Whether a connection's deliveries (workflow pushes, ...) are failing, shown by its status (GET …/connection):
// `last_error` says why and `last_error_at` since when (kept while the failures go on). Only a `connected`
// connection is touched: a `needs_reauth` or `error` one already says what is wrong with it.

/**
 * Notes a delivery that failed for good on the connection. Returns true when this starts a run of failures (the
 * connection showed none before), so the caller tells the account once, not for every failure.
 */
export async function noteDeliveryFailure(db: Db, connectionId: string, error: string): Promise<boolean> {
  const { rows } = await db.$pool.query<{ first: boolean }>(
    `UPDATE connections c
        SET last_error = $2, last_error_at = CASE WHEN o.first THEN now() AT TIME ZONE 'UTC' ELSE c.last_error_at END
       FROM (SELECT id, last_error IS NULL AS first FROM connections WHERE id = $1 AND status = 'connected' FOR UPDATE) o
      WHERE c.id = o.id
      RETURNING o.first`,
    [connectionId, error.replaceAll("\u0000", "\uFFFD").slice(0, 2000)]);
  return rows[0]?.first === true;
}

/** A delivery went through: the connection shows no delivery error any more. */
export async function clearDeliveryFailure(db: Db, connectionId: string): Promise<void> {
  await db.$pool.query(
    "UPDATE connections SET last_error = NULL, last_error_at = NULL WHERE id = $1 AND status = 'connected' AND last_error IS NOT NULL",
    [connectionId]);
}
