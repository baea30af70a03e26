// YouTube quotas reset at midnight Pacific time, so quota days are calendar days in America/Los_Angeles, with their
// DST changes (a 23-hour day in March, a 25-hour day in November). Intl does the zone arithmetic; no fixed offsets.

const ZONE = "America/Los_Angeles";

const parts = new Intl.DateTimeFormat("en-US", {
  timeZone: ZONE, hourCycle: "h23",
  year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit",
});

function wallClock(at: Date) {
  const p = Object.fromEntries(parts.formatToParts(at).map((x) => [x.type, Number(x.value)]));
  return { y: p.year, m: p.month, d: p.day, h: p.hour, min: p.minute, s: p.second };
}

/** The Pacific calendar day `at` falls in, as YYYY-MM-DD (the key of a quota day). */
export function pacificDay(at: Date): string {
  const { y, m, d } = wallClock(at);
  return `${y}-${String(m).padStart(2, "0")}-${String(d).padStart(2, "0")}`;
}

/** Pacific offset from UTC at `instant` (ms since epoch), in ms: -8 h in winter, -7 h in summer. */
function offsetAt(instant: number): number {
  const w = wallClock(new Date(instant));
  return Date.UTC(w.y, w.m - 1, w.d, w.h, w.min, w.s) - Math.floor(instant / 1000) * 1000;
}

/** The first midnight in Los Angeles after `at`: when the current quota day ends. */
export function nextPacificMidnight(at: Date): Date {
  const { y, m, d } = wallClock(at);
  const wall = Date.UTC(y, m - 1, d + 1); // tomorrow 00:00 on the wall clock, read as if it were UTC
  // The instant `wall` is 16:00 or 17:00 of today in Los Angeles, and clocks there change at 02:00, so the offset in
  // force then is still the one in force at the coming midnight: one correction is exact, DST days included.
  return new Date(wall - offsetAt(wall));
}
