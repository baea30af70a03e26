import { z } from "zod";
import { text, Timestamp } from "./common.ts";

// An account's holiday calendar: the country (and region) whose holidays, observances included, make the detector ask
// every topic for stronger evidence while they last.

export const HolidayCalendarBody = z
  .object({
    country: text({ min: 2, max: 2 }).regex(/^[A-Z]{2}$/, "an ISO 3166-1 alpha-2 country code such as US, DE or JP").meta({ example: "US" }),
    region: text({ min: 1, max: 10 }).regex(/^[A-Z0-9]{1,10}$/, "a region code of the country such as CA (US) or BY (DE)").nullable().optional()
      .meta({ description: "A state or region whose own holidays count too (null: the country's only)" }),
  })
  .strict()
  .meta({ id: "HolidayCalendarBody" });

export const HolidayCalendar = z
  .object({
    country: z.string().nullable().meta({ description: "null: no calendar" }),
    region: z.string().nullable(),
    holiday_evidence: z.number().meta({ description: "The factor on the detector's score thresholds during a holiday" }),
    now: z.object({ name: z.string(), start: Timestamp, end: Timestamp }).nullable().meta({ description: "The holiday in effect now, if any" }),
    upcoming: z.array(z.object({ name: z.string(), type: z.string(), start: Timestamp, end: Timestamp }))
      .meta({ description: "The next ten holidays that count (public, bank, observance), in the country's time zone" }),
  })
  .meta({ id: "HolidayCalendar" });
export type HolidayCalendar = z.infer<typeof HolidayCalendar>;
