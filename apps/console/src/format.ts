// Times as "26 Nov 2026, 14:05" (local) and "3 min ago"; numbers for people.

const dateTime = new Intl.DateTimeFormat("en-GB", { day: "numeric", month: "short", year: "numeric", hour: "2-digit", minute: "2-digit" });
const number = new Intl.NumberFormat("en-GB", { maximumFractionDigits: 1 });

export function formatTime(iso: string): string {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso : dateTime.format(t);
}

export function relativeTime(iso: string, now = Date.now()): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const s = Math.round((t - now) / 1000);
  const a = Math.abs(s);
  const say = (n: number, unit: string) => (s < 0 ? `${n} ${unit} ago` : `in ${n} ${unit}`);
  if (a < 45) return s < 0 ? "just now" : "in a moment";
  if (a < 3600) return say(Math.round(a / 60), "min");
  if (a < 86_400) { const h = Math.round(a / 3600); return say(h, h === 1 ? "hour" : "hours"); }
  const d = Math.round(a / 86_400);
  return d < 30 ? say(d, d === 1 ? "day" : "days") : formatTime(iso);
}

export const formatNumber = (n: number) => number.format(n);

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${number.format(n / 1024)} KB`;
  if (n < 1024 ** 3) return `${number.format(n / 1024 / 1024)} MB`;
  return `${number.format(n / 1024 ** 3)} GB`;
}

export const formatDuration = (ms: number) => (ms < 1000 ? `${ms} ms` : `${number.format(ms / 1000)} s`);

/** A span of seconds for people: "none", "45 s", "10 min", "2 h", "7 days". */
export function formatSeconds(s: number): string {
  if (s <= 0) return "none";
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${number.format(s / 60)} min`;
  if (s < 86_400) return `${number.format(s / 3600)} h`;
  return plural(Number(number.format(s / 86_400)), "day");
}

/** A datetime-local input's value ("2026-11-26T14:05") for an instant, in local time. */
export function toLocalInput(t: number): string {
  const d = new Date(t);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** A datetime-local input's value as an ISO instant (UTC), or undefined when empty or invalid. */
export function fromLocalInput(v: string): string | undefined {
  if (!v) return undefined;
  const t = new Date(v).getTime();
  return Number.isNaN(t) ? undefined : new Date(t).toISOString();
}

/** YYYY-MM-DD of a local day `daysAgo` days before today. */
export function isoDay(daysAgo = 0): string {
  const d = new Date();
  d.setDate(d.getDate() - daysAgo);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
}

/** Micros (a decimal string) as an amount: "12345678" -> "12.35". */
export function formatMicros(micros: string | null, currency?: string): string {
  if (micros === null) return "—";
  const n = Number(micros) / 1_000_000;
  const s = n.toLocaleString("en-GB", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  return currency ? `${s} ${currency}` : s;
}

export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** A description as a sentence: its first letter in upper case (the contracts' descriptions start in lower case). */
export const sentence = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

const day = new Intl.DateTimeFormat("en-GB", { weekday: "short", day: "numeric", month: "short", timeZone: "UTC" });
/** A UTC calendar day ("2026-11-20") as "Fri 20 Nov". */
export function formatDay(date: string): string {
  const t = Date.parse(`${date}T00:00:00Z`);
  return Number.isNaN(t) ? date : day.format(t);
}
