import type { Db, Tx } from "./client.ts";
import { newId, type IdPage } from "./ids.ts";

export type MuteRow = Awaited<ReturnType<Db["mute"]["findUniqueOrThrow"]>>;

/** What a new mute is made of: the row without what the database fills in (time_zone: UTC unless given). */
export type NewMute = Pick<MuteRow, "accountId" | "topic" | "category" | "startsAt" | "endsAt" | "rrule" | "windowMinutes" | "reason" | "createdBy"> &
  Partial<Pick<MuteRow, "timeZone">>;

export const createMute = (db: Db | Tx, m: NewMute) => db.mute.create({ data: { id: newId("mut"), ...m } });

export const listMutes = (db: Db, accountId: string, page: IdPage) =>
  db.mute.findMany({ where: { accountId, ...page.after }, orderBy: { id: "desc" }, take: page.take });

export const findAccountMute = (db: Db, accountId: string, id: string) => db.mute.findFirst({ where: { id, accountId } });

export async function deleteMute(db: Db, accountId: string, id: string) {
  const { count } = await db.mute.deleteMany({ where: { id, accountId } });
  return count > 0;
}

/** The account's mutes that have not ended by `now` (whether one holds an event right now is the rule's call). */
export const unendedMutes = (db: Db, accountId: string, now = new Date()) =>
  db.mute.findMany({ where: { accountId, OR: [{ endsAt: null }, { endsAt: { gt: now } }] } });

/**
 * Records the events `held` back (each with the mutes holding it) as dispatched, and counts each one for its mutes,
 * in one statement: only events not dispatched before are counted, so a retried batch counts nothing twice.
 */
export async function recordSuppressions(db: Db, held: { eventId: string; muteIds: string[] }[]) {
  if (!held.length) return;
  const pairs = held.flatMap((h) => h.muteIds.map((m) => [h.eventId, m] as const));
  await db.$pool.query({
    name: "tg_record_suppressions",
    text: `WITH fresh AS (
             UPDATE trend_events SET dispatched_at = now() WHERE id = ANY($1::text[]) AND dispatched_at IS NULL RETURNING id
           ), c AS (
             SELECT p.mute_id, count(*)::int AS n FROM unnest($2::text[], $3::text[]) AS p(event_id, mute_id)
             JOIN fresh ON fresh.id = p.event_id GROUP BY p.mute_id
           )
           UPDATE mutes SET suppressed = mutes.suppressed + c.n, last_suppressed_at = now() FROM c WHERE mutes.id = c.mute_id`,
    values: [held.map((h) => h.eventId), pairs.map((p) => p[0]), pairs.map((p) => p[1])],
  });
}
