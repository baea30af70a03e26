import sift from "sift";
import { severityRank, type TrendEvent, type WebhookFilter } from "@trendgate/contracts";

// A subscription's filter run against an event. The query was checked when the subscription was saved
// (matchProblems in @trendgate/contracts); sift runs it with only those operators, so a stored query can never reach
// $where or $regex.

// sift is CommonJS: its operations hang off the default export.
const { $and, $eq, $exists, $gt, $gte, $in, $lt, $lte, $ne, $nin, $nor, $or, createQueryTester } = sift as unknown as typeof import("sift");
const OPERATIONS = { $and, $eq, $exists, $gt, $gte, $in, $lt, $lte, $ne, $nin, $nor, $or };

/** What a query sees of an event: the fields matchProblems allows, nothing else. */
const view = (e: TrendEvent) => ({
  type: e.type, trend_id: e.trend_id, trend_name: e.trend_name, category: e.category, severity: e.severity,
  previous_severity: e.previous_severity, velocity: e.velocity, previous_velocity: e.previous_velocity,
  anomaly_score: e.anomaly_score, sentiment: e.sentiment ?? null,
});

const compiled = new WeakMap<object, (item: unknown) => boolean>();
const testerOf = (match: Record<string, unknown>) => {
  let t = compiled.get(match);
  if (!t) compiled.set(match, (t = createQueryTester(match, { operations: OPERATIONS })));
  return t;
};

/** Whether the event passes the filter (every condition given); no filter passes everything. */
export function filterMatches(filter: WebhookFilter | null | undefined, e: TrendEvent): boolean {
  if (!filter) return true;
  if (filter.min_severity && severityRank(e.severity) < severityRank(filter.min_severity)) return false;
  if (filter.sentiment) {
    const s = e.sentiment;
    if (s === null || s === undefined) return false;
    if (filter.sentiment.min !== undefined && s < filter.sentiment.min) return false;
    if (filter.sentiment.max !== undefined && s > filter.sentiment.max) return false;
  }
  return !filter.match || testerOf(filter.match)(view(e));
}
