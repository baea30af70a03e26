import { QUEUES, type ReportExportPayload } from "@trendgate/contracts";
import { runExport } from "@trendgate/reports";
import { outboxProcessor, type OutboxHandler } from "../outbox/index.ts";
import type { WorkerDeps } from "./types.ts";

// CSV exports of ads reports on the shared outbox (QUEUES.reportExports): one message per export, so a
// worker that dies mid-export leaves the message for another (the sweeper re-queues it) and the file is written
// again from the start. Provider failures are per provider inside the export; only our own failures (database)
// fail the attempt and are retried on the outbox schedule.

export function reportExportHandler(deps: WorkerDeps): OutboxHandler<ReportExportPayload> {
  return {
    // An export holds a provider page and a chunk in memory: a few at a time per process is plenty.
    concurrency: 2,
    async send(message) {
      const { export_id } = message.payload;
      return runExport(deps, export_id, { chunkBytes: deps.config.REPORT_EXPORT_CHUNK_BYTES, ttlSeconds: deps.config.REPORT_EXPORT_TTL_SECONDS });
    },
    async onFinal(message, outcome, error) {
      if (outcome !== "failed") return;
      const { export_id } = message.payload;
      await deps.db.reportExport.updateMany({ where: { id: export_id, status: { in: ["queued", "running"] } }, data: { status: "failed", error: error?.message ?? message.lastError ?? "export failed", finishedAt: new Date() } });
    },
  };
}

export const reportExports = outboxProcessor(QUEUES.reportExports, reportExportHandler);
