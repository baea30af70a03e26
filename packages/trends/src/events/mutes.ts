import rrule from "rrule";
import { categoryWithin, type TrendEvent } from "@trendgate/contracts";
import type { MuteRow } from "@trendgate/db";

// Whether a trend event is muted: one rule for the worker that routes events and the API that shows a mute's
// state. A mute holds back every push of a matching event (webhooks, chat and the operator queue, workflow
// pushes); detection, the trend list and the stream are untouched.

export type MuteRule = Pick<MuteRow, "id" | "topic" | "category" | "startsAt" | "endsAt" | "rrule" | "windowMinutes">;

// A rule is parsed once per text and start, not once per event it is checked against (a batch holds thousands).
const parsed = new Map<string, rrule.RRule | rrule.RRuleSet>();
function ruleOf(text: string, startsAt: Date) {
  const key = `${startsAt.toISOString()} ${text}`;
  let rule = parsed.get(key);
  if (!rule) {
    rule = rrule.rrulestr(text.replace(/^RRULE:/, ""), { dtstart: startsAt });
    if (parsed.size >= 1000) parsed.clear();
    parsed.set(key, rule);
  }
  return rule;
}

/** Whether the mute holds events back at `now`: inside [starts_at, ends_at), and for a rule, inside an occurrence's window. */
export function isMuteActive(m: MuteRule, now: Date): boolean {
  if (now < m.startsAt || (m.endsAt && now >= m.endsAt)) return false;
  if (!m.rrule) return true;
  const last = ruleOf(m.rrule, m.startsAt).before(now, true);
  return !!last && now.getTime() < last.getTime() + (m.windowMinutes ?? 0) * 60_000;
}

/** The rule text, checked as the library reads it: a message when it cannot be used, else null. */
const RANGES: Record<string, [number, number]> = { BYHOUR: [0, 23], BYMINUTE: [0, 59], BYSECOND: [0, 59], BYMONTH: [1, 12], BYMONTHDAY: [-31, 31] };

export function ruleProblem(text: string, startsAt: Date): string | null {
  // The library accepts out-of-range values silently; RFC 5545 does not.
  for (const part of text.replace(/^RRULE:/, "").split(";")) {
    const [name, values] = part.split("=");
    const range = RANGES[name];
    if (range && values.split(",").some((v) => !/^-?\d+$/.test(v) || +v < range[0] || +v > range[1] || +v === 0 && name === "BYMONTHDAY")) {
      return `${name} must be within ${range[0]}..${range[1]}`;
    }
  }
  try {
    const rule = rrule.rrulestr(text.replace(/^RRULE:/, ""), { dtstart: startsAt });
    return rule.after(startsAt, true) ? null : "the rule has no occurrence from now on";
  } catch (err) {
    return `not a valid RRULE: ${(err as Error).message}`;
  }
}

const matches = (m: MuteRule, e: Pick<TrendEvent, "trend_name" | "category">) =>
  m.topic !== null ? m.topic.toLowerCase() === e.trend_name.toLowerCase() : m.category !== null && categoryWithin(e.category, m.category);

/** The mutes of `mutes` that hold `event` back at `now`. */
export const mutesHolding = (mutes: readonly MuteRule[], event: Pick<TrendEvent, "trend_name" | "category">, now: Date) =>
  mutes.filter((m) => matches(m, event) && isMuteActive(m, now));
