import { parseRetryAfter } from "@trendgate/delivery";
import type { RateLimitRules } from "../manifest.ts";

// How long a provider asks us to wait, read from the headers its manifest's `rateLimit` names. Retry-After itself is
// parsed by the delivery package's one parser (seconds or an HTTP date), so every outbound path reads it alike.

/** What a provider that declares no rules is still taken to mean: the standard Retry-After header. */
const STANDARD: RateLimitRules = { retryAfterHeader: "retry-after" };

export type HeaderGet = (name: string) => string | null | undefined;

/**
 * Milliseconds to wait before calling again, when the answer says: its retry-after header first, else its reset
 * header (epoch seconds or seconds from now, by `resetUnit`; unstated, a value above 10^9 is taken as an epoch).
 */
export function waitFromRules(rules: RateLimitRules | undefined, get: HeaderGet, now = Date.now()): number | undefined {
  const r = rules ?? STANDARD;
  const seconds = r.retryAfterHeader ? parseRetryAfter(get(r.retryAfterHeader) ?? undefined) : null;
  if (seconds !== null) return seconds * 1000;
  const raw = r.resetHeader ? get(r.resetHeader) : null;
  const reset = raw == null || raw.trim() === "" ? NaN : Number(raw);
  if (!Number.isFinite(reset) || reset <= 0) return undefined;
  const epoch = r.resetUnit === "epoch_seconds" || (r.resetUnit === undefined && reset > 1e9);
  return epoch ? Math.max(0, reset * 1000 - now) : reset * 1000;
}
