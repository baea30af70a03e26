import type { Db } from "./client.ts";
import { newId } from "./ids.ts";

export async function createAccount(db: Db, name: string, plan = "free") {
  return db.account.create({ data: { id: newId("acct"), name, plan } });
}

/** Briefing links issued before `at` stop opening (the account's revocation instant). */
export async function revokeBriefingLinks(db: Db, accountId: string, at: Date): Promise<void> {
  await db.account.update({ where: { id: accountId }, data: { briefingLinksRevokedBefore: at } });
}
