import type { Db } from "./client.ts";

/**
 * Runs `run` if this process takes the session-level advisory lock `key` (one holder across the fleet; else returns
 * `none` at once). The lock is held on one pooled connection for the run only; `run` queries on other connections in
 * autocommit, so no transaction stays open across its Redis calls. A connection that breaks meanwhile is discarded,
 * and its lock goes with it.
 */
export async function underFleetLock<T>(db: Db, key: number, none: T, run: () => Promise<T>): Promise<T> {
  const client = await db.$pool.connect();
  // A checked-out client has no error listener of its own: without one, a connection cut while we wait on Redis
  // would be an unhandled 'error' event (a crash). The next query on it fails instead, and it is discarded below.
  let broken: Error | undefined;
  const onError = (err: Error) => { broken = err; };
  client.on("error", onError);
  try {
    const { rows } = await client.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1) AS locked", [key]);
    if (!rows[0].locked) return none;
    try {
      return await run();
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [key]).catch((err) => { broken ??= err; });
    }
  } catch (err) {
    broken ??= err as Error;
    throw err;
  } finally {
    client.off("error", onError);
    client.release(broken); // a broken connection is closed, and its session lock goes with it
  }
}
