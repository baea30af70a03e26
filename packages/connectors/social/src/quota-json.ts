import type { QuotaState } from "./types.ts";

// How polls record a provider's quota on the connection (the status' `quota.last`).

export const quotaJson = (q: QuotaState) => ({ limit: q.limit, remaining: q.remaining, reset_at: q.resetAt?.toISOString() ?? null, cost: q.cost });

