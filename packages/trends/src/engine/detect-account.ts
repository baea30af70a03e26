import crypto from "node:crypto";
import { clipText, TREND_EVENT_LIMITS, type TrendEvent } from "@trendgate/contracts";
import { newId, type Db } from "@trendgate/db";
import type { Queues } from "@trendgate/queues";
import { assess, type Assessment, type Bucket, type DetectionConfig } from "../detection/index.ts";
import { publishTrendEvents } from "../events/publish.ts";
import { factsOf, nextStepsOf, summaryOf } from "./narrative.ts";

export interface EngineOptions extends DetectionConfig {
  publicBaseUrl: string;
  /** A published velocity must move by this fraction (or at least 1 mention/h) before a new velocity event. */
  velocityEventStep: number;
  /** Byte budget of a serialized event (DELIVERY_BODY_MAX_BYTES); TREND_EVENT_LIMITS.maxBytes when unset. */
  maxEventBytes?: number;
}

type TrendRow = Awaited<ReturnType<Db["trend"]["findMany"]>>[number];
type Severity = TrendEvent["severity"];

/** Deterministic event ids: the same change found twice (a retried or concurrent run) is published once. */
const eventId = (...parts: (string | number)[]) => `evt_${crypto.createHash("sha256").update(parts.join("|")).digest("hex").slice(0, 32)}`;

/**
 * One detection pass over an account: assess the last complete bucket of every topic seen within the baseline
 * window, update its trend row, and publish an event for each significant change:
 * - trend.detected: a topic becomes a trend (no trend before, or its previous trend had ended);
 * - trend.severity_changed: an active trend's severity changes;
 * - trend.velocity_changed: an active trend's velocity moved by velocityEventStep since the last event.
 * A trend ends when its topic is back to dormant. Runs of one account (or one shard of its topics) are serialised
 * by an advisory lock.
 */
export async function detectAccount(deps: { db: Db; queues: Queues }, accountId: string, now: Date, o: EngineOptions, shard = { index: 0, count: 1 }) {
  const bucketMs = o.bucketSeconds * 1000;
  const assessAt = new Date(Math.floor(now.getTime() / bucketMs) * bucketMs - bucketMs); // last complete bucket
  const from = new Date(assessAt.getTime() - o.baselineBuckets * bucketMs);
  const { db } = deps;

  const events: TrendEvent[] = [];
  const stats = { topics: 0, trends: 0, events: 0 };
  await db.$transaction(async (tx) => {
    const [{ locked }] = await tx.$queryRawUnsafe<{ locked: boolean }[]>(`SELECT pg_try_advisory_xact_lock(hashtext($1)) AS locked`, `detect:${accountId}:${shard.index}/${shard.count}`);
    if (!locked) return; // another worker is on this shard right now
    // A shard is the topics whose id hashes to it: stable across passes, so a topic is always assessed by one shard.
    const topics = await tx.$queryRawUnsafe<{ id: string; name: string; category: string }[]>(
      `SELECT id, name, category FROM topics WHERE account_id = $1 AND last_seen_at >= $2 AND ($4 = 1 OR mod(abs(hashtext(id)), $4) = $3)`,
      accountId, from, shard.index, shard.count);
    if (!topics.length) return;
    const ids = topics.map((t) => t.id);
    const { rows } = await db.$pool.query<{ topic_id: string; bucket_start: Date; count: number; s: number; n: number }>(
      `SELECT topic_id, bucket_start, count, sentiment_sum AS s, sentiment_count AS n FROM topic_buckets
        WHERE topic_id = ANY($1::text[]) AND bucket_start >= $2 AND bucket_start <= $3 ORDER BY topic_id, bucket_start`,
      [ids, from, assessAt]);
    const series = new Map<string, Bucket[]>();
    const sentiment = new Map<string, number>();
    for (const r of rows) {
      (series.get(r.topic_id) ?? series.set(r.topic_id, []).get(r.topic_id)!).push({ start: r.bucket_start, count: r.count });
      if (r.bucket_start.getTime() === assessAt.getTime() && r.n > 0) sentiment.set(r.topic_id, r.s / r.n);
    }
    const trends = new Map((await tx.trend.findMany({ where: { topicId: { in: ids } } })).map((t) => [t.topicId, t]));

    for (const topic of topics) {
      stats.topics++;
      const a = assess(series.get(topic.id) ?? [], assessAt, o);
      const row = trends.get(topic.id);
      const change = decide(row, a, o);
      if (!change) continue;
      const severity = (a.isTrend ? a.severity : row?.severity ?? "low") as Severity;
      const facts = factsOf(topic.name, topic.category, a, severity);
      // Topic names come from stored signals: hold them to the event's limit in the trend row too (the read API shows it).
      const data = {
        name: clipText(topic.name, TREND_EVENT_LIMITS.trendName), category: topic.category, status: change.status, severity, stage: a.stage, velocity: a.velocity,
        acceleration: a.acceleration, baseline: a.baseline, current: a.current, anomalyScore: a.anomalyScore,
        sentiment: sentiment.get(topic.id) ?? null, bucketStart: a.bucketStart,
      };
      const saved = row
        ? await tx.trend.update({
            where: { id: row.id },
            data: { ...data, peakVelocity: change.event === "trend.detected" ? a.velocity : Math.max(row.peakVelocity, a.velocity),
              ...(change.event ? { publishedVelocity: a.velocity } : {}), ...(change.event === "trend.detected" ? { detectedAt: a.bucketStart } : {}) },
          })
        : await tx.trend.create({ data: { ...data, id: newId("trend"), accountId, topicId: topic.id, peakVelocity: a.velocity, publishedVelocity: a.velocity, detectedAt: a.bucketStart } });
      if (change.status === "active") stats.trends++;
      if (!change.event) continue;
      const detected = change.event === "trend.detected";
      events.push({
        id: eventId(topic.id, change.event, a.bucketStart.toISOString(), severity, Math.round(a.velocity)),
        account_id: accountId, type: change.event, trend_id: saved.id, trend_name: data.name, category: topic.category,
        severity, previous_severity: detected ? null : (row!.severity as Severity), velocity: round2(a.velocity),
        previous_velocity: detected ? null : round2(row!.publishedVelocity), anomaly_score: round2(a.anomalyScore),
        timestamp: a.bucketStart.toISOString(), summary: summaryOf(facts, o.bucketSeconds),
        source_link: `${o.publicBaseUrl.replace(/\/$/, "")}/api/trends/${saved.id}`, recommended_next_steps: nextStepsOf(facts),
      });
    }
  }, { timeout: 120_000 });
  // Published after the trend rows committed: an event never describes a state the API cannot show.
  stats.events = (await publishTrendEvents(deps, events, { maxBytes: o.maxEventBytes })).length;
  return stats;
}

const round2 = (n: number) => Math.round(n * 100) / 100;

/** What changed for one topic: its trend status, and which event (if any) to publish. */
function decide(row: TrendRow | undefined, a: Assessment, o: EngineOptions): { status: "active" | "ended"; event?: TrendEvent["type"] } | null {
  if (a.isTrend) {
    if (!row || row.status === "ended") return { status: "active", event: "trend.detected" };
    if (row.severity !== a.severity) return { status: "active", event: "trend.severity_changed" };
    const step = Math.max(o.velocityEventStep * Math.abs(row.publishedVelocity), 1);
    if (Math.abs(a.velocity - row.publishedVelocity) >= step) return { status: "active", event: "trend.velocity_changed" };
    return { status: "active" };
  }
  if (!row || row.status === "ended") return null; // never was, or already over: nothing to record
  return { status: a.stage === "dormant" ? "ended" : "active" };
}
