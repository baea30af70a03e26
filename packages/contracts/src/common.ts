import { z } from "zod";

/** Cursor pagination shared by every list endpoint: newest first, `next_cursor` is null on the last page. */
export const pageQuery = (defaults: { limit: number; max: number }) =>
  z.object({
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(defaults.max)
      .default(defaults.limit)
      .meta({ description: `Page size (default ${defaults.limit}, maximum ${defaults.max})` }),
    cursor: z.string().max(64).optional().meta({ description: "`next_cursor` of the previous page" }),
  });

export const page = <T extends z.ZodType>(item: T) =>
  z.object({
    data: z.array(item),
    next_cursor: z.string().nullable().meta({ description: "Pass as `cursor` for the next page; null on the last page" }),
  });

export const IdParam = z.object({ id: z.string().min(1).max(64) });
export const Timestamp = z.iso.datetime().meta({ description: "ISO 8601, UTC", example: "2026-11-22T06:00:00.000Z" });

/** An enum whose OpenAPI description lists each value with its meaning (one source for both). */
export const documentedEnum = <K extends string>(values: Record<K, string>) =>
  z.enum(Object.keys(values) as [K, ...K[]]).meta({
    description: Object.entries(values).map(([k, v]) => `\`${k}\`: ${v}`).join("; "),
  });
