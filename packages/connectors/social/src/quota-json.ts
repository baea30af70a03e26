import type { QuotaState } from "./types.ts";

// How polls record a provider's quota on the connection (the status' `quota.last`).

export const quotaJson = (q: QuotaState) => ({ limit: q.limit, remaining: q.remaining, reset_at: q.resetAt?.toISOString() ?? null, cost: q.cost });

/** The window's reset time when the last call spent it: the next poll waits for it. */
export const spentUntil = (q: QuotaState) => (q.remaining === 0 && q.resetAt && q.resetAt.getTime() > Date.now() ? q.resetAt : undefined);
