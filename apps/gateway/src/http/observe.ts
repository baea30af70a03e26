import type { NextFunction, Request, Response } from "express";
import { Counter, Histogram, type Registry } from "prom-client";
import type { Logger } from "@trendgate/logger";

/**
 * One `finish` listener per request for both the Prometheus metrics (by route template, so label cardinality stays
 * bounded) and the access log line (request id, route, status, duration; never headers or bodies).
 * 2xx/3xx log at debug, 4xx at info, 5xx at error.
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
      const level = res.statusCode >= 500 ? "error" : res.statusCode >= 400 ? "info" : "debug";
      if (logger.isLevelEnabled(level))
        // res.locals.logPath: a route whose path carries a credential (a briefing link's token) logs this instead.
        logger[level]({ request_id: req.id, method: req.method, path: res.locals.logPath ?? req.path, route, status: res.statusCode, duration_ms: Math.round(seconds * 1e4) / 10, account_id: req.auth?.accountId }, "request");
    });
    next();
  };
}
