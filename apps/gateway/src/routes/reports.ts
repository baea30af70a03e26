import crypto from "node:crypto";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import {
  IdParam, QUEUES, ReportCatalog, ReportCsv, ReportExportQuery, ReportExportView, ReportPreview, ReportPreviewQuery, type ReportOutputRow as Row,
  ReportRequest, type ReportProviderOutcome,
} from "@trendgate/contracts";
import {
  addOutboxMessages, cancelExport, connectionStates, createQueuedExport, deleteExpiredExports, deleteExport, findAccountExport, newId,
  type ReportExportRow,
} from "@trendgate/db";
import { chunkReader, csvStringifier, DIMENSIONS, METRICS, providerCatalog, reportRows, reportSources } from "@trendgate/reports";
import { ApiError, notFound } from "../http/api-error.ts";
import { invalidCursor, openCursor, sealCursor } from "../http/paginate.ts";
import { defineRoute, type RouteDef } from "../http/route.ts";
import type { GatewayDeps } from "../deps.ts";

// Ads reporting: the catalog, a report preview (the first rows, a page at a time) and CSV exports. An
// export answers in the response when the report is small (REPORT_STREAM_MAX_ROWS, read within
// REPORT_STREAM_MAX_SECONDS); otherwise it becomes a job on the reports queue (the shared outbox), written in chunks
// as the providers' pages stream in, with its progress readable and its file downloadable when ready.

const TAG = "Ads reporting";
const BASE = "/api/integrations/ads/reporting";

const exportView = (e: ReportExportRow): ReportExportView => ({
  id: e.id, status: e.status as ReportExportView["status"], request: e.request as ReportRequest, rows_written: e.rowsWritten, bytes: Number(e.bytes),
  providers: (e.providers as ReportProviderOutcome[] | null) ?? null, error: e.error,
  created_at: e.createdAt.toISOString(), started_at: e.startedAt?.toISOString() ?? null, finished_at: e.finishedAt?.toISOString() ?? null,
  expires_at: e.expiresAt.toISOString(), download_url: e.status === "ready" ? `${BASE}/exports/${e.id}/download` : null,
});

/** A preview cursor: how many rows were shown, bound to the account and the request it pages (another cannot use it). */
const requestHash = (r: unknown) => crypto.createHash("sha256").update(JSON.stringify(r)).digest("base64url").slice(0, 16);
const previewListing = (accountId: string, req: unknown) => `report-preview:${accountId}:${requestHash(req)}`;
function readCursor(deps: GatewayDeps, cursor: string | undefined, listing: string): number {
  if (!cursor) return 0;
  const skip = openCursor<unknown>(deps.config.ENCRYPTION_KEY, listing, cursor);
  if (typeof skip !== "number" || !Number.isInteger(skip) || skip < 0) throw invalidCursor();
  return skip;
}

/** An export of the account; one past its time is gone (deleted here, so polling costs one read). */
async function exportOf(deps: GatewayDeps, accountId: string, id: string): Promise<ReportExportRow> {
  const e = await findAccountExport(deps.db, accountId, id);
  if (e && e.expiresAt < new Date()) await deleteExport(deps.db, id);
  if (!e || e.expiresAt < new Date()) throw notFound("Export");
  return e;
}

const catalogRoute = defineRoute({
  method: "get", path: `${BASE}/catalog`, operationId: "getReportCatalog", tag: TAG, auth: "apiKey",
  summary: "What can be reported: dimensions, metrics, and per provider its levels, limits and definitions",
  responses: { 200: { description: "The catalog", schema: ReportCatalog } },
  async handler({ deps, auth }) {
    const conns = await connectionStates(deps.db, auth.accountId, { kind: "ads" });
    const c = deps.config;
    return {
      status: 200,
      body: {
        dimensions: DIMENSIONS, metrics: METRICS, providers: providerCatalog(deps.registry, new Set(conns.map((x) => x.provider))),
        limits: { preview_max_rows: c.REPORT_PREVIEW_MAX_ROWS, stream_max_rows: c.REPORT_STREAM_MAX_ROWS, stream_max_seconds: c.REPORT_STREAM_MAX_SECONDS, export_ttl_seconds: c.REPORT_EXPORT_TTL_SECONDS },
      },
    };
  },
});

const previewRoute = defineRoute({
  method: "post", path: `${BASE}/preview`, operationId: "previewReport", tag: TAG, auth: "apiKey",
  summary: "The first rows of a report, normalised across providers, a page at a time",
  description: "Rows of each provider in turn, marked by `provider`, `account_id` and `currency`; `providers` says per provider whether it was read, failed (with why) or not reached yet. " +
    "Pass `next_cursor` back as `cursor` with the same body for the next page (a preview re-reads from the start: export for whole reports).",
  body: ReportRequest, query: ReportPreviewQuery,
  responses: { 200: { description: "A page", schema: ReportPreview } },
  async handler({ deps, auth, body, query, res }) {
    const limit = Math.min(query.limit, deps.config.REPORT_PREVIEW_MAX_ROWS);
    const listing = previewListing(auth.accountId, body);
    const skip = readCursor(deps, query.cursor, listing);
    const abort = new AbortController();
    // The response's close (not the request's, which closes once its body is read): the client went away.
    res.once("close", () => abort.abort());
    const sources = await reportSources(deps, auth.accountId, body);
    const rows: Row[] = [];
    let seen = 0;
    for await (const page of reportRows(sources, abort.signal)) {
      for (const r of page) { if (seen++ >= skip) rows.push(r); }
      if (rows.length > limit) break; // one more than the page says whether there is a next one
    }
    abort.abort(); // stop whatever provider was being read
    const more = rows.length > limit;
    return { status: 200, body: {
      data: rows.slice(0, limit), next_cursor: more ? sealCursor(deps.config.ENCRYPTION_KEY, listing, skip + limit) : null,
      providers: sources.map((s) => s.outcome),
    } };
  },
});

const createExportRoute = defineRoute({
  method: "post", path: `${BASE}/exports`, operationId: "exportReport", tag: TAG, auth: "apiKey",
  summary: "Export a report as CSV: in the response when small, else as a job",
  description:
    "200 `text/csv` when the whole report is at most REPORT_STREAM_MAX_ROWS rows read within REPORT_STREAM_MAX_SECONDS (`X-Report-Providers` carries the per-provider outcomes as JSON). " +
    "Otherwise (or with `mode=job`) 202 with the export: it runs on the reports queue, `rows_written` shows its progress at GET …/exports/{id}, and its file is at `download_url` " +
    "when `ready`, kept REPORT_EXPORT_TTL_SECONDS. Columns: date, provider, account_id, campaign_id, campaign_name, ad_group_id, ad_group_name, ad_id, ad_name, impressions, clicks, " +
    "spend_micros, currency, conversions, ctr, cpc_micros (RFC 4180; cells that would start a spreadsheet formula are prefixed with `'`). A client that disconnects stops the reads.",
  body: ReportRequest, query: ReportExportQuery,
  responses: { 200: { description: "The CSV", content: { "text/csv": ReportCsv } }, 202: { description: "The export job", schema: ReportExportView } },
  async handler({ deps, auth, body, query, res, atomically }) {
    // Exports past their time go when the account starts a new one (no sweeper needed for per-account files).
    await deleteExpiredExports(deps.db, auth.accountId);
    const c = deps.config;
    if (query.mode === "auto") {
      const abort = new AbortController();
      res.once("close", () => { if (!res.writableEnded) abort.abort(); }); // the client went away
      const sources = await reportSources(deps, auth.accountId, body);
      const rows: Row[] = [];
      const deadline = Date.now() + c.REPORT_STREAM_MAX_SECONDS * 1000;
      let small = true;
      for await (const page of reportRows(sources, abort.signal)) {
        rows.push(...page);
        if (rows.length > c.REPORT_STREAM_MAX_ROWS || Date.now() > deadline) { small = false; break; }
      }
      abort.abort();
      if (res.destroyed) return;
      if (small) {
        res.status(200).set({
          "content-type": "text/csv; charset=utf-8", "content-disposition": `attachment; filename="report-${body.from}-${body.to}.csv"`,
          "x-report-providers": JSON.stringify(sources.map((s) => s.outcome)),
        });
        await pipeline(Readable.from(rows), csvStringifier(), res).catch(() => undefined); // a client gone mid-answer
        return;
      }
    }
    const id = newId("rpx");
    return atomically(async (tx) => {
      const e = await createQueuedExport(tx, { id, accountId: auth.accountId, request: body, expiresAt: new Date(Date.now() + c.REPORT_EXPORT_TTL_SECONDS * 1000) });
      const outbox = await addOutboxMessages(tx, [{ queue: QUEUES.reportExports, accountId: auth.accountId, connectionId: null, subjectId: id, dedupKey: id, payload: { export_id: id } }]);
      return { status: 202, headers: { Location: `${BASE}/exports/${id}` }, body: exportView(e), outbox };
    });
  },
});

const getExportRoute = defineRoute({
  method: "get", path: `${BASE}/exports/{id}`, operationId: "getReportExport", tag: TAG, auth: "apiKey",
  summary: "An export's status and progress",
  params: IdParam,
  responses: { 200: { description: "The export", schema: ReportExportView } },
  async handler({ deps, auth, params }) {
    return { status: 200, body: exportView(await exportOf(deps, auth.accountId, params.id)) };
  },
});

const downloadRoute = defineRoute({
  method: "get", path: `${BASE}/exports/{id}/download`, operationId: "downloadReportExport", tag: TAG, auth: "apiKey",
  summary: "The export's CSV file (when ready)",
  params: IdParam,
  responses: { 200: { description: "The CSV file, streamed", content: { "text/csv": ReportCsv } }, 409: { description: "`conflict`: not ready (yet)" } },
  async handler({ deps, auth, params, res }) {
    const e = await exportOf(deps, auth.accountId, params.id);
    if (e.status !== "ready") throw new ApiError("conflict", `This export is ${e.status}${e.status === "running" ? ` (${e.rowsWritten} rows so far)` : ""}: download it when ready`);
    const r = e.request as { from: string; to: string };
    res.status(200).set({ "content-type": "text/csv; charset=utf-8", "content-length": String(e.bytes), "content-disposition": `attachment; filename="report-${r.from}-${r.to}.csv"` });
    await pipeline(chunkReader(deps.db, e.id), res).catch(() => undefined); // a client gone mid-download stops the reads
  },
});

const cancelRoute = defineRoute({
  method: "delete", path: `${BASE}/exports/{id}`, operationId: "deleteReportExport", tag: TAG, auth: "apiKey",
  summary: "Cancel a running export, or delete a finished one and its file",
  params: IdParam,
  responses: { 204: { description: "Cancelled or deleted" } },
  async handler({ deps, auth, params, atomically }) {
    const e = await exportOf(deps, auth.accountId, params.id);
    // A running export's job sees the cancellation at its next chunk and stops reading the providers; its partial file is removed.
    if (e.status === "queued" || e.status === "running") return atomically(async (tx) => { await cancelExport(tx, e.id, QUEUES.reportExports); return { status: 204 }; });
    if (!(await deleteExport(deps.db, e.id))) throw notFound("Export");
    return { status: 204 };
  },
});

export const reportRoutes: RouteDef[] = [catalogRoute, previewRoute, createExportRoute, getExportRoute, downloadRoute, cancelRoute];
