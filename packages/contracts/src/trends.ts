import { z } from "zod";
import { csvEnum, pageCursor, pageLimit, Timestamp } from "./common.ts";
import { CategoryPath } from "./signals.ts";
import { SEVERITIES, STAGES } from "./vocabulary.ts";



export const TrendsQuery = z.object({
  category: CategoryPath.optional().meta({ description: "A category and its sub-categories (`tech` matches `tech/ai`)" }),
  severity: csvEnum(SEVERITIES).optional().meta({ description: "Comma-separated severities, e.g. `high,critical`" }),
  stage: csvEnum(STAGES).optional().meta({ description: "Comma-separated lifecycle stages" }),
  status: z.enum(["active", "ended", "all"]).default("active"),
  since: Timestamp.optional().meta({ description: "Only trends assessed at or after this time" }),
  until: Timestamp.optional().meta({ description: "Only trends detected at or before this time" }),
  sort: z.enum(["recent", "velocity"]).default("recent").meta({ description: "`recent`: newest first; `velocity`: fastest first" }),
  limit: pageLimit({ limit: 50, max: 200 }),
  cursor: pageCursor("opaque"),
});

export const Trend = z
  .object({
    id: z.string(),
    name: z.string(),
    category: z.string(),
    status: z.enum(["active", "ended"]),
    severity: z.enum(SEVERITIES),
    stage: z.enum(STAGES),
    velocity: z.number().meta({ description: "Mentions per hour above the expected rate (the number webhook thresholds compare against)" }),
    acceleration: z.number().meta({ description: "Change of velocity since the previous bucket, mentions/h per bucket" }),
    anomaly_score: z.number().meta({ description: "Robust z-score of the last bucket against its baseline" }),
    current: z.number().meta({ description: "Mentions in the last assessed bucket (so far, when that bucket was still in progress)" }),
    baseline: z.number().meta({ description: "Expected mentions in that bucket" }),
    peak_velocity: z.number(),
    sentiment: z.number().nullable().meta({ description: "Mean sentiment (-1..1) of the last bucket's signals, when known" }),
    detected_at: Timestamp.meta({ description: "The instant the detection pass found the trend (not the start of its bucket)" }),
    assessed_bucket: Timestamp.meta({ description: "Start (UTC) of the bucket last assessed; the bucket in progress for a trend seen early" }),
    summary: z.string(),
    recommended_next_steps: z.array(z.string()),
  })
  .meta({ id: "Trend" });
export type Trend = z.infer<typeof Trend>;

export const TrendDrivers = z
  .object({
    terms: z.array(z.object({ term: z.string(), posts: z.number().int(), lift: z.number() }))
      .meta({ description: "Terms (words, #hashtags, @mentions) in at least 2 of the trend's posts and at least 2x their usual share of the topic's posts, strongest first (at most 5)" }),
    sources: z.array(z.object({ source: z.string(), share: z.number(), usual_share: z.number() }))
      .meta({ description: "Share of the mentions by source since the detection, and in the week before" }),
    top_posts: z.array(z.object({ source: z.string(), count: z.number(), link: z.string().nullable(), text: z.string().nullable(), observed_at: Timestamp }))
      .meta({ description: "The signals that weigh most since the detection (at most 3)" }),
    sentiment: z.object({ now: z.number(), usual: z.number().nullable(), shift: z.number().nullable() }).nullable()
      .meta({ description: "Mean sentiment (weighted by count) since the detection and in the week before; null without scored mentions" }),
  })
  .meta({ id: "TrendDrivers", description: "Why it is trending: read from the topic's stored signals (their text, source, count and sentiment) since the bucket it was detected in, against the week before" });

export const TrendWithSeries = Trend.extend({
  series: z.array(z.object({ bucket_start: Timestamp, count: z.number(), sentiment: z.number().nullable() }))
    .meta({ description: "The topic's recent buckets, oldest first (missing buckets had no signals)" }),
  drivers: TrendDrivers,
}).meta({ id: "TrendWithSeries" });

export const Recommendation = z
  .object({
    trend_id: z.string(),
    trend_name: z.string(),
    category: z.string(),
    action: z.enum(["push_to_workflow", "target_ads_category", "alert_team", "watch", "set_up_connector"]).meta({
      description: "What to do. The first three are recommended only when the account's connector can carry them out now; " +
        "`set_up_connector` (one per connector) says which connector to connect or repair for the most confident trend that needs it; " +
        "`watch`: nothing to do yet, or nothing more (a mute holds the trend, the team answered its operator item, its ads plan was applied; the reason says which). " +
        "A trend with sentiment at or below -0.3 is never recommended for ads.",
    }),
    connector: z.enum(["workflow", "ads", "chat", "webhooks"]).nullable(),
    reason: z.string().meta({ description: "Why, ending with the evidence in brackets: the score, how long the trend has been active, the sources that saw it in the last day" }),
    confidence: z.number().min(0).max(1).meta({
      description: "0-1: the evidence (1 - e^(-anomaly_score/10)) x the stage (rising 1, emerging 0.9, peaking 0.8, cooling 0.5) x the volume (0.6 + 0.4 x min(1, current/100)) " +
        "x agreement across sources in the last day (one 0.85, two 0.95, three or more 1) x duration (0.8 when just detected, 1 after 3 hours)",
    }),
  })
  .meta({ id: "Recommendation" });
export type Recommendation = z.infer<typeof Recommendation>;

export const TrendList = z.object({ data: z.array(Trend), next_cursor: z.string().nullable() }).meta({ id: "TrendList" });
export const RecommendationList = z.object({ data: z.array(Recommendation), generated_at: z.string() }).meta({ id: "RecommendationList" });

/** The instant before which an account's briefing links no longer open (POST /api/briefings/revoke). */
export const BriefingRevocation = z.object({ revoked_before: z.iso.datetime() }).meta({ id: "BriefingRevocation" });
