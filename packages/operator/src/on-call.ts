import type { OnCallMember, OnCallOverride, OnCallRotation } from "@trendgate/contracts";
import { fromWallTime, toWallTime } from "@trendgate/trends";
import type { OnCallScheduleRow } from "@trendgate/db";

// Who is on call at an instant: the rotation's shift then (members in turn, each shift starting at the hand-off's
// local time in the schedule's zone, so 09:00 stays 09:00 across daylight-saving changes), unless an override covers
// that instant (the later one in the list wins where they overlap). Shifts are counted in local time: shift k starts
// at the first hand-off's wall time plus k days, weeks or shift_hours, placed in the zone by the mutes' own
// wall-time conversion (a skipped local time is read with the offset before the change, a repeated one is the first).

export interface OnCallScheduleSpec {
  timeZone: string;
  rotation: OnCallRotation;
  overrides: OnCallOverride[];
}

export interface OnCallAnswer {
  member: OnCallMember | null;
  source: "rotation" | "override" | null;
  /** The rotation's shift at that instant (also under an override); null before the first hand-off. */
  shift: { index: number; startedAt: Date; endsAt: Date } | null;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const WEEKDAY_INDEX = { sunday: 0, monday: 1, tuesday: 2, wednesday: 3, thursday: 4, friday: 5, saturday: 6 } as const;

/** The first hand-off as a floating date (UTC fields hold the local time), and the shift length in local time. */
function firstHandoff(r: OnCallRotation): { wall: number; step: number } {
  const [y, m, d] = r.start_date.split("-").map(Number);
  const [hh, mm] = r.handoff_time.split(":").map(Number);
  let wall = Date.UTC(y, m - 1, d, hh, mm);
  if (r.shift === "weekly") {
    const want = WEEKDAY_INDEX[r.handoff_weekday ?? "monday"];
    wall += ((want - new Date(wall).getUTCDay() + 7) % 7) * DAY;
  }
  const step = r.shift === "daily" ? DAY : r.shift === "weekly" ? 7 * DAY : (r.shift_hours ?? 24) * HOUR;
  return { wall, step };
}

/** The rotation's shift at `at`: its index (negative: before the first hand-off) and the instants it starts and ends. */
function shiftAt(s: OnCallScheduleSpec, at: Date): { index: number; startedAt: Date; endsAt: Date } {
  const { wall, step } = firstHandoff(s.rotation);
  const start = (k: number) => fromWallTime(new Date(wall + k * step), s.timeZone).at.getTime();
  const t = at.getTime();
  // A guess from local time, then corrected by the real instants (a hand-off in a shifted or repeated hour).
  let k = Math.floor((toWallTime(at, s.timeZone).getTime() - wall) / step);
  while (start(k + 1) <= t) k++;
  while (start(k) > t) k--;
  return { index: k, startedAt: new Date(start(k)), endsAt: new Date(start(k + 1)) };
}

/** Who is on call at `at`. */
export function onCallAt(s: OnCallScheduleSpec, at: Date): OnCallAnswer {
  const shift = shiftAt(s, at);
  const t = at.getTime();
  const override = s.overrides.findLast((o) => Date.parse(o.starts_at) <= t && t < Date.parse(o.ends_at));
  const started = shift.index >= 0 ? shift : null;
  if (override) return { member: override.member, source: "override", shift: started };
  const members = s.rotation.members;
  return started ? { member: members[started.index % members.length], source: "rotation", shift: started } : { member: null, source: null, shift: null };
}

const samePerson = (a: OnCallMember | null, b: OnCallMember | null) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The next instant after `at` someone else is on call (a hand-off, an override starting or ending), and who; null
 * when nobody changes within `horizonMs` (a rotation of one member and no override ahead).
 */
export function nextHandoff(s: OnCallScheduleSpec, at: Date, horizonMs = 366 * DAY): { at: Date; member: OnCallMember | null } | null {
  const now = onCallAt(s, at).member;
  const end = at.getTime() + horizonMs;
  const edges = s.overrides.flatMap((o) => [Date.parse(o.starts_at), Date.parse(o.ends_at)]);
  let t = at.getTime();
  // Each round moves to the next edge: a hand-off or an override's start or end (bounded by the horizon).
  for (let round = 0; round < 10_000 && t < end; round++) {
    const shift = shiftAt(s, new Date(t));
    // One member, started, no override ahead: nobody else comes (skips walking a year of shifts).
    if (s.rotation.members.length === 1 && shift.index >= 0 && !edges.some((e) => e > t)) return null;
    const handoff = shift.endsAt.getTime();
    t = Math.min(handoff, ...edges.filter((e) => e > t));
    if (t > end) break;
    const who = onCallAt(s, new Date(t)).member;
    if (!samePerson(who, now)) return { at: new Date(t), member: who };
  }
  return null;
}

/** The user a chat provider mentions for `member`, or null when the member has none there. */
export const chatUserOf = (member: OnCallMember | null, provider: string) => member?.chat_users.find((u) => u.provider === provider) ?? null;

/** A stored schedule as the function reads it (its rotation and overrides were checked by the API's contract). */
export const scheduleSpec = (row: Pick<OnCallScheduleRow, "timeZone" | "rotation" | "overrides">): OnCallScheduleSpec =>
  ({ timeZone: row.timeZone, rotation: row.rotation as OnCallRotation, overrides: (row.overrides ?? []) as OnCallOverride[] });
