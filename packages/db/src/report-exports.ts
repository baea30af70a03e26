import type { Db, Tx } from "./client.ts";
import type { Prisma, ReportExport } from "./generated/client.ts";
import { cancelOutboxMessages } from "./outbox.ts";

// Report exports as the gateway sees them: created queued, read for progress, cancelled or deleted. The export job
// writes its progress and chunks itself (packages/reports).

export type ReportExportRow = ReportExport;

export const createQueuedExport = (tx: Tx, e: { id: string; accountId: string; request: unknown; expiresAt: Date }) =>
  tx.reportExport.create({ data: { ...e, request: e.request as Prisma.InputJsonValue, status: "queued" } });

export const findAccountExport = (db: Db | Tx, accountId: string, id: string) => db.reportExport.findFirst({ where: { id, accountId } });

/** Deletes the export and its file; false when it was gone already (a concurrent delete). */
export const deleteExport = async (db: Db | Tx, id: string) => (await db.reportExport.deleteMany({ where: { id } })).count > 0;

/** Deletes the account's exports past their time. */
export const deleteExpiredExports = (db: Db | Tx, accountId: string) => db.reportExport.deleteMany({ where: { accountId, expiresAt: { lt: new Date() } } });

/** Marks a queued or running export cancelled (its job stops at its next chunk) and cancels its job's pending message. */
export async function cancelExport(tx: Tx, id: string, queue: string): Promise<void> {
  await tx.reportExport.update({ where: { id }, data: { status: "cancelled" } });
  await cancelOutboxMessages(tx, id, queue);
}
