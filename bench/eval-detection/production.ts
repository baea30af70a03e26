import type { TrendEvent } from "@trendgate/contracts";
import type { ProductionCode } from "./code.ts";

// Replays one topic through what production does, pass by pass: mentions land in 5-minute batches (as the social
// poll ingests them); a detection pass every `intervalSeconds` reads the topic as the engine's shard read does
// (the week before the bucket in progress, count + 1 per bucket, the bucket in progress as count + elapsed fraction,
// outage hours missing, nothing before the topic's first mention), skips it when the shard read would not select it,
// and otherwise runs assessNow() and decide() on it and, for each event, the webhook trigger rule of a
// `trend_detected` subscription at threshold 0. tests/trends/eval-matches-production.test.ts runs the same series
// through the engine against the database and expects the same events.

export interface ReplayTopic {
  /** Start of row 0, aligned to the bucket width. */
  startMs: number;
  /** Mentions per bucket (row). */
  counts: readonly number[];
  /** Per row, the mentions of each arrival slot in order (they sum to the row's count); a slot lands at its end. */
  slots: readonly (readonly number[])[];
  /** Bucket starts (ms) of account-wide outages: no data, not silence. */
  missing: ReadonlySet<number>;
  category: string;
}

export interface ReplayedEvent {
  type: TrendEvent["type"];
  /** The pass that published it. */
  atMs: number;
  /** Start of the bucket assessed (the bucket in progress, or the last closed one). */
  bucketStartMs: number;
  /** Elapsed fraction of that bucket when assessed (1 = closed). */
  observed: number;
  severity: TrendEvent["severity"];
  previousSeverity: TrendEvent["severity"] | null;
  velocity: number;
  anomalyScore: number;
  stage: string;
  /** A `trend_detected` subscription at threshold 0 receives it. */
  delivered: boolean;
}

export interface Settings {
  /** The detection config a pass uses (the worker's engine options). */
  detection: { bucketSeconds: number; baselineHours: number; minMentionsPerHour: number; dailySeasonality: boolean };
  rules: { velocityEventStep: number; velocityEventMinSeconds: number; severityHoldSeconds: number; endAfterHours: number };
  /** The scheduler's pass interval (DETECTION_INTERVAL_SECONDS). */
  intervalSeconds: number;
  /** How often mentions land (SOCIAL_POLL_INTERVAL_SECONDS). */
  batchSeconds: number;
  /** The subscriber whose notifications are scored. */
  subscription: { triggerType: string; thresholdValue: number; category: string | null };
}

/**
 * The defaults production runs with (the environment's DETECTION_* and SOCIAL_POLL_INTERVAL_SECONDS when set), as the
 * worker turns its configuration into engine options.
 */
export function productionSettings(code: ProductionCode, env: Record<string, string | undefined> = process.env): Settings {
  const pick = Object.fromEntries(Object.entries(env).filter(([k]) => k.startsWith("DETECTION_") || k === "SOCIAL_POLL_INTERVAL_SECONDS"));
  // Secrets the schema requires but detection never reads.
  const c = code.loadConfig({ ...pick, ADMIN_TOKEN: "eval-detection-placeholder-token", ENCRYPTION_KEY: Buffer.alloc(32).toString("base64") });
  return {
    detection: { bucketSeconds: c.DETECTION_BUCKET_SECONDS, baselineHours: c.DETECTION_BASELINE_HOURS, minMentionsPerHour: c.DETECTION_MIN_MENTIONS_PER_HOUR, dailySeasonality: true },
    rules: {
      ...code.DEFAULT_EVENT_RULES,
      velocityEventMinSeconds: c.DETECTION_VELOCITY_EVENT_MIN_SECONDS,
      severityHoldSeconds: c.DETECTION_SEVERITY_HOLD_SECONDS,
      endAfterHours: c.DETECTION_END_AFTER_HOURS,
    },
    intervalSeconds: c.DETECTION_INTERVAL_SECONDS,
    batchSeconds: c.SOCIAL_POLL_INTERVAL_SECONDS,
    subscription: { triggerType: "trend_detected", thresholdValue: 0, category: null },
  };
}

const round2 = (n: number) => Math.round(n * 100) / 100;
const gcd = (a: number, b: number): number => (b ? gcd(b, a % b) : a);

type State = Parameters<ProductionCode["decide"]>[0];

/**
 * A team's verdict on a delivered detection, taking effect from the next pass (simulated feedback): the topic's
 * evidence bar then follows the net count of detections judged not a trend, as POST /api/trends/{id}/feedback sets it.
 */
export type Judge = (e: ReplayedEvent) => "not_a_trend" | "useful" | null;

/**
 * Replays `topic` with passes every `intervals[i]` seconds (one replay per interval, sharing each instant's
 * assessment while their evidence bars agree: it does not depend on the trend's state), from the topic's first
 * bucket (or `fromMs`, with no trend before it) to the end of its last. With `judge`, each replay's delivered
 * detections are judged and move its evidence bar. Returns every event decide() published, per interval.
 */
export function replayTopic(code: ProductionCode, settings: Settings, topic: ReplayTopic, intervals: readonly number[], fromMs = topic.startMs, judge?: Judge): ReplayedEvent[][] {
  const cfg = code.resolveConfig(settings.detection);
  const bucketMs = cfg.bucketSeconds * 1000;
  if (topic.startMs % bucketMs !== 0) throw new Error("a topic's rows must start on a bucket boundary");
  const rows = topic.counts.length;
  const startBucket = topic.startMs / bucketMs;
  const stepMs = intervals.reduce((g, s) => gcd(g, s * 1000), 0);
  const logs = intervals.map(() => ({ state: undefined as State | undefined, events: [] as ReplayedEvent[], net: 0, bar: 1 }));
  // The worker's fit cache, as a worker holds it for this topic (a checkout from before it fits every pass).
  const fit = code.FitCache && { cache: new code.FitCache(1), id: "topic" };
  const count = (bucket: number) => {
    const r = bucket - startBucket;
    return r >= 0 && r < rows ? topic.counts[r] : 0;
  };
  const slotsOf = (bucket: number): readonly number[] => {
    const r = bucket - startBucket;
    return r >= 0 && r < rows ? topic.slots[r] : [];
  };

  for (let now = Math.ceil(Math.max(fromMs, topic.startMs) / stepMs) * stepMs; now <= topic.startMs + rows * bucketMs; now += stepMs) {
    const current = Math.floor(now / bucketMs);
    const elapsedMs = now - current * bucketMs;
    const observed = Math.max(1, elapsedMs) / bucketMs;
    const slots = slotsOf(current);
    const slotMs = slots.length ? bucketMs / slots.length : bucketMs;
    const landed = Math.min(slots.length, Math.floor(elapsedMs / slotMs));
    let partial = 0;
    let seen = false; // a mention ingested since the last closed bucket began (the topic's last_seen_at)
    for (let j = 0; j < landed; j++) {
      partial += slots[j];
      if (slots[j] > 0) seen = true;
    }
    if (slotsOf(current - 1).some((n) => n > 0)) seen = true;
    const lastClosed = topic.missing.has((current - 1) * bucketMs) ? 0 : count(current - 1);
    // The shard read's selection: an active trend, or a mention since the last closed bucket began and the volume
    // floor reached by that bucket or by the bucket in progress (once PARTIAL_MIN_SECONDS in).
    const floorReached =
      seen &&
      (lastClosed >= cfg.minPerBucket || (elapsedMs >= code.PARTIAL_MIN_SECONDS * 1000 && partial >= cfg.minPerBucket * observed));
    const assessed = new Map<number, ReturnType<ProductionCode["assessNow"]>>(); // by evidence bar
    for (let i = 0; i < intervals.length; i++) {
      if (now % (intervals[i] * 1000) !== 0) continue;
      const log = logs[i];
      if (!(log.state?.status === "active" || floorReached)) continue;
      let a = assessed.get(log.bar);
      if (!a) {
        a = code.assessNow(seriesAt(topic, cfg.lookbackBuckets, current, partial, observed, count, bucketMs), current - cfg.lookbackBuckets, observed, settings.detection, log.bar, fit);
        assessed.set(log.bar, a);
      }
      const previous = log.state;
      const d = code.decide(previous, a, settings.rules, new Date(now));
      if (!d) continue;
      log.state = d.state;
      if (!d.event) continue;
      const detected = d.event === "trend.detected";
      // The velocity the event carries: the decision's where decide() gives one (a new trend's is never negative).
      const velocity = (d as { velocity?: number }).velocity ?? a.velocity;
      const event = {
        type: d.event, category: topic.category, severity: d.state.severity, previous_severity: detected || !previous ? null : previous.severity,
        velocity: round2(velocity), previous_velocity: detected || !previous ? null : round2(previous.publishedVelocity),
      } as TrendEvent;
      const replayed: ReplayedEvent = {
        type: d.event, atMs: now, bucketStartMs: a.bucketStart.getTime(), observed: a.observed, severity: event.severity,
        previousSeverity: event.previous_severity, velocity: event.velocity, anomalyScore: a.anomalyScore, stage: a.stage,
        delivered: code.triggerFires(settings.subscription, event),
      };
      log.events.push(replayed);
      const verdict = detected && replayed.delivered ? judge?.(replayed) : null;
      if (verdict) log.bar = code.evidenceBarFor((log.net += verdict === "not_a_trend" ? 1 : -1));
    }
  }
  return logs.map((l) => l.events);
}

/**
 * y as the shard read builds it at a pass: count + 1 for each bucket of the look-back before `current`, the bucket in
 * progress as partial + observed, outage buckets NaN, and NaN before the topic's first mention in the window.
 */
function seriesAt(topic: ReplayTopic, lookback: number, current: number, partial: number, observed: number, count: (b: number) => number, bucketMs: number): Float64Array {
  const first = current - lookback;
  const y = new Float64Array(lookback + 1);
  for (let i = 0; i < lookback; i++) {
    const bucket = first + i;
    y[i] = topic.missing.has(bucket * bucketMs) ? NaN : count(bucket) + 1;
  }
  y[lookback] = partial + observed;
  const born = y.findIndex((v) => v > 1);
  y.fill(NaN, 0, born < 0 ? lookback : born);
  return y;
}
