import type { Db } from "./client.ts";
import { newId } from "./ids.ts";

export async function createAccount(db: Db, name: string, plan = "free") {
  return db.account.create({ data: { id: newId("acct"), name, plan } });
}
