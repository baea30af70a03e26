import { z } from "zod";
import { Id, ID_PATTERN, RecommendationList, Timestamp, TrendList, TrendsQuery, TrendWithSeries, type Trend as TrendBody } from "@trendgate/contracts";
import { findAccountTrend, listTrends, topicBucketSeries, type TrendRow, type TrendSort } from "@trendgate/db";
import { driversSince, loadDrivers, nextStepsOf, recommendationsFor, summaryOf } from "@trendgate/trends";
import { ApiError, notFound } from "../http/api-error.ts";
import { defineRoute } from "../http/route.ts";

type Row = TrendRow;
const SERIES_BUCKETS = 48;

export function toTrend(r: Row, bucketSeconds: number): TrendBody {
  const facts = {
    name: r.name, category: r.category, severity: r.severity, stage: r.stage, velocity: r.velocity, current: r.current, baseline: r.baseline,
    observed: r.observed, ended: r.status === "ended",
  };
  return {
    id: r.id, name: r.name, category: r.category, status: r.status as TrendBody["status"], severity: r.severity as TrendBody["severity"],
    stage: r.stage as TrendBody["stage"], velocity: r.velocity, acceleration: r.acceleration, anomaly_score: r.anomalyScore,
    current: r.current, baseline: r.baseline, peak_velocity: r.peakVelocity, sentiment: r.sentiment,
    detected_at: r.detectedAt.toISOString(), assessed_bucket: r.bucketStart.toISOString(),
    summary: summaryOf(facts, bucketSeconds), recommended_next_steps: nextStepsOf(facts),
  };
}

// Keyset cursor over (sort key, id): base64url of JSON [value, id].
const encodeCursor = (v: string | number, id: string) => Buffer.from(JSON.stringify([v, id])).toString("base64url");
function decodeCursor(cursor: string, sort: TrendSort): { value: Date | number; id: string } {
  try {
    const [v, id] = JSON.parse(Buffer.from(cursor, "base64url").toString()) as [string | number, string];
    if (typeof id !== "string" || !ID_PATTERN.test(id)) throw new Error();
    if (sort === "recent" ? !Timestamp.safeParse(v).success : typeof v !== "number" || !Number.isFinite(v)) throw new Error();
    return { value: sort === "recent" ? new Date(v as string) : (v as number), id };
  } catch {
    throw new ApiError("validation_failed", "cursor is not a next_cursor of this listing", { errors: [{ location: "query", path: "cursor", message: "invalid cursor", code: "invalid_cursor" }] });
  }
}

export const trendRoutes = [
  defineRoute({
    method: "get", path: "/api/trends", operationId: "listTrends", tag: "Trends", auth: "apiKey",
    summary: "Trends detected from your signals",
    description: "Active trends by default, newest detection first. Filter by category (with sub-categories), severity, stage and time; sort by velocity.",
    query: TrendsQuery,
    responses: { 200: { description: "A page of trends", schema: TrendList } },
    async handler({ deps, auth, query }) {
      const filter = {
        accountId: auth.accountId, status: query.status !== "all" ? query.status : undefined, category: query.category,
        severities: query.severity, stages: query.stage,
        since: query.since ? new Date(query.since) : undefined, until: query.until ? new Date(query.until) : undefined,
      };
      const after = query.cursor ? decodeCursor(query.cursor, query.sort) : null;
      const rows = await listTrends(deps.readDb, filter, query.sort, after, query.limit + 1);
      const page = rows.slice(0, query.limit);
      const last = page.at(-1);
      const next = rows.length > query.limit && last ? encodeCursor(query.sort === "recent" ? last.detectedAt.toISOString() : last.velocity, last.id) : null;
      return { status: 200, body: { data: page.map((r) => toTrend(r, deps.config.DETECTION_BUCKET_SECONDS)), next_cursor: next } };
    },
  }),
  defineRoute({
    method: "get", path: "/api/trends/{trend_id}", operationId: "getTrend", tag: "Trends", auth: "apiKey",
    summary: `One trend with its topic's last ${SERIES_BUCKETS} buckets and why it is trending (drivers)`, params: z.object({ trend_id: Id }),
    responses: { 200: { description: "The trend", schema: TrendWithSeries } },
    async handler({ deps, auth, params }) {
      const row = await findAccountTrend(deps.readDb, auth.accountId, params.trend_id);
      if (!row) throw notFound("Trend");
      const [buckets, drivers] = await Promise.all([
        topicBucketSeries(deps.readDb, row.topicId, SERIES_BUCKETS),
        loadDrivers(deps.readDb, row, driversSince(row, deps.config.DETECTION_BUCKET_SECONDS * 1000)),
      ]);
      const series = buckets.map((b) => ({ bucket_start: b.bucketStart.toISOString(), count: b.count, sentiment: b.sentimentCount ? b.sentimentSum / b.sentimentCount : null }));
      return { status: 200, body: { ...toTrend(row, deps.config.DETECTION_BUCKET_SECONDS), series, drivers } };
    },
  }),
  defineRoute({
    method: "get", path: "/api/intelligence/recommendations", operationId: "listRecommendations", tag: "Trends", auth: "apiKey",
    summary: "What to do about your current trends: which connector to push to, which ads category to target, and why",
    responses: { 200: { description: "Recommendations, most confident first", schema: RecommendationList } },
    async handler({ deps, auth }) {
      return { status: 200, body: { data: await recommendationsFor(deps.readDb, auth.accountId), generated_at: new Date().toISOString() } };
    },
  }),
];
