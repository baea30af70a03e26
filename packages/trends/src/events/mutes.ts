import rrule from "rrule";
import { categoryWithin, type TrendEvent } from "@trendgate/contracts";
import type { MuteRow } from "@trendgate/db";
import { fromWallTime, toWallTime, wallMidnight } from "./mute-wall-time.ts";

// Whether a trend event is muted: one rule for the worker that routes events and the API that shows a mute's
// state. A mute holds back every push of a matching event (webhooks, chat and the operator queue, workflow
// pushes); detection, the trend list and the stream are untouched.

export type MuteRule = Pick<MuteRow, "id" | "topic" | "category" | "startsAt" | "endsAt" | "rrule" | "windowMinutes" | "timeZone">;

// ---- Expanding a recurring rule, with bounds -------------------------------------------------------------------------
// The rrule library (2.8.1) walks a rule period by period from its start and stops only on an occurrence past what was
// asked, past UNTIL, after COUNT occurrences, or after the year 9999: its iterator callback, `count` and `until` are
// consulted on occurrences only. A rule that never produces one (FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30) so walks ~2.9
// million days: 10-40 s of the only thread. Every expansion here goes through `walk`, which counts the library's own
// reads of the rule's options (it reads `interval` twice a period, `bymonth` once a day it filters, `tzid` once an
// occurrence it emits) and stops it after RULE_BOUNDS.steps of them or RULE_BOUNDS.ms milliseconds, whichever comes
// first; a rule whose next occurrence is not found within that is treated as never occurring. The one loop the count
// cannot reach, FREQ=HOURLY whose INTERVAL never lands on a BYHOUR hour (it spins forever inside one step), is refused
// before the library is asked. (The library is pinned in package.json; tests/gateway/mute-rrule-bounds.test.ts fails if
// a version reads its options otherwise.)

/**
 * How far a rule is expanded: a new rule needs an occurrence within `horizonYears`; a walk stops at `steps` or `ms`.
 * The step count decides (the same answer on a busy machine as on an idle one; 50,000 steps take a few milliseconds);
 * the clock is only a backstop for a library that reads its options otherwise, so it sits far above the steps' time.
 */
export const RULE_BOUNDS = { horizonYears: 5, steps: 50_000, ms: 1_000 } as const;

type Options = rrule.RRule["options"];
// What each counted read costs: a period does more work than a day or an occurrence.
const METERED: [keyof Options, number][] = [["interval", 4], ["bymonth", 1], ["tzid", 1]];

const OUT_OF_BOUNDS = new Error("rrule expansion out of bounds");
const budget = { steps: 0, deadline: 0, reads: 0, timedOut: false };
function tick(weight: number) {
  budget.steps -= weight;
  if (budget.steps < 0) throw OUT_OF_BOUNDS;
  if ((++budget.reads & 255) === 0 && performance.now() > budget.deadline) {
    budget.timedOut = true;
    throw OUT_OF_BOUNDS;
  }
}

/** The parsed options, starting at `dtstart`, with the reads the library makes per period, day and occurrence counted. */
function metered(options: Options, dtstart: Date): Options {
  const o = { ...options, dtstart };
  for (const [key, weight] of METERED) {
    const value = o[key];
    Object.defineProperty(o, key, { enumerable: true, get: () => (tick(weight), value) });
  }
  return o;
}

// ---- Time zones ----------------------------------------------------------------------------------------------------
// A rule is expanded in wall-clock time (floating dates, see mute-wall-time.ts) from midnight of the mute's first day
// in its time zone: the times a rule does not give are 0 (BYHOUR=18 is 18:00:00; no BYHOUR is 00:00), whatever minute
// the mute was created at, and 18:00 stays 18:00 across daylight-saving changes. Each occurrence is then placed in the
// zone: `at` and `known` below are instants; `seen`, `dtstart` and the dates the library gives are wall times.

/** An occurrence: its wall time (where the library's walks start) and the instant it is in the mute's time zone. */
interface Occurrence { wall: Date; at: Date }

interface Expansion {
  /** Carries the library's methods; its options are set for each walk. */
  readonly rule: rrule.RRule;
  /** As the library parsed them from the text and the rule's start (BYHOUR, BYDAY... filled in from the start). */
  readonly options: Options;
  readonly zone: string;
  /** Midnight of the mute's first day, in wall time. */
  readonly dtstart: Date;
  /**
   * Whether a walk may start at any occurrence instead of the mute's start and find the same occurrences from there
   * on: not with COUNT (it counts from the start), nor with BYSETPOS on weeks (a walk's first week is cut at its start).
   */
  readonly resumable: boolean;
  /** The latest occurrence seen (of a resumable rule), in wall time: walks start there. */
  seen: Date | null;
  /** For every instant in [from, next.at], the first occurrence at or after it is `next` (null: none, or out of bounds). */
  known: { from: number; next: Occurrence | null } | null;
}

const END_OF_TIME = new Date(8.64e15);

// No zone is more than this ahead of UTC: a wall time this far before an instant is before it in every zone.
const MAX_OFFSET = 86_400_000;

/** The first occurrence at or after `at`, walking from `from` (a wall time: the rule's start or one of its occurrences). */
function walk(e: Expansion, from: Date, at: Date): { next: Occurrence | null; stopped?: undefined } | { stopped: "steps" | "time" } {
  e.rule.options = metered(e.options, from);
  Object.assign(budget, { steps: RULE_BOUNDS.steps, deadline: performance.now() + RULE_BOUNDS.ms, reads: 0, timedOut: false });
  let next: Occurrence | null = null;
  let until = 0;
  try {
    e.rule.between(from, END_OF_TIME, true, (wall) => {
      const placed = wall.getTime() < at.getTime() - MAX_OFFSET ? null : fromWallTime(wall, e.zone);
      if (next) {
        // A skipped wall time is placed `shift` later: wall times up to that much after it may come first.
        if (placed && placed.at >= at && placed.at < next.at) next = { wall, at: placed.at };
        return wall.getTime() < until;
      }
      if (!placed || placed.at < at) { // kept by the library until the walk ends: at most one per step
        if (e.resumable && (!e.seen || wall > e.seen)) e.seen = wall;
        return true;
      }
      next = { wall, at: placed.at };
      until = wall.getTime() + placed.shift;
      return placed.shift > 0;
    });
    return { next };
  } catch (err) {
    if (err === OUT_OF_BOUNDS) return { stopped: budget.timedOut ? "time" : "steps" };
    throw err;
  }
}

// RFC 5545's ranges (the library accepts out-of-range values silently); a signed range excludes 0.
const RANGES: Record<string, [number, number]> = {
  BYHOUR: [0, 23], BYMINUTE: [0, 59], BYSECOND: [0, 59], BYMONTH: [1, 12], BYMONTHDAY: [-31, 31], BYYEARDAY: [-366, 366],
  BYWEEKNO: [-53, 53], BYSETPOS: [-366, 366], INTERVAL: [1, 1_000_000], COUNT: [1, 1_000_000],
};
// The parts a mute's rule takes: RFC 5545's, less what the mute gives itself (DTSTART, TZID: time_zone).
const PARTS = new Set(["FREQ", "UNTIL", "WKST", "BYDAY", ...Object.keys(RANGES)]);
const EXAMPLE = "FREQ=WEEKLY;BYDAY=SA,SU;BYHOUR=18";
const gcd = (a: number, b: number): number => (b ? gcd(b, a % b) : a);

function parse(text: string, startsAt: Date, zone: string): { problem: string } | { expansion: Expansion } {
  const body = text.replace(/^RRULE:/, "");
  for (const part of body.split(";")) {
    const [name, values = ""] = part.split("=");
    if (name === "TZID" || name === "DTSTART") return { problem: `${name} is not taken: give time_zone instead (the rule starts at midnight there), e.g. ${EXAMPLE}` };
    if (!PARTS.has(name)) return { problem: `${name} is not an RRULE part (FREQ, UNTIL, COUNT, INTERVAL, BYxxx, WKST), e.g. ${EXAMPLE}` };
    if (name === "WKST" && !/^(MO|TU|WE|TH|FR|SA|SU)$/.test(values)) return { problem: `WKST must be one of MO, TU, WE, TH, FR, SA, SU, e.g. ${EXAMPLE};WKST=MO` };
    const range = RANGES[name];
    const list = values.split(",");
    if (range && (list.some((v) => !/^[+-]?\d+$/.test(v) || +v < range[0] || +v > range[1] || (+v === 0 && range[0] < 0)) || ((name === "INTERVAL" || name === "COUNT") && list.length > 1))) {
      return { problem: `${name} must be ${name === "INTERVAL" || name === "COUNT" ? "a whole number" : "whole numbers"} within ${range[0]}..${range[1]}, e.g. ${EXAMPLE}` };
    }
  }
  const byday = /(?:^|;)BYDAY=([^;]*)/.exec(body)?.[1];
  if (byday !== undefined && !byday.split(",").every((d) => /^([+-]?([1-9]|[1-4]\d|5[0-3]))?(MO|TU|WE|TH|FR|SA|SU)$/.test(d))) {
    return { problem: `BYDAY must list days as MO, TU, WE, TH, FR, SA, SU, each optionally with a week number (1MO, -1FR), e.g. ${EXAMPLE}` };
  }
  let rule: rrule.RRule;
  const dtstart = wallMidnight(startsAt, zone);
  try {
    const options = rrule.RRule.parseString(body);
    // UNTIL is an instant (…Z); the library compares it with the wall times it walks.
    if (options.until) options.until = toWallTime(options.until, zone);
    rule = new rrule.RRule({ ...options, dtstart }, true);
  } catch {
    // The library's own messages name its internals, not the rule: say which part is wrong instead.
    const part = body.split(";").find((p) => { try { rrule.RRule.parseString(p); return false; } catch { return true; } });
    return { problem: part ? `not a valid RRULE part: ${part.slice(0, 60)} (a valid rule: ${EXAMPLE})` : `not a valid RRULE (RFC 5545), e.g. ${EXAMPLE}` };
  }
  const o = rule.options;
  if (!(o.freq >= rrule.RRule.YEARLY && o.freq <= rrule.RRule.HOURLY)) return { problem: `FREQ must be YEARLY, MONTHLY, WEEKLY, DAILY or HOURLY, e.g. ${EXAMPLE}` };
  // Each step adds INTERVAL hours: from the start hour it reaches only the hours congruent to it modulo gcd(INTERVAL, 24).
  if (o.freq === rrule.RRule.HOURLY && o.byhour?.length) {
    const step = gcd(o.interval, 24), start = dtstart.getUTCHours();
    if (!o.byhour.some((h) => (((h - start) % step) + step) % step === 0)) {
      return { problem: `counted from ${start}:00, every ${o.interval} hours never reaches a BYHOUR hour (it reaches ${start}:00 plus multiples of ${step} hours), e.g. FREQ=HOURLY;INTERVAL=${o.interval};BYHOUR=${(start + o.interval) % 24}` };
    }
  }
  const resumable = !o.count && !(o.freq === rrule.RRule.WEEKLY && o.bysetpos?.length);
  return { expansion: { rule, options: o, zone, dtstart, resumable, seen: null, known: null } };
}

// A rule is parsed once per text, start and zone, not once per event it is checked against (a batch holds thousands).
const parsed = new Map<string, ReturnType<typeof parse>>();
function parsedRule(text: string, startsAt: Date, zone: string) {
  const key = `${startsAt.toISOString()} ${zone} ${text}`;
  let p = parsed.get(key);
  if (!p) {
    p = parse(text, startsAt, zone);
    if (parsed.size >= 1000) parsed.clear();
    parsed.set(key, p);
  }
  return p;
}

/**
 * The first occurrence at or after `at` of a mute's rule (`text`, counted from midnight of `startsAt`'s day in `zone`:
 * see Time zones above): null when there is none, or none is found within RULE_BOUNDS (the rule is then treated as
 * never occurring). Every occurrence is computed here.
 * Checks at later and later instants (the worker's) mostly cost nothing: an answer holds until its occurrence, and a
 * walk starts at the latest occurrence seen, not at the mute's start. A rule whose walk from its start to `at` takes
 * more than the bound (hourly for years) reads as not occurring for a check or a few, each going further, until then.
 */
export function nextOccurrence(text: string, startsAt: Date, at: Date, zone = "UTC"): Date | null {
  const p = parsedRule(text, startsAt, zone);
  if ("problem" in p) return null;
  const e = p.expansion, t = at.getTime(), k = e.known;
  if (k && k.from <= t && (k.next === null || t <= k.next.at.getTime())) return k.next?.at ?? null;
  if (e.resumable && k?.next && k.next.at.getTime() <= t && (!e.seen || k.next.wall > e.seen)) e.seen = k.next.wall;
  const seen = e.seen;
  const from = e.resumable && seen && fromWallTime(seen, e.zone).at.getTime() <= t ? seen : e.dtstart;
  const w = walk(e, from, at);
  if (w.stopped === undefined) {
    e.known = { from: t, next: w.next };
    return w.next?.at ?? null;
  }
  // Out of bounds without getting any further than the walk before: never, from here on. (A slow moment, e.g. a
  // GC pause, is not the rule's doing: only the step count decides that.)
  if (w.stopped === "steps" && e.seen === seen && from === (seen ?? e.dtstart)) e.known = { from: t, next: null };
  return null;
}

/** Whether the mute holds events back at `now`: inside [starts_at, ends_at), and for a rule, inside an occurrence's window. */
export function isMuteActive(m: MuteRule, now: Date): boolean {
  if (now < m.startsAt || (m.endsAt && now >= m.endsAt)) return false;
  if (!m.rrule) return true;
  // An occurrence in (now - window, now]: the first one after now - window is not after now.
  const next = nextOccurrence(m.rrule, m.startsAt, new Date(now.getTime() - (m.windowMinutes ?? 0) * 60_000 + 1), m.timeZone);
  return next !== null && next <= now;
}

/**
 * The rule text, checked as the library reads it (in `zone`): a message when it cannot be used, else null. An
 * occurrence earlier on the first day whose window (`windowMinutes`) is still open at `startsAt` counts.
 */
export function ruleProblem(text: string, startsAt: Date, zone = "UTC", windowMinutes = 0): string | null {
  const p = parsedRule(text, startsAt, zone);
  if ("problem" in p) return p.problem;
  const next = nextOccurrence(text, startsAt, new Date(startsAt.getTime() - windowMinutes * 60_000 + 1), zone);
  const horizon = new Date(startsAt);
  horizon.setUTCFullYear(horizon.getUTCFullYear() + RULE_BOUNDS.horizonYears);
  return next && next <= horizon ? null : `the rule has no occurrence in the next ${RULE_BOUNDS.horizonYears} years (or none found within the expansion bound)`;
}

const matches = (m: MuteRule, e: Pick<TrendEvent, "trend_name" | "category">) =>
  m.topic !== null ? m.topic.toLowerCase() === e.trend_name.toLowerCase() : m.category !== null && categoryWithin(e.category, m.category);

/** The mutes of `mutes` that hold `event` back at `now`. */
export const mutesHolding = (mutes: readonly MuteRule[], event: Pick<TrendEvent, "trend_name" | "category">, now: Date) =>
  mutes.filter((m) => matches(m, event) && isMuteActive(m, now));
