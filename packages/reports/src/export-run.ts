import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReportRequest } from "@trendgate/contracts";
import { recordAccountEvents, type Prisma } from "@trendgate/db";
import { csvStringifier } from "./csv.ts";
import { ChunkWriter } from "./export-store.ts";
import { reportRows } from "./pages.ts";
import { reportSources, type ReportDeps } from "./sources.ts";

// One export job: the providers' pages -> CSV -> stored chunks, as one backpressured pipeline (memory holds a
// provider page and a chunk, whatever the row count). Progress (rows, bytes) is written with each chunk; a
// cancelled export (DELETE) is noticed at the next chunk and stops the providers' reads. A job that runs again (a
// crash, a retry) starts the file over.

export interface ExportSettings { chunkBytes: number; ttlSeconds: number }

export async function runExport(deps: ReportDeps, exportId: string, settings: ExportSettings): Promise<{ status: string; rows: number; bytes: number }> {
  const { db } = deps;
  const exp = await db.reportExport.findUnique({ where: { id: exportId } });
  if (!exp || exp.status === "cancelled" || exp.status === "ready") return { status: exp?.status ?? "gone", rows: exp?.rowsWritten ?? 0, bytes: Number(exp?.bytes ?? 0) };
  await db.reportExportChunk.deleteMany({ where: { exportId } });
  // Conditional: a DELETE between the read above and this write must not be turned back into "running".
  const started = await db.reportExport.updateMany({ where: { id: exportId, status: { in: ["queued", "running"] } }, data: { status: "running", startedAt: new Date(), rowsWritten: 0, bytes: 0, error: null } });
  if (!started.count) return { status: "cancelled", rows: 0, bytes: 0 };

  const abort = new AbortController();
  const sources = await reportSources(deps, exp.accountId, exp.request as unknown as ReportRequest);
  let rows = 0;
  const records = Readable.from((async function* () {
    for await (const page of reportRows(sources, abort.signal)) for (const r of page) { rows++; yield r; }
  })());
  const sink = new ChunkWriter(db, exportId, settings.chunkBytes, async (bytes) => {
    const now = await db.reportExport.update({ where: { id: exportId }, data: { rowsWritten: rows, bytes }, select: { status: true } });
    if (now.status === "cancelled") abort.abort();
  });
  try {
    await pipeline(records, csvStringifier(), sink, { signal: abort.signal });
  } catch (err) {
    if (!abort.signal.aborted) throw err; // a cancelled export just stops
  }
  const outcomes = sources.map((s) => s.outcome) as unknown as Prisma.InputJsonValue;
  if (abort.signal.aborted) {
    await db.reportExportChunk.deleteMany({ where: { exportId } });
    await db.reportExport.update({ where: { id: exportId }, data: { finishedAt: new Date(), providers: outcomes, rowsWritten: rows } });
    return { status: "cancelled", rows, bytes: sink.bytes };
  }
  const finishedAt = new Date();
  const done = await db.reportExport.updateMany({ where: { id: exportId, status: "running" }, data: {
    status: "ready", rowsWritten: rows, bytes: sink.bytes, providers: outcomes, finishedAt, expiresAt: new Date(finishedAt.getTime() + settings.ttlSeconds * 1000),
  } });
  if (!done.count) { // cancelled after the last chunk: no file is kept
    await db.reportExportChunk.deleteMany({ where: { exportId } });
    await db.reportExport.update({ where: { id: exportId }, data: { finishedAt, providers: outcomes, rowsWritten: rows } });
    return { status: "cancelled", rows, bytes: sink.bytes };
  }
  await recordAccountEvents(db, [{ accountId: exp.accountId, type: "report.export_ready", data: { export_id: exportId, rows, bytes: sink.bytes } }]);
  return { status: "ready", rows, bytes: sink.bytes };
}
