import type pg from "pg";
import type { Tx } from "./client.ts";

// Idempotency-Key answers of requests that wrote rows (see the IdempotencyKey model). Sealing is the caller's job.

export interface CommittedAnswer { fingerprint: string; responseStatus: number; responseSealed: string }

/**
 * Records an answer inside the request's own transaction. False when the key already has one (another request with
 * it committed first: the primary key makes the second wait for the first, then conflict): roll back.
 */
export async function recordCommittedAnswer(
  tx: Tx, a: CommittedAnswer & { accountId: string; key: string; ttlSeconds: number },
): Promise<boolean> {
  const n = await tx.$executeRawUnsafe(
    `INSERT INTO idempotency_keys (account_id, key, fingerprint, response_status, response_sealed, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, now(), now() + $6 * interval '1 second')
     ON CONFLICT (account_id, key) DO UPDATE
        SET fingerprint = excluded.fingerprint, response_status = excluded.response_status, response_sealed = excluded.response_sealed,
            created_at = excluded.created_at, expires_at = excluded.expires_at
      WHERE idempotency_keys.expires_at <= now()`,
    a.accountId, a.key, a.fingerprint, a.responseStatus, a.responseSealed, a.ttlSeconds,
  );
  return n === 1;
}

export async function findCommittedAnswer(pool: pg.Pool, accountId: string, key: string): Promise<CommittedAnswer | null> {
  const { rows } = await pool.query<{ fingerprint: string; response_status: number; response_sealed: string }>(
    `SELECT fingerprint, response_status, response_sealed FROM idempotency_keys WHERE account_id = $1 AND key = $2 AND expires_at > now()`,
    [accountId, key],
  );
  const r = rows[0];
  return r ? { fingerprint: r.fingerprint, responseStatus: r.response_status, responseSealed: r.response_sealed } : null;
}

/** Deletes expired answers, a bounded number per call; returns how many. */
export async function purgeExpiredIdempotencyKeys(pool: pg.Pool, limit = 5000): Promise<number> {
  const { rowCount } = await pool.query(
    `DELETE FROM idempotency_keys WHERE ctid IN (SELECT ctid FROM idempotency_keys WHERE expires_at <= now() LIMIT $1)`,
    [limit],
  );
  return rowCount ?? 0;
}
