import { insertSignals, newId, type Db } from "@trendgate/db";
import { signal } from "./gateway.ts";

/**
 * A topic (from one signal) and its active `high` trend row, as a detection pass would have written them: for tests
 * that publish events about a real trend (feedback, trigger windows) without running detection.
 */
export async function seedTrendRow(db: Db, accountId: string, name: string, over: { lastAnomalousAt?: Date | null } = {}) {
  const now = new Date();
  await insertSignals(db, accountId, [signal({ id: `${name}-seed`, topic: name, category: "tech/ai", count: 50, observed_at: now.toISOString() })]);
  const topic = await db.topic.findFirstOrThrow({ where: { accountId, name } });
  return db.trend.create({ data: {
    id: newId("trend"), accountId, topicId: topic.id, name, category: "tech/ai", status: "active", severity: "high", stage: "rising",
    velocity: 40, acceleration: 10, baseline: 10, current: 50, anomalyScore: 11, peakVelocity: 40, publishedVelocity: 40, detectedAt: now, bucketStart: now,
    lastAnomalousAt: over.lastAnomalousAt ?? null,
  } });
}
