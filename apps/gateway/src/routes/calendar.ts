import { HolidayCalendar, HolidayCalendarBody } from "@trendgate/contracts";
import { accountCalendar, saveAccountCalendar } from "@trendgate/db";
import { calendarProblem, HOLIDAY_EVIDENCE, holidayAt, upcomingHolidays, type HolidayCalendar as Calendar } from "@trendgate/trends";
import { ApiError } from "../http/api-error.ts";
import { defineRoute } from "../http/route.ts";

// The account's holiday calendar (see docs/api.md › Holidays): the detector reads it every pass.

const BASE = "/api/calendar";
const TAG = "Trends";

function view(c: Calendar | null, now = new Date()): HolidayCalendar {
  const held = c ? holidayAt(c, now) : null;
  return {
    country: c?.country ?? null, region: c?.region ?? null, holiday_evidence: HOLIDAY_EVIDENCE,
    now: held && { name: held.name, start: held.start.toISOString(), end: held.end.toISOString() },
    upcoming: c ? upcomingHolidays(c, now, 10).map((h) => ({ ...h, start: h.start.toISOString(), end: h.end.toISOString() })) : [],
  };
}

export const calendarRoutes = [
  defineRoute({
    method: "get", path: BASE, operationId: "getHolidayCalendar", tag: TAG, auth: "apiKey",
    summary: "The account's holiday calendar, the holiday in effect and the next ones",
    responses: { 200: { description: "The calendar (country null: none)", schema: HolidayCalendar } },
    async handler({ deps, auth }) {
      return { status: 200, body: view(await accountCalendar(deps.db, auth.accountId)) };
    },
  }),
  defineRoute({
    method: "put", path: BASE, operationId: "putHolidayCalendar", tag: TAG, auth: "apiKey",
    summary: "Set the holiday calendar: during its holidays, trends need 1.5 x the usual evidence",
    description: "Holidays and observances of the country (and region) from the date-holidays library, in the country's time zone: a holiday " +
      "moves volumes everywhere at once, so while one lasts every score threshold is multiplied by holiday_evidence (on top of a topic's " +
      "feedback bar). Campaigns you run yourself: mute their topic or category for the campaign (POST /api/mutes).",
    body: HolidayCalendarBody,
    responses: { 200: { description: "The calendar", schema: HolidayCalendar } },
    async handler({ deps, auth, body }) {
      const calendar = { country: body.country, region: body.region ?? null };
      const problem = calendarProblem(calendar);
      if (problem) throw new ApiError("validation_failed", `${problem.field}: ${problem.message}`, { errors: [{ location: "body", path: problem.field, message: problem.message, code: "unknown_calendar" }] });
      await saveAccountCalendar(deps.db, auth.accountId, calendar);
      return { status: 200, body: view(calendar) };
    },
  }),
  defineRoute({
    method: "delete", path: BASE, operationId: "deleteHolidayCalendar", tag: TAG, auth: "apiKey",
    summary: "Remove the holiday calendar", responses: { 204: { description: "Removed" } },
    async handler({ deps, auth }) {
      await saveAccountCalendar(deps.db, auth.accountId, null);
      return { status: 204 };
    },
  }),
];
