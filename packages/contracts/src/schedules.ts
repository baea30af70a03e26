import { z } from "zod";
import { Id, page, storableText, text, Timestamp } from "./common.ts";
import { TimeZone } from "./mutes.ts";

// On-call schedules: a rotation of people (each with their user id on the account's chat providers) taking turns in
// shifts that hand off at a local time in the schedule's time zone, and overrides (a time range someone else covers).
// An escalation step `notify_on_call` mentions whoever is on call when it runs.

export const ON_CALL = { maxMembers: 50, maxOverrides: 200, maxChatUsers: 5, maxShiftHours: 24 * 14 } as const;
export const SHIFT_KINDS = ["daily", "weekly", "hours"] as const;
export const WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"] as const;

export const OnCallChatUser = z
  .object({
    provider: text({ min: 1, max: 40, trim: true }).regex(/^[a-z][a-z0-9_]*$/, "a chat provider id (`slack`, `teams`)")
      .meta({ description: "A chat provider (`slack`, `teams`)" }),
    user_id: text({ min: 1, max: 100, trim: true })
      .meta({ description: "The person's user id there (Slack `U…`, Teams: the AAD object id)", example: "U0123ABCD" }),
  })
  .strict();

export const OnCallMember = z
  .object({
    name: text({ min: 1, max: 100, trim: true }).meta({ description: "Display name (Teams shows it in the mention)", example: "Ada" }),
    chat_users: z.array(OnCallChatUser).min(1).max(ON_CALL.maxChatUsers)
      .superRefine((users, ctx) => {
        const seen = new Set<string>();
        users.forEach((u, i) => {
          if (seen.has(u.provider)) ctx.addIssue({ code: "custom", path: [i, "provider"], message: `${u.provider} is listed twice: one user per provider` });
          seen.add(u.provider);
        });
      })
      .meta({ description: "Who to mention, per chat provider: an item escalating in Slack mentions the Slack user" }),
  })
  .strict()
  .meta({ id: "OnCallMember" });
export type OnCallMember = z.infer<typeof OnCallMember>;

const LocalDate = z.iso.date().check(storableText).meta({ description: "A local date (YYYY-MM-DD) in the schedule's time zone", example: "2026-12-01" });

export const OnCallRotation = z
  .object({
    members: z.array(OnCallMember).min(1).max(ON_CALL.maxMembers).meta({ description: "In order: each shift is the next member's, then the first again" }),
    shift: z.enum(SHIFT_KINDS).meta({ description: "How long a shift lasts: a day, a week, or `shift_hours` (counted in local time)" }),
    shift_hours: z.number().int().min(1).max(ON_CALL.maxShiftHours).optional().meta({ description: "Shift length in hours (shift `hours` only)" }),
    handoff_time: z.string().check(storableText).regex(/^([01]\d|2[0-3]):[0-5]\d$/, "a local time HH:MM (00:00-23:59)")
      .meta({ description: "Local time of the hand-off in time_zone (stays at that local time across daylight-saving changes)", example: "09:00" }),
    handoff_weekday: z.enum(WEEKDAYS).optional().meta({ description: "Weekday of the hand-off (shift `weekly` only; default monday)" }),
    start_date: LocalDate.meta({ description: "The first member's first shift starts at the first hand-off on or after this local date; nobody is on call before it (but overrides)" }),
  })
  .strict()
  .superRefine((r, ctx) => {
    if (r.shift === "hours" && r.shift_hours === undefined) ctx.addIssue({ code: "custom", path: ["shift_hours"], message: "shift `hours` needs shift_hours" });
    if (r.shift !== "hours" && r.shift_hours !== undefined) ctx.addIssue({ code: "custom", path: ["shift_hours"], message: "shift_hours is for shift `hours` only" });
    if (r.shift !== "weekly" && r.handoff_weekday !== undefined) ctx.addIssue({ code: "custom", path: ["handoff_weekday"], message: "handoff_weekday is for shift `weekly` only" });
  })
  .meta({ id: "OnCallRotation" });
export type OnCallRotation = z.infer<typeof OnCallRotation>;

export const OnCallOverride = z
  .object({
    starts_at: Timestamp,
    ends_at: Timestamp,
    member: OnCallMember.meta({ description: "Who is on call instead, from starts_at until ends_at" }),
  })
  .strict()
  .refine((o) => !(Date.parse(o.ends_at) <= Date.parse(o.starts_at)), { message: "must be after starts_at", path: ["ends_at"] })
  .meta({ id: "OnCallOverride" });
export type OnCallOverride = z.infer<typeof OnCallOverride>;

export const OnCallScheduleBody = z
  .object({
    name: text({ min: 1, max: 100, trim: true }),
    time_zone: TimeZone.default("UTC").meta({ description: "The IANA time zone hand-off times are read in (default UTC)", example: "Europe/Berlin" }),
    rotation: OnCallRotation,
    overrides: z.array(OnCallOverride).max(ON_CALL.maxOverrides).default([])
      .meta({ description: "Time ranges someone else covers; where overrides overlap, the later one in the list wins" }),
  })
  .strict()
  .meta({ id: "OnCallScheduleBody" });
export type OnCallScheduleBody = z.infer<typeof OnCallScheduleBody>;

export const OnCallAt = z
  .object({
    at: Timestamp.meta({ description: "The instant asked about" }),
    on_call: OnCallMember.nullable().meta({ description: "Who is on call then; null: nobody (before the rotation starts, and no override)" }),
    source: z.enum(["rotation", "override"]).nullable(),
    shift: z.object({ index: z.number().int(), started_at: Timestamp, ends_at: Timestamp })
      .nullable().meta({ description: "The rotation's shift at that instant (also under an override); null before the first hand-off" }),
    next_handoff: z.object({ at: Timestamp, on_call: OnCallMember.nullable() })
      .nullable().meta({ description: "The next time someone else is on call (a hand-off, or an override starting or ending), and who; null: none within a year" }),
  })
  .meta({ id: "OnCallAt" });
export type OnCallAt = z.infer<typeof OnCallAt>;

export const OnCallSchedule = z
  .object({
    id: z.string().meta({ example: "sch_01kaq3m2b4c5d6e7f8g9h0jkmn" }),
    name: z.string(),
    time_zone: z.string(),
    rotation: OnCallRotation,
    overrides: z.array(OnCallOverride),
    on_call_now: OnCallAt,
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: "OnCallSchedule" });
export type OnCallSchedule = z.infer<typeof OnCallSchedule>;

export const OnCallScheduleList = page(OnCallSchedule).meta({ id: "OnCallScheduleList" });
export const ScheduleIdParam = z.object({ schedule_id: Id });
export const OnCallQuery = z.object({ at: Timestamp.optional().meta({ description: "The instant (default now)" }) });
