import type { QuotaState } from "./types.ts";

// How a poll runs its searches under a provider's request window (X, Reddit): from where the last poll stopped,
// round-robin, so a limit reached part way never starves the later searches; and stopping before a search the
// window cannot pay for, instead of running into a 429.

/** The order of a poll's searches: indices 0..n-1 starting at `resumeAt` (where the last poll stopped), wrapping. */
export function rotation(n: number, resumeAt: number | undefined): number[] {
  const start = Number.isInteger(resumeAt) && resumeAt! >= 0 && resumeAt! < n ? resumeAt! : 0;
  return Array.from({ length: n }, (_, i) => (start + i) % n);
}

/**
 * When the window (as the last answer reported it) has fewer requests left than the next search may take (`need`,
 * its pages): the reset to wait for. Undefined when the search may run.
 */
export function pauseBefore(last: QuotaState | undefined, need: number, now = Date.now()): Date | undefined {
  if (!last || last.remaining === null || last.resetAt === null) return undefined;
  return last.remaining < need && last.resetAt.getTime() > now ? last.resetAt : undefined;
}

/** The window's reset time when the last call spent it (not even one request left): the next poll waits for it. */
export const spentUntil = (last: QuotaState) => pauseBefore(last, 1);
