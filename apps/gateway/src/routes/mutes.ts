import { CreateMuteBody, Mute, MuteIdParam, MuteList, pageQuery } from "@trendgate/contracts";
import { createMute, deleteMute, findAccountMute, listMutes, type MuteRow } from "@trendgate/db";
import { credentialActor } from "@trendgate/operator";
import { isMuteActive, ruleProblem } from "@trendgate/trends";
import { ApiError, notFound } from "../http/api-error.ts";
import { keysetPage } from "../http/paginate.ts";
import { defineRoute } from "../http/route.ts";

// Mutes: a topic or category whose trends nobody is told about for a while (see docs/api.md › Mutes). The worker
// that routes trend events applies them (packages/trends/src/events/mutes.ts is the one rule).

const BASE = "/api/mutes";
const TAG = "Mutes";
const iso = (d: Date | null) => (d ? d.toISOString() : null);

export const toMute = (r: MuteRow, now = new Date()): Mute => ({
  id: r.id, topic: r.topic, category: r.category, starts_at: r.startsAt.toISOString(), ends_at: iso(r.endsAt), rrule: r.rrule,
  window_minutes: r.windowMinutes, time_zone: r.timeZone, active_now: isMuteActive(r, now), reason: r.reason, created_by: r.createdBy,
  created_at: r.createdAt.toISOString(), suppressed: r.suppressed, last_suppressed_at: iso(r.lastSuppressedAt),
});

export const muteRoutes = [
  defineRoute({
    method: "post", path: BASE, operationId: "createMute", tag: TAG, auth: "apiKey", idempotent: "transactional",
    summary: "Mute a topic or a category: its trends are detected and listed, but pushed to nobody",
    description: "Once (`duration_minutes` or `until`; neither: until deleted) or in recurring windows (`rrule` + `window_minutes`, " +
      "e.g. `FREQ=WEEKLY;BYDAY=SA,SU;BYHOUR=18` with 240: weekend evenings 18:00-22:00 in `time_zone`, default UTC). Held back: webhook deliveries, chat cards " +
      "and operator items, workflow pushes; each held event is counted in `suppressed`. Takes effect within TREND_ROUTING_CACHE_MS.",
    body: CreateMuteBody,
    responses: { 201: { description: "Created", schema: Mute } },
    async handler({ deps, auth, body, atomically }) {
      const now = new Date();
      // Stored as the runtime names it (canonical case: europe/berlin is Europe/Berlin), which reads back as valid input.
      const timeZone = body.time_zone ? new Intl.DateTimeFormat("en-US", { timeZone: body.time_zone }).resolvedOptions().timeZone : "UTC";
      const problem = body.rrule ? ruleProblem(body.rrule, now, timeZone, body.window_minutes) : null;
      if (problem) throw new ApiError("validation_failed", `rrule: ${problem}`, { errors: [{ location: "body", path: "rrule", message: problem, code: "invalid_rrule" }] });
      const endsAt = body.until ? new Date(body.until) : body.duration_minutes ? new Date(now.getTime() + body.duration_minutes * 60_000) : null;
      return atomically(async (tx) => {
        const row = await createMute(tx, {
          accountId: auth.accountId, topic: body.topic ?? null, category: body.category ?? null, startsAt: now, endsAt,
          rrule: body.rrule?.replace(/^RRULE:/, "") ?? null, windowMinutes: body.window_minutes ?? null, timeZone, reason: body.reason ?? null,
          createdBy: credentialActor(auth.credential),
        });
        return { status: 201, body: toMute(row, now), headers: { Location: `${BASE}/${row.id}` } };
      });
    },
  }),
  defineRoute({
    method: "get", path: BASE, operationId: "listMutes", tag: TAG, auth: "apiKey",
    summary: "The account's mutes, newest first, with how many events each has held back",
    query: pageQuery({ limit: 50, max: 200, cursor: { ids: ["mut"] } }),
    responses: { 200: { description: "A page of mutes", schema: MuteList } },
    async handler({ deps, auth, query }) {
      return { status: 200, body: await keysetPage(query, (p) => listMutes(deps.db, auth.accountId, p), (r) => toMute(r)) };
    },
  }),
  defineRoute({
    method: "get", path: `${BASE}/{mute_id}`, operationId: "getMute", tag: TAG, auth: "apiKey",
    summary: "One mute", params: MuteIdParam,
    responses: { 200: { description: "The mute", schema: Mute } },
    async handler({ deps, auth, params }) {
      const row = await findAccountMute(deps.db, auth.accountId, params.mute_id);
      if (!row) throw notFound("Mute");
      return { status: 200, body: toMute(row) };
    },
  }),
  defineRoute({
    method: "delete", path: `${BASE}/{mute_id}`, operationId: "deleteMute", tag: TAG, auth: "apiKey",
    summary: "Unmute: delete the mute (events from then on are pushed again)", params: MuteIdParam,
    responses: { 204: { description: "Deleted" } },
    async handler({ deps, auth, params }) {
      if (!(await deleteMute(deps.db, auth.accountId, params.mute_id))) throw notFound("Mute");
      return { status: 204 };
    },
  }),
];
