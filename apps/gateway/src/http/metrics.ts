import type { NextFunction, Request, Response } from "express";
import { Counter, Histogram, type Registry } from "prom-client";

/** Request count and latency per route template (not raw path, to keep label cardinality bounded). */
export function httpMetrics(registry: Registry) {
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
      const labels = { method: req.method, route: req.route?.path ?? "unmatched", status: String(res.statusCode) };
      requests.inc(labels);
      duration.observe(labels, Number(process.hrtime.bigint() - start) / 1e9);
    });
    next();
  };
}
