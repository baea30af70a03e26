import crypto from "node:crypto";
import { clipText, TREND_EVENT_LIMITS, type TrendEvent } from "@trendgate/contracts";
import { accountCalendar, insertTrendEvents, newId, type Db } from "@trendgate/db";
import { HOLIDAY_EVIDENCE, holidayAt } from "../calendar/holidays.ts";
import type { Queues } from "@trendgate/queues";
import { assessNow, resolveConfig, type DetectionConfig, type FitCache } from "../detection/index.ts";
import { boundTrendEvents, dispatchTrendEvents } from "../events/publish.ts";
import { decide, DEFAULT_EVENT_RULES, type EventRules } from "./decide.ts";
import { factsOf, nextStepsOf, summaryOf } from "./narrative.ts";
import { driversText } from "../drivers/drivers.ts";
import { loadDrivers } from "../drivers/load.ts";
import { readShard } from "./shard-series.ts";
import { writeTrendRows, type TrendRowWrite } from "./trend-rows.ts";

export interface EngineOptions extends DetectionConfig, Partial<EventRules> {
  publicBaseUrl: string;
  /** Byte budget of a serialized event (DELIVERY_BODY_MAX_BYTES); TREND_EVENT_LIMITS.maxBytes when unset. */
  maxEventBytes?: number;
  /** The `source_link` of an event: the briefing page. Without it, the trend's JSON at /api/trends/{id}. */
  sourceLink?: (t: { accountId: string; trendId: string; now: Date }) => string;
  /** The process's fitted models between passes (DETECTION_FIT_CACHE_TOPICS); without it every pass fits every topic. */
  fitCache?: FitCache;
}

/** Deterministic event ids: the same change found twice (a retried or concurrent run) is published once. */
const eventId = (...parts: (string | number)[]) => `evt_${crypto.createHash("sha256").update(parts.join("|")).digest("hex").slice(0, 32)}`;
const round2 = (n: number) => Math.round(n * 100) / 100;

/**
 * One detection pass over an account (or one shard of its topics) at `now`: assess the bucket in progress and the
 * last closed bucket of every topic whose state can change (assessNow), apply decide() to its trend, write the trend
 * rows and their events in one transaction, then queue the events. Passes over one shard are serialised by an
 * advisory lock; a pass that finds the lock taken does nothing (another worker is on it).
 */
export async function detectAccount(deps: { db: Db; queues: Queues }, accountId: string, now: Date, o: EngineOptions, shard = { index: 0, count: 1 }) {
  const cfg = resolveConfig(o);
  const rules: EventRules = {
    velocityEventStep: o.velocityEventStep ?? DEFAULT_EVENT_RULES.velocityEventStep,
    velocityEventMinSeconds: o.velocityEventMinSeconds ?? DEFAULT_EVENT_RULES.velocityEventMinSeconds,
    severityHoldSeconds: o.severityHoldSeconds ?? DEFAULT_EVENT_RULES.severityHoldSeconds,
    endAfterHours: o.endAfterHours ?? DEFAULT_EVENT_RULES.endAfterHours,
  };
  // ms: where a pass spends its time (the benchmark prints them)
  const stats = { topics: 0, trends: 0, events: 0, outages: 0, holiday: null as string | null, ms: { read: 0, assess: 0, write: 0 } };
  const client = await deps.db.$pool.connect();
  let published: TrendEvent[] = [];
  try {
    await client.query("BEGIN");
    const { rows: [{ locked }] } = await client.query<{ locked: boolean }>(`SELECT pg_try_advisory_xact_lock(hashtext($1)) AS locked`, [`detect:${accountId}:${shard.index}/${shard.count}`]);
    if (!locked) { await client.query("ROLLBACK"); return stats; }
    // A cold shard read aggregates ~2,000 topics' buckets, scattered over most of topic_buckets' pages: Postgres'
    // JIT compiles it anew each time (~0.2 s per shard, more than it saves), and 4 MB of work_mem made the bitmap lossy
    // and the sort spill to disk (measured at 100,000 topics).
    await client.query("SET LOCAL jit = off; SET LOCAL work_mem = '64MB'");
    let t = performance.now();
    const shardSeries = await readShard(client, accountId, now, cfg, shard);
    // On one of the account's holidays every topic needs stronger evidence (calendar/holidays.ts).
    const calendar = await accountCalendar(deps.db, accountId);
    const holiday = calendar ? holidayAt(calendar, now) : null;
    const dayBar = holiday ? HOLIDAY_EVIDENCE : 1;
    stats.holiday = holiday?.name ?? null;
    stats.ms.read = performance.now() - t;
    t = performance.now();
    stats.outages = shardSeries.outages.length;
    const writes: TrendRowWrite[] = [];
    const events: TrendEvent[] = [];
    for (const topic of shardSeries.candidates) {
      stats.topics++;
      const a = assessNow(topic.y, shardSeries.first, shardSeries.observed, o, topic.evidenceBar * dayBar, o.fitCache && { cache: o.fitCache, id: topic.id });
      const row = topic.trend;
      const d = decide(row, a, rules, now);
      if (!d) continue;
      if (d.status === "active") stats.trends++;
      const detected = d.event === "trend.detected";
      const id = row?.id ?? newId("trend");
      const name = clipText(topic.name, TREND_EVENT_LIMITS.trendName); // the read API shows it: held to the event's limit
      writes.push({
        id, accountId, topicId: topic.id, name, category: topic.category, status: d.status, severity: d.state.severity, stage: d.stage,
        velocity: d.velocity, acceleration: a.acceleration, baseline: a.baseline, current: a.current, anomalyScore: a.anomalyScore,
        peakVelocity: detected || !row ? d.velocity : Math.max(row.peakVelocity, d.velocity), publishedVelocity: d.state.publishedVelocity,
        pendingSeverity: d.state.pendingSeverity, pendingSince: d.state.pendingSince, velocityEventAt: d.state.velocityEventAt,
        sentiment: topic.sentiment,
        detectedAt: detected || !row ? now : row.detectedAt, bucketStart: a.bucketStart, observed: a.observed,
        lastAnomalousBucket: d.state.lastAnomalousBucket, waveStart: d.state.waveStart, peakSeverity: d.state.peakSeverity,
        wavePeakExcess: d.state.wavePeakExcess, priorWavePeakExcess: d.state.priorWavePeakExcess, coolingSince: d.state.coolingSince,
        lastAnomalousAt: a.isTrend ? now : (row?.lastAnomalousAt ?? null),
        endedAt: d.event === "trend.ended" ? now : (row?.endedAt ?? null),
      });
      if (!d.event) continue;
      const severity = d.state.severity;
      const facts = { ...factsOf(topic.name, topic.category, a, severity, d.stage, d.event === "trend.ended"), velocity: d.velocity,
        ...(d.event === "trend.cooling" ? { coolingEndsAfterHours: rules.endAfterHours } : {}) };
      // A new trend's summary says why (drivers/): the terms, sources and sentiment of its rise.
      const drivers = detected ? driversText(await loadDrivers(deps.db, { accountId, name: topic.name, category: topic.category }, a.bucketStart, now)) : "";
      const why = drivers ? ` ${drivers}` : "";
      events.push({
        id: eventId(topic.id, d.event, a.bucketStart.toISOString(), severity, Math.round(d.velocity)),
        account_id: accountId, type: d.event, trend_id: id, trend_name: name, category: topic.category,
        severity, previous_severity: detected ? null : row!.severity, velocity: round2(d.velocity),
        previous_velocity: detected ? null : round2(row!.publishedVelocity), anomaly_score: round2(a.anomalyScore),
        sentiment: topic.sentiment === null ? null : Math.max(-1, Math.min(1, round2(topic.sentiment))),
        timestamp: a.bucketStart.toISOString(), summary: clipText(`${summaryOf(facts, cfg.bucketSeconds)}${why}`, TREND_EVENT_LIMITS.summary),
        source_link: o.sourceLink?.({ accountId, trendId: id, now }) ?? `${o.publicBaseUrl.replace(/\/$/, "")}/api/trends/${id}`,
        recommended_next_steps: nextStepsOf(facts),
        ...(detected ? { previous_ended_at: row?.status === "ended" && row.endedAt ? row.endedAt.toISOString() : null } : {}),
      });
    }
    stats.ms.assess = performance.now() - t;
    t = performance.now();
    await writeTrendRows(client, writes);
    // The events' rows commit with the trend rows they describe: a crash after the commit leaves them to the sweeper.
    const bounded = boundTrendEvents(events, o.maxEventBytes);
    const fresh = await insertTrendEvents(deps.db, bounded, client);
    await client.query("COMMIT");
    stats.ms.write = performance.now() - t;
    published = bounded.filter((e) => fresh.has(e.id));
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  } finally {
    client.release();
  }
  await dispatchTrendEvents(deps.queues, published, { maxBytes: o.maxEventBytes });
  stats.events = published.length;
  return stats;
}
