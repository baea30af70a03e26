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

export const StatusResponse = z
  .object({
    status: z.enum(["ok", "unavailable"]),
    version: z.string(),
    uptime_seconds: z.number(),
    checks: z.object({ postgres: Check, redis: Check }),
    queues: z.record(z.string(), QueueDepth).meta({ description: "Depth per queue; empty when Redis is down" }),
  })
  .meta({ id: "Status" });

export type StatusResponse = z.infer<typeof StatusResponse>;
