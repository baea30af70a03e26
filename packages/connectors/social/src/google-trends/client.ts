import type { ProviderContext } from "../types.ts";
import { ProviderError } from "../types.ts";
import { trendsHttpError, trendsOperationError } from "./errors.ts";
import { assessMomentum, type MomentumResult, type MomentumRule, type TrendPoint } from "./momentum.ts";

// The official Google Trends API (alpha since July 2025, open to approved testers only: a project outside the alpha
// gets 403 and the connection shows needs_reauth). No public reference exists, so the wire format below is an
// ASSUMPTION taken from one public tester script, and the stand-in in tests only mirrors that assumption: until a
// tester account confirms it, treat validations as unverified. Everything that depends on it is in this file:
// - ctx.baseUrl is https://searchtrends.googleapis.com, auth is an OAuth bearer token with scope
//   https://www.googleapis.com/auth/searchtrends;
// - POST {base}/v1alpha:fetchTimeSeries with {spec:{expression:{terms:[{value, type:"BROAD"}]}, geo?:{type, code},
//   timeRange:{startTime, endTime} (RFC 3339), timeResolution}} returns a long-running operation {name, done};
// - GET {base}/v1alpha/{name} (name like "operations/abc") until done, then
//   response.points[] = {time (RFC 3339), searchInterest, scaledSearchInterest, isPartial}, or error (google.rpc.Status).

export const TRENDS_PATHS = {
  fetchTimeSeries: "/v1alpha:fetchTimeSeries",
  operation: (name: string) => `/v1alpha/${name.split("/").map(encodeURIComponent).join("/")}`,
};

export type TrendsResolution = "DAY" | "WEEK" | "MONTH" | "YEAR";

export interface TimeSeriesQuery {
  term: string;
  /** e.g. {type: "COUNTRY", code: "US"}; omitted means worldwide. */
  geo?: { type: string; code: string };
  start: Date;
  end: Date;
  resolution: TrendsResolution;
}

export interface TrendsPollOptions {
  pollIntervalMs: number;
  /** Give up (unavailable) when the operation is not done by then; it can be resumed with pollOperation(name). */
  maxWaitMs: number;
  /** Keep partial points (dropped by default: they are revised later). */
  includePartial?: boolean;
}

export interface MomentumQuery extends MomentumRule {
  term: string;
  geo?: TimeSeriesQuery["geo"];
  /** DAY by default; WEEK needs windows of several weeks to hold enough points. */
  resolution?: TrendsResolution;
  /** End of the range asked for; default now. */
  end?: Date;
}

/** Trends data ends about two days back: ask for a few extra days so the windows, anchored at the newest point, are full. */
const LAG_DAYS = 3;
const DAY = 86_400_000;

export class GoogleTrendsClient {
  private readonly now: () => Date;

  constructor(private readonly ctx: ProviderContext, opts: { now?: () => Date } = {}) {
    this.now = opts.now ?? (() => new Date());
  }

  /** Interest over time for one term: starts the operation and polls it until done. */
  async fetchTimeSeries(q: TimeSeriesQuery, token: string, poll: TrendsPollOptions): Promise<TrendPoint[]> {
    const spec = {
      expression: { terms: [{ value: q.term, type: "BROAD" }] },
      ...(q.geo ? { geo: q.geo } : {}),
      timeRange: { startTime: q.start.toISOString(), endTime: q.end.toISOString() },
      timeResolution: q.resolution,
    };
    const op = await this.call("POST", TRENDS_PATHS.fetchTimeSeries, token, JSON.stringify({ spec }));
    const response = op.done ? this.result(op) : await this.pollOperation(op.name, token, poll);
    const points = (response?.points ?? []).map(toPoint);
    return poll.includePartial ? points : points.filter((p: TrendPoint) => !p.isPartial);
  }

  /** Polls an operation until done and returns its response; public so a timed-out fetch can be resumed. */
  async pollOperation(name: string, token: string, poll: Pick<TrendsPollOptions, "pollIntervalMs" | "maxWaitMs">): Promise<any> {
    if (typeof name !== "string" || !name) throw new ProviderError("google-trends", "unavailable", "operation without a name", { status: null });
    const deadline = Date.now() + poll.maxWaitMs;
    for (;;) {
      const wait = Math.min(poll.pollIntervalMs, deadline - Date.now());
      if (wait < 0) break;
      await new Promise((r) => setTimeout(r, wait));
      const op = await this.call("GET", TRENDS_PATHS.operation(name), token);
      if (op.done) return this.result(op);
      if (Date.now() >= deadline) break;
    }
    throw new ProviderError("google-trends", "unavailable", `operation ${name} not done after ${poll.maxWaitMs} ms`, { status: null, providerCode: "OPERATION_PENDING" });
  }

  /**
   * Checks a detected trend against search interest over the last recentDays + baselineDays (plus a few days of
   * Trends' reporting lag). The verdict rule is assessMomentum's (momentum.ts): confirmed at >= 1.5x the baseline
   * mean, refuted at <= 1.1x, inconclusive in between or with fewer than 3 complete points per window.
   */
  async validateMomentum(q: MomentumQuery, token: string, poll: TrendsPollOptions): Promise<MomentumResult> {
    const end = q.end ?? this.now();
    const start = new Date(end.getTime() - (q.recentDays + q.baselineDays + LAG_DAYS) * DAY);
    const points = await this.fetchTimeSeries({ term: q.term, geo: q.geo, start, end, resolution: q.resolution ?? "DAY" }, token, { ...poll, includePartial: false });
    return assessMomentum(points, q);
  }

  private result(op: any): any {
    if (op.error) throw trendsOperationError(op.name ?? "?", op.error);
    return op.response;
  }

  private async call(method: "GET" | "POST", path: string, token: string, body?: string): Promise<any> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: "application/json", ...(body ? { "content-type": "application/json" } : {}) };
    const r = await this.ctx.request(method, this.ctx.baseUrl.replace(/\/+$/, "") + path, { body, headers });
    if (r.error || r.status === null || r.status < 200 || r.status >= 300) throw trendsHttpError(r);
    try {
      return JSON.parse(r.body);
    } catch {
      throw new ProviderError("google-trends", "unavailable", `unreadable response from ${path}`, { status: r.status });
    }
  }
}

/** proto3 JSON may send numbers as strings; accept both. */
function toPoint(p: any): TrendPoint {
  const scaled = p.scaledSearchInterest === undefined ? null : Number(p.scaledSearchInterest);
  return { time: new Date(p.time), searchInterest: Number(p.searchInterest ?? 0), scaledSearchInterest: scaled, isPartial: p.isPartial === true };
}
