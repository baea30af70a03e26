import {
  OnCallAt, OnCallQuery, OnCallSchedule, OnCallScheduleBody, OnCallScheduleList, pageQuery, ScheduleIdParam,
} from "@trendgate/contracts";
import { findAccountOnCallSchedule, listOnCallSchedules, type OnCallScheduleRow } from "@trendgate/db";
import { nextHandoff, onCallAt, scheduleSpec, type OnCallScheduleSpec } from "@trendgate/operator";
import { notFound } from "../http/api-error.ts";
import { keysetPage } from "../http/paginate.ts";
import { defineRoute } from "../http/route.ts";
import { createSchedule, removeSchedule, replaceSchedule } from "../services/on-call-schedules.ts";

// On-call schedules: who is on call when (a rotation handed off at a local time, and overrides), for escalation
// steps of type notify_on_call (see docs/api.md › On-call schedules).

const BASE = "/api/operator/schedules";
const TAG = "Operator queue";

/** Who is on call at `at` in `spec`, and the next change. */
export function toOnCallAt(spec: OnCallScheduleSpec, at: Date): OnCallAt {
  const now = onCallAt(spec, at);
  const next = nextHandoff(spec, at);
  return {
    at: at.toISOString(), on_call: now.member, source: now.source,
    shift: now.shift && { index: now.shift.index, started_at: now.shift.startedAt.toISOString(), ends_at: now.shift.endsAt.toISOString() },
    next_handoff: next && { at: next.at.toISOString(), on_call: next.member },
  };
}

export const toSchedule = (r: OnCallScheduleRow, now = new Date()): OnCallSchedule => {
  const spec = scheduleSpec(r);
  return {
    id: r.id, name: r.name, time_zone: r.timeZone, rotation: spec.rotation, overrides: spec.overrides, on_call_now: toOnCallAt(spec, now),
    created_at: r.createdAt.toISOString(), updated_at: r.updatedAt.toISOString(),
  };
};

const RULES = "Each shift is the next member's in order; `daily` and `weekly` shifts hand off at `handoff_time` (local, in `time_zone`, default UTC; " +
  "weekly on `handoff_weekday`), `hours` shifts every `shift_hours` from the first hand-off, counted in local time, so a hand-off stays at its local " +
  "time across daylight-saving changes. The first shift starts at the first hand-off on or after `start_date`. An override puts its member on " +
  "call from `starts_at` to `ends_at` (the later one in the list wins). Chat users name chat providers (422 naming the field otherwise).";

export const scheduleRoutes = [
  defineRoute({
    method: "post", path: BASE, operationId: "createOnCallSchedule", tag: TAG, auth: "apiKey", idempotent: "transactional",
    summary: "Create an on-call schedule (a rotation and overrides) for notify_on_call escalation steps",
    description: RULES, body: OnCallScheduleBody,
    responses: { 201: { description: "Created", schema: OnCallSchedule } },
    async handler({ deps, auth, body, atomically }) {
      return atomically(async (tx) => {
        const row = await createSchedule(tx, deps.registry, auth.accountId, body);
        return { status: 201, body: toSchedule(row), headers: { Location: `${BASE}/${row.id}` } };
      });
    },
  }),
  defineRoute({
    method: "get", path: BASE, operationId: "listOnCallSchedules", tag: TAG, auth: "apiKey",
    summary: "The account's on-call schedules, newest first, each with who is on call now",
    query: pageQuery({ limit: 50, max: 200, cursor: { ids: ["sch"] } }),
    responses: { 200: { description: "A page of schedules", schema: OnCallScheduleList } },
    async handler({ deps, auth, query }) {
      const now = new Date();
      return { status: 200, body: await keysetPage(query, (p) => listOnCallSchedules(deps.db, auth.accountId, p), (r) => toSchedule(r, now)) };
    },
  }),
  defineRoute({
    method: "get", path: `${BASE}/{schedule_id}`, operationId: "getOnCallSchedule", tag: TAG, auth: "apiKey",
    summary: "One on-call schedule", params: ScheduleIdParam,
    responses: { 200: { description: "The schedule", schema: OnCallSchedule } },
    async handler({ deps, auth, params }) {
      const row = await findAccountOnCallSchedule(deps.db, auth.accountId, params.schedule_id);
      if (!row) throw notFound("Schedule");
      return { status: 200, body: toSchedule(row) };
    },
  }),
  defineRoute({
    method: "put", path: `${BASE}/{schedule_id}`, operationId: "replaceOnCallSchedule", tag: TAG, auth: "apiKey",
    summary: "Replace an on-call schedule (the whole body, as for create)", description: RULES,
    params: ScheduleIdParam, body: OnCallScheduleBody,
    responses: { 200: { description: "The stored schedule", schema: OnCallSchedule } },
    async handler({ deps, auth, params, body }) {
      return { status: 200, body: toSchedule(await replaceSchedule(deps.db, deps.registry, auth.accountId, params.schedule_id, body)) };
    },
  }),
  defineRoute({
    method: "delete", path: `${BASE}/{schedule_id}`, operationId: "deleteOnCallSchedule", tag: TAG, auth: "apiKey",
    summary: "Delete an on-call schedule (409 while a saved escalation step notifies it)", params: ScheduleIdParam,
    responses: { 204: { description: "Deleted" } },
    async handler({ deps, auth, params }) {
      await removeSchedule(deps.db, auth.accountId, params.schedule_id);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: "get", path: `${BASE}/{schedule_id}/on-call`, operationId: "getOnCall", tag: TAG, auth: "apiKey",
    summary: "Who is on call at an instant (default now), and the next hand-off",
    params: ScheduleIdParam, query: OnCallQuery,
    responses: { 200: { description: "Who is on call", schema: OnCallAt } },
    async handler({ deps, auth, params, query }) {
      const row = await findAccountOnCallSchedule(deps.db, auth.accountId, params.schedule_id);
      if (!row) throw notFound("Schedule");
      return { status: 200, body: toOnCallAt(scheduleSpec(row), query.at ? new Date(query.at) : new Date()) };
    },
  }),
];
