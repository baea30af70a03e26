import type { Db, Tx } from "./client.ts";
import { newId, type IdPage } from "./ids.ts";
import type { Prisma } from "./generated/client.ts";

export type OnCallScheduleRow = Awaited<ReturnType<Db["onCallSchedule"]["findUniqueOrThrow"]>>;

/** What a schedule is made of (rotation and overrides in the API's shape, checked by its contract). */
export interface OnCallScheduleInput {
  name: string;
  timeZone: string;
  rotation: Prisma.InputJsonValue;
  overrides: Prisma.InputJsonValue;
}

export const createOnCallSchedule = (db: Db | Tx, accountId: string, s: OnCallScheduleInput) =>
  db.onCallSchedule.create({ data: { id: newId("sch"), accountId, ...s } });

export const listOnCallSchedules = (db: Db, accountId: string, page: IdPage) =>
  db.onCallSchedule.findMany({ where: { accountId, ...page.after }, orderBy: { id: "desc" }, take: page.take });

export const findAccountOnCallSchedule = (db: Db | Tx, accountId: string, id: string) =>
  db.onCallSchedule.findFirst({ where: { id, accountId } });

/** Replaces the schedule's fields; null when the account has no such schedule. */
export async function replaceOnCallSchedule(db: Db | Tx, accountId: string, id: string, s: OnCallScheduleInput): Promise<OnCallScheduleRow | null> {
  const { count } = await db.onCallSchedule.updateMany({ where: { id, accountId }, data: s });
  return count ? findAccountOnCallSchedule(db, accountId, id) : null;
}

export async function deleteOnCallSchedule(db: Db | Tx, accountId: string, id: string): Promise<boolean> {
  const { count } = await db.onCallSchedule.deleteMany({ where: { id, accountId } });
  return count > 0;
}

/** Which of `ids` are schedules of the account. */
export const accountOnCallScheduleIds = async (db: Db | Tx, accountId: string, ids: string[]): Promise<string[]> =>
  ids.length ? (await db.onCallSchedule.findMany({ where: { accountId, id: { in: ids } }, select: { id: true } })).map((s) => s.id) : [];

/**
 * Where the account's saved escalation names the schedule: its routing rules' names, and "default route" for the
 * default escalation (an item's kept chain is not counted: a step whose schedule is gone says so when it runs).
 */
export async function onCallScheduleUsers(db: Db | Tx, accountId: string, id: string): Promise<string[]> {
  const step = [{ schedule_id: id }];
  const [routes, account] = await Promise.all([
    db.operatorRoute.findMany({ where: { accountId, escalation: { array_contains: step } }, select: { name: true }, orderBy: { position: "asc" } }),
    db.account.findFirst({ where: { id: accountId, operatorEscalation: { array_contains: step } }, select: { id: true } }),
  ]);
  return [...routes.map((r) => `rule ${JSON.stringify(r.name)}`), ...(account ? ["the default route"] : [])];
}
