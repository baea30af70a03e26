// Who is on call at an instant (packages/operator/src/on-call.ts), on its own: members in turn, the hand-off at its
// local time in the schedule's zone across daylight-saving changes (a repeated and a skipped hour), weekly and
// hourly shifts, overrides (the later wins) and the next hand-off.
import type { OnCallMember, OnCallOverride, OnCallRotation } from "@trendgate/contracts";
import { nextHandoff, onCallAt, onCallReply, type OnCallScheduleSpec } from "@trendgate/operator";

const member = (name: string): OnCallMember => ({ name, chat_users: [{ provider: "slack", user_id: `U0${name.toUpperCase()}0001` }] });
const [A, B, C, D] = ["ada", "bo", "cy", "di"].map(member);
const spec = (timeZone: string, rotation: Partial<OnCallRotation>, overrides: OnCallOverride[] = []): OnCallScheduleSpec => ({
  timeZone, overrides,
  rotation: { members: [A, B, C], shift: "daily", handoff_time: "09:00", start_date: "2026-10-20", ...rotation },
});
const who = (s: OnCallScheduleSpec, iso: string) => onCallAt(s, new Date(iso)).member?.name ?? null;

test("a daily hand-off stays at 09:00 local when Berlin's clocks go back (the day is 25 hours long)", () => {
  const s = spec("Europe/Berlin", {});
  // 20 Oct ada, 21 bo, 22 cy, 23 ada, 24 bo, 25 cy: each at 09:00 local, 07:00Z in summer time, 08:00Z after 25 Oct.
  expect(who(s, "2026-10-20T06:59:59Z")).toBeNull(); // before the first hand-off
  expect(who(s, "2026-10-20T07:00:00Z")).toBe("ada");
  expect(who(s, "2026-10-24T07:00:00Z")).toBe("bo");
  // 24 h after Saturday's hand-off it is 08:00 local on Sunday: still Saturday's shift (a fixed 24 h would hand off).
  expect(who(s, "2026-10-25T07:30:00Z")).toBe("bo");
  expect(who(s, "2026-10-25T07:59:59Z")).toBe("bo");
  expect(who(s, "2026-10-25T08:00:00Z")).toBe("cy");
  expect(onCallAt(s, new Date("2026-10-25T07:30:00Z")).shift).toEqual({
    index: 4, startedAt: new Date("2026-10-24T07:00:00Z"), endsAt: new Date("2026-10-25T08:00:00Z"),
  });
  expect(nextHandoff(s, new Date("2026-10-25T07:30:00Z"))).toEqual({ at: new Date("2026-10-25T08:00:00Z"), member: C });
  // And later in winter time, still at 09:00 local (08:00Z), the rotation wrapping round.
  expect(who(s, "2026-10-26T07:59:00Z")).toBe("cy");
  expect(who(s, "2026-10-26T08:00:00Z")).toBe("ada");
});

test("a hand-off inside the hour New York skips is read with the offset before the change", () => {
  const s = spec("America/New_York", { handoff_time: "02:30", start_date: "2026-03-06" });
  // 6 Mar ada, 7 bo, 8 cy (02:30 does not exist that night: 02:30 EST = 03:30 EDT = 07:30Z), 9 ada at 02:30 EDT = 06:30Z.
  expect(who(s, "2026-03-08T07:29:59Z")).toBe("bo");
  expect(who(s, "2026-03-08T07:30:00Z")).toBe("cy");
  expect(who(s, "2026-03-09T06:29:59Z")).toBe("cy");
  expect(who(s, "2026-03-09T06:30:00Z")).toBe("ada");
  expect(nextHandoff(s, new Date("2026-03-08T06:00:00Z"))?.at).toEqual(new Date("2026-03-08T07:30:00Z"));
});

test("a weekly hand-off on Monday 09:00 across Berlin's spring change, and 12-hour shifts counted in local time", () => {
  const weekly = spec("Europe/Berlin", { shift: "weekly", handoff_weekday: "monday", start_date: "2026-03-18" }); // a Wednesday
  expect(who(weekly, "2026-03-23T07:59:59Z")).toBeNull(); // first hand-off: Monday 23 March, 09:00 CET = 08:00Z
  expect(who(weekly, "2026-03-23T08:00:00Z")).toBe("ada");
  expect(who(weekly, "2026-03-30T06:59:59Z")).toBe("ada");
  expect(who(weekly, "2026-03-30T07:00:00Z")).toBe("bo"); // 09:00 CEST
  expect(nextHandoff(weekly, new Date("2026-03-24T00:00:00Z"))).toEqual({ at: new Date("2026-03-30T07:00:00Z"), member: B });

  const halves = spec("Europe/Berlin", { members: [A, B], shift: "hours", shift_hours: 12, handoff_time: "08:00", start_date: "2026-10-24" });
  // 24 Oct 08:00 CEST ada, 20:00 CEST bo, 25 Oct 08:00 CET (07:00Z, 13 hours later) ada, 20:00 CET bo.
  expect(who(halves, "2026-10-24T06:00:00Z")).toBe("ada");
  expect(who(halves, "2026-10-24T18:00:00Z")).toBe("bo");
  expect(who(halves, "2026-10-25T06:59:59Z")).toBe("bo");
  expect(who(halves, "2026-10-25T07:00:00Z")).toBe("ada");
  expect(who(halves, "2026-10-25T19:00:00Z")).toBe("bo");
});

test("an override covers its range (the later one wins where two overlap), and the next hand-off sees it", () => {
  const s = spec("UTC", {}, [
    { starts_at: "2026-10-21T12:00:00Z", ends_at: "2026-10-22T12:00:00Z", member: D },
    { starts_at: "2026-10-22T00:00:00Z", ends_at: "2026-10-22T06:00:00Z", member: A },
  ]);
  expect(who(s, "2026-10-21T11:59:59Z")).toBe("bo");
  expect(onCallAt(s, new Date("2026-10-21T12:00:00Z"))).toMatchObject({ member: D, source: "override", shift: { index: 1 } });
  expect(who(s, "2026-10-22T03:00:00Z")).toBe("ada");
  expect(who(s, "2026-10-22T09:00:00Z")).toBe("di"); // the rotation's 09:00 hand-off to cy is under the first override
  expect(who(s, "2026-10-22T12:00:00Z")).toBe("cy");
  expect(nextHandoff(s, new Date("2026-10-21T10:00:00Z"))).toEqual({ at: new Date("2026-10-21T12:00:00Z"), member: D });
  expect(nextHandoff(s, new Date("2026-10-22T07:00:00Z"))).toEqual({ at: new Date("2026-10-22T12:00:00Z"), member: C });
  // One member and no override ahead: nobody else is ever on call.
  expect(nextHandoff(spec("UTC", { members: [A] }), new Date("2026-10-23T00:00:00Z"))).toBeNull();
});

test("a notify_on_call reply mentions the member's user on the item's provider, or says why it mentions nobody", () => {
  const step = { type: "notify_on_call" as const, schedule_id: "sch_01kaq3m2b4c5d6e7f8g9h0jkmn" };
  const s = spec("UTC", { members: [A, { name: "Eve", chat_users: [{ provider: "teams", user_id: "aad-eve" }] }] });
  const at = (iso: string) => new Date(iso);
  expect(onCallReply(step, s, "slack", at("2026-10-20T10:00:00Z"))).toEqual({
    text: "This item is still open and nobody has acknowledged it.", mentions: [{ kind: "user", id: "U0ADA0001", name: "ada" }],
    data: { schedule_id: step.schedule_id, on_call: "ada", source: "rotation", user_id: "U0ADA0001" },
  });
  // Eve's day: she has no Slack user, so a Slack item's reply mentions nobody and says so (her name stays out of the text).
  const noUser = onCallReply({ ...step, message: "Still open." }, s, "slack", at("2026-10-21T10:00:00Z"));
  expect(noUser).toMatchObject({ text: "Still open. (Whoever is on call has no slack user in the schedule.)", mentions: [], data: { on_call: "Eve", why: "no slack user" } });
  expect(onCallReply(step, s, "teams", at("2026-10-21T10:00:00Z")).mentions).toEqual([{ kind: "user", id: "aad-eve", name: "Eve" }]);
  expect(onCallReply(step, s, "slack", at("2026-10-19T10:00:00Z"))).toMatchObject({ mentions: [], data: { on_call: null, why: "nobody on call" } });
  expect(onCallReply(step, null, "slack", at("2026-10-21T10:00:00Z"))).toMatchObject({ mentions: [], data: { why: "schedule deleted" } });
});
