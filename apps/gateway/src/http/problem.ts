import type { NextFunction, Request, Response } from "express";
import { ERROR_CODES, problemType, type Problem } from "@trendgate/contracts";
import { isDbConcurrentConflict, isDbDataError, isDbRecordGone, isDbUnavailable } from "@trendgate/db";
import type { Logger } from "@trendgate/logger";
import { ApiError } from "./api-error.ts";
import { isServerFault } from "./observe.ts";

// ioredis/BullMQ errors that mean Redis cannot be reached right now.
const isRedisUnavailable = (err: any) =>
  err?.name === "MaxRetriesPerRequestError" ||
  /Stream isn't writeable|Connection is closed|ECONNREFUSED.*6379|Reached the max retries per request|connect ETIMEDOUT/i.test(String(err?.message));

/** Maps anything thrown into an ApiError: body-parser errors, dependency outages, and unknown bugs (500). */
/** A database that cannot be reached: 503 with Retry-After (also what a backtest thread reports it met). */
export const databaseUnavailable = () => new ApiError("service_unavailable", "The database is unavailable", { headers: { "Retry-After": "5" } });

export function toApiError(err: any): ApiError {
  if (err instanceof ApiError) return err;
  switch (err?.type) {
    case "entity.parse.failed": return new ApiError("malformed_json", "The request body could not be parsed as JSON");
    case "entity.too.large": return new ApiError("payload_too_large", `The request body exceeds ${err.limit} bytes`);
    case "encoding.unsupported":
    case "charset.unsupported": return new ApiError("unsupported_media_type", err.message);
  }
  // Express decodes path parameters before any handler runs; a malformed %-sequence throws there.
  if (err instanceof URIError || (err?.status === 400 && /decode param/i.test(String(err?.message))))
    return new ApiError("bad_request", "The request path has malformed percent-encoding (e.g. %ff or a lone %)");
  // Body-parser's other client errors (aborted upload, bad length, unsupported encoding of the stream).
  if (typeof err?.type === "string" && err.status >= 400 && err.status < 500) return new ApiError("bad_request", String(err.message));
  // Races between requests of the same account (two deletes, a delete and a pause, two first PUTs): the one that
  // lost answers what it would have a moment later, whichever route it was.
  if (isDbRecordGone(err)) return new ApiError("not_found", "The resource no longer exists (a concurrent request removed it)");
  if (isDbConcurrentConflict(err)) return new ApiError("conflict", "The request conflicts with a resource another request created or changed first; nothing was changed, retry it");
  if (isDbDataError(err)) return new ApiError("validation_failed", "A value in the request cannot be stored (out of range or not valid text)");
  if (isRedisUnavailable(err)) return new ApiError("service_unavailable", "The queue store (Redis) is unavailable", { headers: { "Retry-After": "5" } });
  if (isDbUnavailable(err)) return databaseUnavailable();
  return new ApiError("internal_error", "An unexpected error occurred; it has been logged with the request id");
}

export function sendProblem(req: Request, res: Response, e: ApiError) {
  const body: Problem = {
    type: problemType(e.code),
    title: ERROR_CODES[e.code].title,
    status: e.status,
    detail: e.detail,
    instance: req.originalUrl.split("?")[0],
    code: e.code,
    request_id: req.id,
    ...(e.extra.errors ? { errors: e.extra.errors } : {}),
  };
  if (e.status === 503 && !e.extra.headers?.["Retry-After"]) res.setHeader("Retry-After", "5");
  for (const [k, v] of Object.entries(e.extra.headers ?? {})) res.setHeader(k, v);
  res.status(e.status).type("application/problem+json").send(JSON.stringify(body));
}

export function problemHandler(logger: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const e = toApiError(err);
    // The stack of a fault; an expected 5xx (501 not configured, 502 provider failed) is in the access log line.
    if (isServerFault(e.status)) logger.error({ err, request_id: req.id, path: res.locals.logPath ?? req.path }, "request failed");
    // A data error means a request schema let through a value the database refused: a contract to tighten.
    else if (e.code === "validation_failed" && !(err instanceof ApiError)) logger.warn({ err: String(err), request_id: req.id, path: req.path }, "database refused a validated value");
    if (res.headersSent) return res.end();
    sendProblem(req, res, e);
  };
}
