import Holidays from "date-holidays";

// Holiday calendars (the date-holidays library: public and bank holidays and observances of ~200 countries and their
// regions, in each country's time zone). A holiday moves volumes everywhere at once (gift searches, greetings, quiet
// offices): the detector then asks every topic of the account for stronger evidence (HOLIDAY_EVIDENCE), as it does
// for a topic that feedback judged noisy.

/** The factor on the score thresholds during one of the account's holidays. */
export const HOLIDAY_EVIDENCE = 1.5;
/** The kinds of day that count (school holidays and optional days do not move a whole audience). */
const COUNTED = new Set(["public", "bank", "observance"]);

export interface HolidayCalendar {
  country: string;
  region: string | null;
}

const instances = new Map<string, Holidays>();
function calendarOf(c: HolidayCalendar): Holidays {
  const key = `${c.country}/${c.region ?? ""}`;
  let hd = instances.get(key);
  if (!hd) instances.set(key, (hd = c.region ? new Holidays(c.country, c.region) : new Holidays(c.country)));
  return hd;
}

/** Why a calendar is not one the library knows (a country code, then a region of it), or null. */
export function calendarProblem(c: HolidayCalendar): { field: "country" | "region"; message: string } | null {
  const countries = new Holidays().getCountries() as Record<string, string>;
  if (!countries[c.country]) return { field: "country", message: `unknown country code ${c.country} (ISO 3166-1 alpha-2, e.g. US, DE, JP)` };
  if (c.region) {
    const regions = (new Holidays().getStates(c.country) ?? {}) as Record<string, string>;
    if (!regions[c.region]) return { field: "region", message: `unknown region ${c.region} of ${c.country}${Object.keys(regions).length ? ` (one of ${Object.keys(regions).slice(0, 12).join(", ")}…)` : " (it has none)"}` };
  }
  return null;
}

/** The holiday in effect at `at` under the calendar, or null. */
export function holidayAt(c: HolidayCalendar, at: Date): { name: string; start: Date; end: Date } | null {
  const found = calendarOf(c).isHoliday(at);
  const h = found ? found.find((x) => COUNTED.has(x.type)) : undefined;
  return h ? { name: h.name, start: h.start, end: h.end } : null;
}

/** The calendar's counted holidays from `from`, the next `n` of them (this year and the next). */
export function upcomingHolidays(c: HolidayCalendar, from: Date, n: number) {
  const year = from.getUTCFullYear();
  const hd = calendarOf(c);
  return [...hd.getHolidays(year), ...hd.getHolidays(year + 1)]
    .filter((h) => COUNTED.has(h.type) && h.end > from)
    .slice(0, n)
    .map((h) => ({ name: h.name, type: h.type, start: h.start, end: h.end }));
}
