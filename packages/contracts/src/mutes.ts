import { z } from "zod";
import { futureInstant, Id, page, text, Timestamp } from "./common.ts";
import { CategoryPath } from "./signals.ts";

// Mutes: a topic or a category whose trends are still detected and listed, but pushed to nobody (webhooks, chat and
// the operator queue, workflow pushes) for a while: once, or in the windows of a recurring RFC 5545 rule.

/** The RRULE part of RFC 5545 (e.g. `FREQ=WEEKLY;BYDAY=SA,SU;BYHOUR=18`), without DTSTART: the mute sets its start. */
const RRule = text({ min: 1, max: 500, trim: true }).regex(/^(RRULE:)?FREQ=(YEARLY|MONTHLY|WEEKLY|DAILY|HOURLY)(;[A-Z]+=[A-Z0-9,+-]+)*$/, "an RFC 5545 RRULE such as FREQ=WEEKLY;BYDAY=SA,SU;BYHOUR=18 (no DTSTART: the mute sets its start)");

/** Whether `name` is a time zone the runtime knows (IANA names and their aliases, any case; not offsets like +01:00). */
export const isTimeZone = (name: string) => {
  if (!/^[A-Za-z][A-Za-z0-9_+\-]*(\/[A-Za-z0-9_+\-]+)*$/.test(name)) return false;
  try { new Intl.DateTimeFormat("en-US", { timeZone: name }); return true; } catch { return false; }
};
export const TimeZone = text({ min: 1, max: 64, trim: true }).refine(isTimeZone, "an IANA time zone name such as Europe/Berlin or UTC");

export const CreateMuteBody = z
  .object({
    topic: text({ min: 1, max: 200, trim: true }).optional().meta({ description: "A trend's name (any case): that topic's trends are muted" }),
    category: CategoryPath.optional().meta({ description: "A category and its sub-categories (`tech` mutes `tech/ai`)" }),
    duration_minutes: z.number().int().min(1).max(365 * 24 * 60).optional().meta({ description: "Muted from now for this long" }),
    until: futureInstant.optional().meta({ description: "Muted from now until this instant (instead of duration_minutes)" }),
    rrule: RRule.optional().meta({ description: "Muted in each occurrence of this rule, for window_minutes each; with until, only until then. " +
      "Its times are wall-clock times in time_zone, counted from midnight of the creation day there: times it does not give are 0 " +
      "(BYHOUR=18 is 18:00:00; no BYHOUR is 00:00). Expanded with a bound: a rule with no occurrence in the next 5 years " +
      "(or none found within the bound) answers 422 naming rrule" }),
    window_minutes: z.number().int().min(1).max(7 * 24 * 60).optional().meta({ description: "How long each occurrence of rrule mutes" }),
    time_zone: TimeZone.optional().meta({ description: "The IANA time zone rrule's times are read in (default UTC): 18:00 stays 18:00 there across daylight-saving changes", example: "Europe/Berlin" }),
    reason: text({ max: 500, trim: true }).optional(),
  })
  .strict()
  .superRefine((b, ctx) => {
    if (!!b.topic === !!b.category) ctx.addIssue({ code: "custom", path: ["topic"], message: "give exactly one of topic or category" });
    if (b.duration_minutes !== undefined && b.until !== undefined) ctx.addIssue({ code: "custom", path: ["until"], message: "give duration_minutes or until, not both" });
    if (b.duration_minutes !== undefined && b.rrule !== undefined) ctx.addIssue({ code: "custom", path: ["duration_minutes"], message: "a recurring mute takes window_minutes (and optionally until), not duration_minutes" });
    if ((b.rrule === undefined) !== (b.window_minutes === undefined)) ctx.addIssue({ code: "custom", path: [b.rrule === undefined ? "rrule" : "window_minutes"], message: "rrule and window_minutes go together" });
  })
  .meta({ id: "CreateMuteBody" });

export const Mute = z
  .object({
    id: z.string().meta({ example: "mut_01kaq3m2b4c5d6e7f8g9h0jkmn" }),
    topic: z.string().nullable(),
    category: z.string().nullable(),
    starts_at: Timestamp,
    ends_at: Timestamp.nullable().meta({ description: "null: until deleted (a recurring mute: in its windows, until deleted)" }),
    rrule: z.string().nullable(),
    window_minutes: z.number().int().nullable(),
    time_zone: z.string().meta({ description: "The IANA time zone rrule is read in (UTC unless given)", example: "Europe/Berlin" }),
    active_now: z.boolean().meta({ description: "Whether it holds events back at this moment" }),
    reason: z.string().nullable(),
    created_by: z.string().meta({ description: "`key:<id>`, `console:<session id>` or `chat:<team>/<user>`" }),
    created_at: Timestamp,
    suppressed: z.number().int().meta({ description: "Trend events it has held back so far (each would have gone to every matching destination)" }),
    last_suppressed_at: Timestamp.nullable(),
  })
  .meta({ id: "Mute" });
export type Mute = z.infer<typeof Mute>;

export const MuteList = page(Mute).meta({ id: "MuteList" });
export const MuteIdParam = z.object({ mute_id: Id });
