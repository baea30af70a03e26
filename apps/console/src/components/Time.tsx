import { formatTime, relativeTime } from "../format.ts";

/** An instant as local "26 Nov 2026, 14:05" (or "3 min ago" with `relative`), the full ISO in its title. */
export function Time({ iso, relative = false, empty = "—" }: { iso: string | null | undefined; relative?: boolean; empty?: string }) {
  if (!iso) return <span class="muted">{empty}</span>;
  return <time dateTime={iso} title={iso}>{relative ? relativeTime(iso) : formatTime(iso)}</time>;
}
