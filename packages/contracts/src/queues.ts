import { z } from "zod";
import { Signal } from "./signals.ts";

// Every BullMQ queue the system uses, and the payload each job carries. Payloads carry ids and data, never secrets:
// workers load credentials from Postgres.
export const QUEUES = {
  signals: "signals-ingest",
} as const;
export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

export const JOB_PAYLOADS = {
  [QUEUES.signals]: z.object({ account_id: z.string(), batch_id: z.string(), signals: z.array(Signal) }),
} satisfies Record<QueueName, z.ZodType>;

export type JobPayload<Q extends QueueName> = z.infer<(typeof JOB_PAYLOADS)[Q]>;
