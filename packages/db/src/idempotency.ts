import type { Db, Tx } from "./client.ts";

// Idempotency-Key records (see the IdempotencyKey model). One row per (account, key): `processing` while a request
// holds it (lock_token, locked_until), `done` with the sealed answer once it finished. Sealing is the caller's job.

export type IdempotencyRecord =
  | { status: "processing"; fingerprint: string }
  | { status: "done"; fingerprint: string; responseStatus: number; responseSealed: string };

/**
 * Takes the key for one request, atomically. Returns true when this request holds it now: the key was new, its
 * record expired, or the request that held it stopped without finishing (its lock ran out: it crashed before its
 * transaction committed, so nothing of it was written).
 */
export async function claimIdempotencyKey(
  db: Db, k: { accountId: string; key: string; fingerprint: string; token: string; lockSeconds: number; ttlSeconds: number },
): Promise<boolean> {
  const { rowCount } = await db.$pool.query(
    `INSERT INTO idempotency_keys (account_id, key, fingerprint, status, lock_token, locked_until, created_at, expires_at)
     VALUES ($1, $2, $3, 'processing', $4, clock_timestamp() + $5 * interval '1 second', clock_timestamp(), clock_timestamp() + $6 * interval '1 second')
     ON CONFLICT (account_id, key) DO UPDATE
        SET fingerprint = excluded.fingerprint, status = 'processing', lock_token = excluded.lock_token, locked_until = excluded.locked_until,
            response_status = NULL, response_sealed = NULL, created_at = excluded.created_at, expires_at = excluded.expires_at
      WHERE idempotency_keys.expires_at <= clock_timestamp()
         OR (idempotency_keys.status = 'processing' AND idempotency_keys.locked_until <= clock_timestamp())`,
    [k.accountId, k.key, k.fingerprint, k.token, k.lockSeconds, k.ttlSeconds],
  );
  return rowCount === 1;
}

export async function readIdempotencyKey(db: Db, accountId: string, key: string): Promise<IdempotencyRecord | null> {
  const { rows } = await db.$pool.query<{ status: string; fingerprint: string; response_status: number | null; response_sealed: string | null }>(
    `SELECT status, fingerprint, response_status, response_sealed FROM idempotency_keys
      WHERE account_id = $1 AND key = $2 AND expires_at > clock_timestamp()`,
    [accountId, key],
  );
  const r = rows[0];
  if (!r) return null;
  return r.status === "done"
    ? { status: "done", fingerprint: r.fingerprint, responseStatus: r.response_status!, responseSealed: r.response_sealed! }
    : { status: "processing", fingerprint: r.fingerprint };
}

/**
 * Stores the answer, in the caller's transaction when it wrote rows (so the rows and the answer commit together).
 * False when this request no longer holds the key (its lock ran out and another request took it over): the caller
 * must then roll back.
 */
export async function completeIdempotencyKey(db: Db | Tx, accountId: string, key: string, token: string, status: number, sealed: string): Promise<boolean> {
  const n = await db.$executeRawUnsafe(
    `UPDATE idempotency_keys SET status = 'done', lock_token = NULL, response_status = $4, response_sealed = $5
      WHERE account_id = $1 AND key = $2 AND lock_token = $3`,
    accountId, key, token, status, sealed,
  );
  return n === 1;
}

/** Frees a key whose request failed or answered 5xx, so the caller's retry runs again. */
export async function releaseIdempotencyKey(db: Db, accountId: string, key: string, token: string): Promise<void> {
  await db.$pool.query(`DELETE FROM idempotency_keys WHERE account_id = $1 AND key = $2 AND lock_token = $3`, [accountId, key, token]);
}

/** Deletes expired records, a bounded number per call; returns how many. */
export async function purgeExpiredIdempotencyKeys(db: Db, limit = 5000): Promise<number> {
  const { rowCount } = await db.$pool.query(
    `DELETE FROM idempotency_keys WHERE ctid IN (SELECT ctid FROM idempotency_keys WHERE expires_at <= now() LIMIT $1)`,
    [limit],
  );
  return rowCount ?? 0;
}
