import { z } from "zod";

const Check = z.object({
  status: z.enum(["up", "down"]),
  latency_ms: z.number().nullable(),
  error: z.string().optional(),
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
    uptime_seconds: z.number(),
    checks: z.object({ postgres: Check, redis: Check }),
    queues: z.record(z.string(), QueueDepth).meta({ description: "Depth per queue; empty when Redis is down" }),
    tables: z.record(z.string(), TableSize).optional()
      .meta({ description: "Size of the tables that grow with traffic (bounded by retention, see README); absent when Postgres is down" }),
  })
  .meta({ id: "Status" });

export type StatusResponse = z.infer<typeof StatusResponse>;
