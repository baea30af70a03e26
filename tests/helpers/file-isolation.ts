import pg from "pg";

// Runs before each test file's own hooks. The files a jest worker runs share its database, one after another, and an
// earlier file may stop its stack with work still due: escalation steps minutes away, retries, trend events not yet
// matched. This file's sweeper would take that work up and send it through this file's stand-ins (or to a provider's
// real address, where a lookup may hang), busying the workers this file's tests wait on. That work belongs to a
// stack that is gone: it is settled here, before this file starts one of its own.
beforeAll(async () => {
  if (!process.env.DATABASE_URL) return; // pure tests: no database
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  try {
    await client.connect();
  } catch {
    return; // a file that makes its own database, or none
  }
  try {
    await client.query(`
      UPDATE outbox_messages SET status = 'cancelled', completed_at = now() AT TIME ZONE 'UTC' WHERE status = 'pending';
      UPDATE webhook_deliveries SET status = 'cancelled', completed_at = now() AT TIME ZONE 'UTC' WHERE status = 'pending';
      UPDATE trend_events SET dispatched_at = now() AT TIME ZONE 'UTC' WHERE dispatched_at IS NULL;`);
  } catch (err) {
    // A database not migrated yet (a file that migrates it itself) has none of these tables.
    if ((err as { code?: string }).code !== "42P01") throw err;
  } finally {
    await client.end();
  }
});
