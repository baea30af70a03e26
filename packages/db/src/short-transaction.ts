import type pg from "pg";

/**
 * Runs `work` in a transaction of its own on a pool connection, under lock_timeout (and statement_timeout when given):
 * maintenance (retention batches, partition drops and attaches) gives up rather than queue behind a long lock, where
 * it would in turn hold up every writer queued behind it. A connection whose ROLLBACK failed is discarded.
 */
export async function shortTransaction<T>(pool: pg.Pool, limits: { lockTimeoutMs: number; statementTimeoutMs?: number }, work: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query("BEGIN");
    await client.query(`SET LOCAL lock_timeout = ${Math.round(limits.lockTimeoutMs)}`);
    if (limits.statementTimeoutMs !== undefined) await client.query(`SET LOCAL statement_timeout = ${Math.round(limits.statementTimeoutMs)}`);
    const out = await work(client);
    await client.query("COMMIT");
    return out;
  } catch (err) {
    await client.query("ROLLBACK").catch((e) => { broken = e; });
    throw err;
  } finally {
    client.release(broken);
  }
}
