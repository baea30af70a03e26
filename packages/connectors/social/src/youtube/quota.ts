import crypto from "node:crypto";
import { ProviderError, type QuotaState } from "../types.ts";
import { nextPacificMidnight, pacificDay } from "./pacific-day.ts";

// YouTube gives no quota headers, so we count units ourselves and refuse locally before a call would overdraw a
// bucket: an overdrawn project is cut off until midnight Pacific, and every call in between still costs.
// Google counts per Cloud project, so connections on one project keep one ledger (youtubeQuotaProject).

/**
 * The Cloud project whose quota a connection draws on: `project:<id or number>` when the connection names it, else
 * `key:<digest of the API key>`. Google does not tell an API key's project, but a key belongs to exactly one, so
 * connections with the same key share a ledger even unnamed.
 */
export function youtubeQuotaProject(credentials: Record<string, string>, options: { project?: string }): string {
  if (options.project) return `project:${options.project}`;
  return `key:${crypto.createHash("sha256").update(credentials.api_key ?? "").digest("hex").slice(0, 16)}`;
}

/** The API methods this connector calls. */
export type YouTubeMethod = "search.list" | "videos.list";

/** Where a method's units come from and how many one call costs. */
export interface YouTubeMethodCost { bucket: string; units: number }

export interface QuotaLedgerOptions {
  /** Units per Pacific day, per bucket. */
  limits?: Record<string, number>;
  /** Per-method cost; e.g. `{ "search.list": { bucket: "default", units: 100 } }` for projects on the older pricing. */
  costs?: Partial<Record<YouTubeMethod, YouTubeMethodCost>>;
  now?: () => Date;
}

/**
 * Current docs: search.list has its own bucket of 100 calls a day at 1 unit each; everything else shares 10,000
 * units a day, videos.list costing 1.
 */
export const YOUTUBE_QUOTA_LIMITS: Record<string, number> = { search: 100, default: 10_000 };
export const YOUTUBE_QUOTA_COSTS: Record<YouTubeMethod, YouTubeMethodCost> = {
  "search.list": { bucket: "search", units: 1 },
  "videos.list": { bucket: "default", units: 1 },
};

/** What snapshot() returns and restore() takes: units spent per bucket on one Pacific day. */
export interface QuotaSnapshot { day: string; spent: Record<string, number> }

export class QuotaLedger {
  private readonly limits: Record<string, number>;
  private readonly costs: Record<YouTubeMethod, YouTubeMethodCost>;
  readonly now: () => Date;
  private day = "";
  private spent: Record<string, number> = {};

  constructor(opts: QuotaLedgerOptions = {}) {
    this.limits = { ...YOUTUBE_QUOTA_LIMITS, ...opts.limits };
    this.costs = { ...YOUTUBE_QUOTA_COSTS, ...opts.costs };
    this.now = opts.now ?? (() => new Date());
    for (const [method, c] of Object.entries(this.costs)) {
      if (this.limits[c.bucket] === undefined) throw new Error(`quota bucket "${c.bucket}" of ${method} has no limit`);
    }
  }

  /** Where the method's bucket stands; `cost` is what `calls` calls would cost. Does not spend. */
  state(method: YouTubeMethod, calls = 1): QuotaState {
    const { bucket, units } = this.costs[method];
    const limit = this.limits[bucket];
    return { limit, remaining: Math.max(0, limit - this.spentToday(bucket)), resetAt: nextPacificMidnight(this.now()), cost: units * calls };
  }

  /** Throws quota_exhausted, without spending, when `calls` calls would overdraw the method's bucket. */
  ensure(method: YouTubeMethod, calls = 1): void {
    const s = this.state(method, calls);
    if (s.cost <= s.remaining!) return;
    const { bucket } = this.costs[method];
    throw new ProviderError("youtube", "quota_exhausted",
      `${method} needs ${s.cost} unit(s) but only ${s.remaining} of the ${s.limit} daily "${bucket}" units are left`,
      { status: null, resetAt: s.resetAt!, providerCode: "localQuotaExceeded" });
  }

  /**
   * Charges one call, after ensure(). Charged before the call and kept whatever its outcome: YouTube charges failed
   * and invalid requests too, and over-counting a call lost on the network is the safe side.
   */
  spend(method: YouTubeMethod): QuotaState {
    this.ensure(method);
    const { bucket, units } = this.costs[method];
    this.spentToday(bucket);
    this.spent[bucket] = (this.spent[bucket] ?? 0) + units;
    return this.state(method);
  }

  /** YouTube said quotaExceeded: our count was behind (another client, or a restart), so stop calling until reset. */
  exhaust(method: YouTubeMethod): QuotaState {
    const { bucket } = this.costs[method];
    this.spentToday(bucket);
    this.spent[bucket] = Math.max(this.spent[bucket] ?? 0, this.limits[bucket]);
    return this.state(method, 0);
  }

  snapshot(): QuotaSnapshot {
    this.roll();
    return { day: this.day, spent: { ...this.spent } };
  }

  /** Takes a snapshot back; one from an earlier Pacific day is ignored, since that day's quota has been reset. */
  restore(s: QuotaSnapshot): void {
    this.roll();
    if (s.day === this.day) this.spent = { ...s.spent };
  }

  private roll(): void {
    const today = pacificDay(this.now());
    if (today !== this.day) { this.day = today; this.spent = {}; }
  }

  private spentToday(bucket: string): number {
    this.roll();
    return this.spent[bucket] ?? 0;
  }
}
