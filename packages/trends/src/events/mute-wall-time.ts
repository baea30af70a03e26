// A mute's rule is expanded in wall-clock time (the rrule library's "floating" dates: a Date whose UTC fields hold the
// local time) and each occurrence is then placed in its time zone here. The library's own `tzid` option is not used:
// it converts through the process's local time zone, so its answers would depend on the machine's TZ setting.

const DAY = 86_400_000;
const formats = new Map<string, Intl.DateTimeFormat>();
function format(zone: string) {
  let f = formats.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: zone, hourCycle: "h23", year: "numeric", month: "numeric", day: "numeric", hour: "numeric", minute: "numeric", second: "numeric",
    });
    formats.set(zone, f);
  }
  return f;
}

/** The wall-clock time in `zone` at `instant`, as a floating date. */
export function toWallTime(instant: Date, zone: string): Date {
  if (zone === "UTC") return instant;
  const p: Record<string, number> = {};
  for (const part of format(zone).formatToParts(instant)) p[part.type] = +part.value;
  return new Date(Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second, instant.getUTCMilliseconds()));
}

const offsetAt = (t: number, zone: string) => toWallTime(new Date(t), zone).getTime() - t;

/**
 * The instant a floating date means in `zone`, as RFC 5545 reads local times: one that occurs twice (clocks going
 * back) is the first; one that is skipped (clocks going forward) is read with the offset before the change, so it
 * lands `shift` ms after the same wall time's place (02:30 on that night in Berlin is 03:30 CEST, shift one hour).
 */
export function fromWallTime(wall: Date, zone: string): { at: Date; shift: number } {
  if (zone === "UTC") return { at: wall, shift: 0 };
  const w = wall.getTime();
  // Offsets a day either side: zones change them at most once within two days.
  const before = offsetAt(w - DAY, zone), after = offsetAt(w + DAY, zone);
  if (before === after) return { at: new Date(w - before), shift: 0 };
  const valid = [w - before, w - after].filter((t) => toWallTime(new Date(t), zone).getTime() === w);
  if (valid.length) return { at: new Date(Math.min(...valid)), shift: 0 };
  return { at: new Date(w - before), shift: after - before };
}

/** Midnight of `instant`'s day in `zone`, as a floating date. */
export function wallMidnight(instant: Date, zone: string): Date {
  const wall = toWallTime(instant, zone);
  return new Date(Date.UTC(wall.getUTCFullYear(), wall.getUTCMonth(), wall.getUTCDate()));
}
