import type { Db } from "./client.ts";

/** An account's holiday calendar (null: none). */
export async function accountCalendar(db: Db, accountId: string): Promise<{ country: string; region: string | null } | null> {
  const row = await db.account.findUnique({ where: { id: accountId }, select: { holidayCountry: true, holidayRegion: true } });
  return row?.holidayCountry ? { country: row.holidayCountry, region: row.holidayRegion } : null;
}

export async function saveAccountCalendar(db: Db, accountId: string, c: { country: string; region: string | null } | null) {
  await db.account.update({ where: { id: accountId }, data: { holidayCountry: c?.country ?? null, holidayRegion: c?.region ?? null } });
}
