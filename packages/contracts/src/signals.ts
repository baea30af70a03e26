import { z } from "zod";
import { Timestamp } from "./common.ts";

export const SIGNAL_BATCH_MAX = 1000;

export const CategoryPath = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]*(\/[a-z0-9][a-z0-9_-]*)*$/, "lower-case path segments separated by '/', e.g. tech/ai")
  .max(200)
  .meta({ example: "tech/ai" });

export const Signal = z
  .object({
    id: z.string().min(1).max(200).meta({ description: "Caller's id for the signal; a repeat is ignored" }),
    source: z.string().min(1).max(50).meta({ example: "x" }),
    topic: z.string().trim().min(1).max(200),
    category: CategoryPath,
    count: z.number().int().min(0).max(1_000_000_000).meta({ description: "Mentions or engagement in the observation" }),
    sentiment: z.number().min(-1).max(1).optional(),
    observed_at: Timestamp,
    link: z.url({ protocol: /^https?$/ }).max(2000).optional(),
  })
  .strict()
  .meta({ id: "Signal" });

export const IngestSignalsBody = z
  .object({ signals: z.array(z.unknown()).min(1).max(SIGNAL_BATCH_MAX) })
  .strict()
  .meta({ id: "IngestSignalsBody", description: `1 to ${SIGNAL_BATCH_MAX} signals; each is validated on its own` });

export const IngestSignalsResponse = z
  .object({
    batch_id: z.string(),
    accepted: z.number().int(),
    rejected: z.number().int(),
    rejections: z.array(
      z.object({ index: z.number().int(), id: z.string().nullable(), errors: z.array(z.object({ path: z.string(), message: z.string() })) }),
    ),
  })
  .meta({ id: "IngestSignalsResponse" });

export type Signal = z.infer<typeof Signal>;
