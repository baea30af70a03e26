import { z } from "zod";

const Check = z.object({
  status: z.enum(["up", "down"]),
  latency_ms: z.number().nullable().optional().meta({ description: "With the admin token" }),
  error: z.string().optional().meta({ description: "Why it is down; with the admin token" }),
});

export const QueueDepth = z.object({
  waiting: z.number().int(),
  active: z.number().int(),
  delayed: z.number().int(),
  failed: z.number().int(),
});

export const TableSize = z.object({
  bytes: z.number().int().meta({ description: "On disk, indexes and TOAST included (pg_total_relation_size)" }),
  rows_estimate: z.number().int().meta({ description: "Approximate row count (pg_class.reltuples, as of the last VACUUM/ANALYZE); -1 when never analysed" }),
});

export const StatusResponse = z
  .object({
    status: z.enum(["ok", "unavailable"]),
    version: z.string(),
    checks: z.object({ postgres: Check, redis: Check }),
    uptime_seconds: z.number().optional().meta({ description: "With the admin token" }),
    queues: z.record(z.string(), QueueDepth).optional().meta({ description: "Depth per queue, with the admin token; empty when Redis is down" }),
    tables: z.record(z.string(), TableSize).optional()
      .meta({ description: "Size of the tables that grow with traffic (bounded by retention, see docs/operating.md › Retention), with the admin token; absent when Postgres is down" }),
  })
  .meta({
    id: "Status",
    description: "Without credentials: up or down, the version and each dependency's up or down. With the admin token: also latencies, errors, uptime, queue depths and table sizes.",
  });

export type StatusResponse = z.infer<typeof StatusResponse>;
