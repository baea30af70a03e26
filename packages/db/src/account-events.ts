import { encodeTime } from "ulid";
import type { Db } from "./client.ts";
import { newId, type IdPage } from "./ids.ts";

/** Something the service tells an account about; listed by GET /api/events. */
export interface AccountEventInput {
  accountId: string;
  type: string;
  data: Record<string, unknown>;
  /**
   * Record the event only once: skipped when the account already has an event of the same type, created since
   * `since`, whose data contains `match` (e.g. `{batch_id, index}`), so a retried job does not tell the user twice.
   * The lookup walks the account's events newer than `since` on the (account_id, id) index (ids are time-ordered).
   */
  once?: { match: Record<string, unknown>; since: Date };
}

// Accounts deleted meanwhile are skipped (no foreign-key error). created_at in UTC, like Prisma writes it.
const RECORD_SQL = `
INSERT INTO account_events (id, account_id, type, data, created_at)
SELECT v.id, v.account_id, v.type, v.data, now() AT TIME ZONE 'UTC'
  FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[], $5::jsonb[], $6::text[]) AS v(id, account_id, type, data, match, since_id)
 WHERE EXISTS (SELECT 1 FROM accounts a WHERE a.id = v.account_id)
   AND (v.match IS NULL OR NOT EXISTS (
         SELECT 1 FROM account_events e
          WHERE e.account_id = v.account_id AND e.id >= v.since_id AND e.type = v.type AND e.data @> v.match))
ON CONFLICT (id) DO NOTHING`;

/** Writes account events in one statement; returns how many were written (skipped: already told, account gone). */
export async function recordAccountEvents(db: Db, events: AccountEventInput[]): Promise<number> {
  if (!events.length) return 0;
  const col = <T>(f: (e: AccountEventInput) => T) => events.map(f);
  const { rowCount } = await db.$pool.query(RECORD_SQL, [
    col(() => newId("evt")), col((e) => e.accountId), col((e) => e.type),
    col((e) => JSON.stringify(jsonSafe(e.data))),
    col((e) => (e.once ? JSON.stringify(jsonSafe(e.once.match)) : null)),
    col((e) => (e.once ? `evt_${encodeTime(Math.max(0, e.once.since.getTime()), 10).toLowerCase()}` : null)),
  ]);
  return rowCount ?? 0;
}

/**
 * Text Postgres can keep in jsonb: NUL characters (which jsonb refuses) and lone surrogates (which would not survive
 * UTF-8) become U+FFFD, recursively. Event data often quotes what the user sent, which is exactly where these hide.
 */
export function jsonSafe<T>(v: T): T {
  if (typeof v === "string") return v.replace(/\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD") as T;
  if (Array.isArray(v)) return v.map(jsonSafe) as T;
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [jsonSafe(k), jsonSafe(x)])) as T;
  return v;
}

/** A page of the account's events, newest first, of one type when given. */
export const listAccountEvents = (db: Db, accountId: string, type: string | undefined, page: IdPage) =>
  db.accountEvent.findMany({ where: { accountId, ...(type ? { type } : {}), ...page.after }, orderBy: { id: "desc" }, take: page.take });
