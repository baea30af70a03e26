import type { OutboundResult } from "@trendgate/delivery";

// The social/search connector kind's data types: a provider client turns a provider's API into observations of topics, which
// become signals (packages/contracts/src/signals.ts) for trend detection. One folder per provider under src/.

/** One observation of a topic by a provider, before it becomes a signal. */
export interface Observation {
  /** Provider's id for the item (post id, video id, ...): signals are deduplicated on (source, id). */
  externalId: string;
  /** The tracked term or topic this observation counts towards. */
  topic: string;
  /** Mentions or engagement it stands for (e.g. 1 post, or a video's view delta, or a search-interest value). */
  count: number;
  /** -1 (negative) to 1 (positive), when the provider gives text to score. */
  sentiment?: number;
  observedAt: Date;
  link?: string;
  text?: string;
}

/** Where a provider's quota stands after a call, from its headers or our own accounting. */
export interface QuotaState {
  limit: number | null;
  remaining: number | null;
  /** When the window resets. */
  resetAt: Date | null;
  /** Units this call cost (YouTube counts units, others count requests). */
  cost: number;
}

export interface Page<T> {
  items: T[];
  /** Pass back to get the next page; null when there is none. */
  next: string | null;
  quota: QuotaState;
}

// One error class for every connector: the kind's vocabulary lives in @trendgate/connector-core.
export { ProviderError, type ProviderErrorKind } from "@trendgate/connector-core";

/** What each provider client is given: where the provider lives and how to call out (the shared guarded client). */
export interface ProviderContext {
  baseUrl: string;
  request(method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE", url: string, init?: { body?: string; headers?: Record<string, string> }): Promise<OutboundResult>;
}
