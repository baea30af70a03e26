import type { NextFunction, Request, Response } from "express";
import { Counter, Histogram, type Registry } from "prom-client";
import type { Logger } from "@trendgate/logger";

/**
 * 5xx answers the server gives on purpose (501: a provider or feature this server has no configuration for; 502: the
 * provider refused or failed) are the expected state of a dependency, not a fault in this service.
 */
const EXPECTED_5XX = new Set([501, 502]);

/** A status that means this service failed (logged as an error, with the stack from the error handler). */
export const isServerFault = (status: number) => status >= 500 && !EXPECTED_5XX.has(status);

/** Success and client errors at info, expected 5xx at warn, faults at error. */
export const accessLogLevel = (status: number) => (isServerFault(status) ? "error" : status >= 500 ? "warn" : "info");

/**
 * One `finish` listener per request for both the Prometheus metrics (by route template, so label cardinality stays
 * bounded) and the access log line (request id, route, status, duration; never headers, bodies or the query string).
 * Every request logs once at info or above (the default level): see accessLogLevel.
 */
export function observe(registry: Registry, logger: Logger) {
  const labelNames = ["method", "route", "status"] as const;
  const requests = new Counter({ name: "http_requests_total", help: "HTTP requests", labelNames, registers: [registry] });
  const duration = new Histogram({
    name: "http_request_duration_seconds",
    help: "HTTP request latency",
    labelNames,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  return (req: Request, res: Response, next: NextFunction) => {
    const start = process.hrtime.bigint();
    res.on("finish", () => {
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      const route = req.route?.path ?? "unmatched";
      const labels = { method: req.method, route, status: String(res.statusCode) };
      requests.inc(labels);
      duration.observe(labels, seconds);
      const level = accessLogLevel(res.statusCode);
      if (logger.isLevelEnabled(level))
        // res.locals.logPath: a route whose path carries a credential (a briefing link's token) logs this instead.
        logger[level]({ request_id: req.id, method: req.method, path: res.locals.logPath ?? req.path, route, status: res.statusCode, duration_ms: Math.round(seconds * 1e4) / 10, account_id: req.auth?.accountId }, "request");
    });
    next();
  };
}
