import { z } from "zod";
import { pastInstant, storableText, text } from "./common.ts";

export const SIGNAL_BATCH_MAX = 1000;
/** Clock skew allowed on `observed_at`: an observation further in the future is refused. */
export const SIGNAL_MAX_FUTURE_SECONDS = 3600;
/**
 * Oldest `observed_at` accepted: a signal older than this could no longer count towards any trend (detection reads a
 * week of history, retention keeps signals 30 days by default) and is most often a wrong unit or a zero date.
 */
export const SIGNAL_MAX_AGE_DAYS = 30;

/** Whether `category` is `parent` or below it: `tech` covers `tech` and `tech/ai`, not `technology`. */
export const categoryWithin = (category: string, parent: string): boolean => category === parent || category.startsWith(`${parent}/`);

export const CategoryPath = z
  .string()
  .check(storableText)
  .regex(/^[a-z0-9][a-z0-9_-]*(\/[a-z0-9][a-z0-9_-]*)*$/, "lower-case path segments separated by '/', e.g. tech/ai")
  .max(200)
  .meta({ example: "tech/ai" });

/** Longest post text a signal keeps (connectors cut longer ones). */
export const SIGNAL_TEXT_MAX = 1000;

export const Signal = z
  .object({
    id: text({ min: 1, max: 200 }).meta({ description: "Caller's id for the signal; a repeat (same source, id and observed_at) is ignored" }),
    source: text({ min: 1, max: 50 }).meta({ example: "x" }),
    topic: text({ min: 1, max: 200, trim: true }),
    category: CategoryPath,
    count: z.number().int().min(0).max(1_000_000_000).meta({ description: "Mentions or engagement in the observation" }),
    sentiment: z.number().min(-1).max(1).optional(),
    observed_at: pastInstant(SIGNAL_MAX_FUTURE_SECONDS)
      .refine((v) => !(Date.parse(v) < Date.now() - SIGNAL_MAX_AGE_DAYS * 86_400_000), `must not be more than ${SIGNAL_MAX_AGE_DAYS} days in the past`)
      .meta({ description: `When it was observed (ISO 8601, UTC; at most ${SIGNAL_MAX_AGE_DAYS} days back and ${SIGNAL_MAX_FUTURE_SECONDS / 3600} h ahead of the server clock)` }),
    link: text({ max: 2000 }).pipe(z.url({ protocol: /^https?$/ })).optional(),
    text: text({ max: SIGNAL_TEXT_MAX }).optional()
      .meta({ description: `The post's text or title, at most ${SIGNAL_TEXT_MAX} characters: what a trend's drivers (the terms that co-occur more than usual) are read from` }),
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
    duplicates: z.number().int().meta({ description: "Items repeating a (source, id) earlier in this batch: stored once, not counted in accepted" }),
    rejections_truncated: z.boolean().meta({ description: "true when `rejected` exceeds the rejections listed (at most the first 100 are listed)" }),
    rejections: z.array(
      z.object({ index: z.number().int(), id: z.string().nullable(), errors: z.array(z.object({ path: z.string(), message: z.string() })) }),
    ),
  })
  .meta({ id: "IngestSignalsResponse" });

export type Signal = z.infer<typeof Signal>;
