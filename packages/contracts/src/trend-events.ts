import { z } from "zod";
import { CategoryPath } from "./signals.ts";
import { SEVERITIES, TREND_EVENT_TYPES } from "./vocabulary.ts";

export const Severity = z.enum(SEVERITIES);
export type Severity = z.infer<typeof Severity>;
/** 1..4; `severity_change` subscriptions compare threshold_value against this rank. */
export const severityRank = (s: Severity) => SEVERITIES.indexOf(s) + 1;


/**
 * How much a trend event (and so every payload built from it: webhook bodies, stream messages, queue jobs) may carry.
 * Lengths are in characters (UTF-16 code units). Text over a limit is cut and ends with "…"; an event is never refused
 * for its size. On top of the field limits, the whole serialized event is kept within a byte budget
 * (DELIVERY_BODY_MAX_BYTES, default `maxBytes`) by dropping trailing next steps, then shortening the summary, the
 * name and the remaining step. With the field limits alone an event serializes to at most about 38 KB (every
 * character escaped as \uXXXX); a normal one is well under 2 KB.
 */
export const TREND_EVENT_LIMITS = {
  trendName: 200,
  summary: 1000,
  nextSteps: 10,
  nextStep: 300,
  sourceLink: 2048,
  maxBytes: 64 * 1024,
  /** Smallest byte budget allowed (a link of 2,048 escaped characters and the shortest texts still fit). */
  minBytes: 16 * 1024,
} as const;

const L = TREND_EVENT_LIMITS;

/**
 * A significant change of a trend, published once by the trend engine (packages/trends) and matched against webhook
 * subscriptions (and later other outlets). Carries everything the outbound payloads need.
 */
export const TrendEvent = z
  .object({
    id: z.string(),
    account_id: z.string(),
    type: z.enum(TREND_EVENT_TYPES),
    trend_id: z.string(),
    trend_name: z.string().max(L.trendName).meta({ description: `The topic's name, at most ${L.trendName} characters (longer names end with "…")` }),
    category: CategoryPath,
    severity: Severity,
    previous_severity: Severity.nullable(),
    velocity: z.number(),
    previous_velocity: z.number().nullable(),
    anomaly_score: z.number(),
    sentiment: z.number().min(-1).max(1).nullable().optional()
      .meta({ description: "The topic's mean sentiment (-1..1) when measured; null without scored mentions (absent on events published before it was added)" }),
    timestamp: z.iso.datetime().meta({ description: "Start (UTC) of the bucket the trend was measured in (the bucket in progress for an early detection), not the moment of detection" }),
    summary: z.string().max(L.summary).meta({ description: `At most ${L.summary} characters` }),
    source_link: z.string().max(L.sourceLink).meta({ description: "The trend's briefing page (GET /briefings/{token}): no API key, signed, expiring, revocable per account" }),
    recommended_next_steps: z.array(z.string().max(L.nextStep)).max(L.nextSteps)
      .meta({ description: `At most ${L.nextSteps} steps of at most ${L.nextStep} characters each` }),
    previous_ended_at: z.iso.datetime().nullable().optional()
      .meta({ description: "On trend.detected: when this topic's trend last ended (a re-detection), null the first time (recovery windows read it)" }),
  })
  .meta({ id: "TrendEvent" });
export type TrendEvent = z.infer<typeof TrendEvent>;

/** At most `max` UTF-16 units of `s`; a cut string ends with "…" and never splits a surrogate pair. */
export function clipText(s: string, max: number): string {
  if (s.length <= max) return s;
  if (max <= 0) return "";
  let end = max - 1;
  const last = s.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--; // a high surrogate whose pair would be cut off
  return s.slice(0, end) + "…";
}

/** The text fields a trend event shares with the payloads built from it. */
export interface TrendText {
  trend_name: string;
  category: string;
  summary: string;
  source_link: string;
  recommended_next_steps: string[];
}

// Worst case bytes of a JSON string of n UTF-16 units (\uXXXX escapes) plus its quotes.
const worst = (s: string) => 6 * s.length + 2;
const utf8 = new TextEncoder();
const bytesOf = (v: unknown) => utf8.encode(JSON.stringify(v)).length;

/**
 * Bounds the text of a trend event, or of a payload built from one (same field names): every field to its limit,
 * then the whole serialized object to `maxBytes`. Returns the object itself when nothing had to change (the common
 * case costs a few length checks, no serialization).
 */
export function boundTrendText<T extends TrendText>(x: T, maxBytes: number = L.maxBytes): T {
  const steps = x.recommended_next_steps;
  const fieldsOk = x.trend_name.length <= L.trendName && x.summary.length <= L.summary && x.category.length <= 200
    && x.source_link.length <= L.sourceLink && steps.length <= L.nextSteps && steps.every((s) => s.length <= L.nextStep);
  // Cheap upper bound of the serialized size: every character escaped, plus generous room for the other fields.
  const estimate = () => worst(x.trend_name) + worst(x.summary) + worst(x.category) + worst(x.source_link)
    + steps.reduce((n, s) => n + worst(s) + 1, 0) + 1024;
  if (fieldsOk && estimate() <= maxBytes) return x;

  const out: T = {
    ...x,
    trend_name: clipText(x.trend_name, L.trendName),
    // A category path cut at its limit must not end with "/" (it would no longer be a path).
    category: x.category.length <= 200 ? x.category : x.category.slice(0, 200).replace(/\/+$/, ""),
    summary: clipText(x.summary, L.summary),
    source_link: x.source_link.length <= L.sourceLink ? x.source_link : x.source_link.slice(0, L.sourceLink),
    recommended_next_steps: steps.slice(0, L.nextSteps).map((s) => clipText(s, L.nextStep)),
  };
  // Over the byte budget (only possible with heavily escaped text or a small budget): shed the least important text
  // first. Each round shortens something, so this ends; whatever is left when nothing more can shrink is tiny.
  for (let size = bytesOf(out); size > maxBytes; size = bytesOf(out)) {
    const s = out.recommended_next_steps;
    if (s.length > 1) out.recommended_next_steps = s.slice(0, -1);
    else if (out.summary.length > 100) out.summary = clipText(out.summary, Math.max(100, Math.floor(out.summary.length / 2)));
    else if (out.trend_name.length > 50) out.trend_name = clipText(out.trend_name, Math.max(50, Math.floor(out.trend_name.length / 2)));
    else if (s.length === 1 && s[0].length > 50) out.recommended_next_steps = [clipText(s[0], Math.max(50, Math.floor(s[0].length / 2)))];
    else break;
  }
  return out;
}

/** A trend event within TREND_EVENT_LIMITS and `maxBytes` serialized (see boundTrendText). */
export const boundTrendEvent = (e: TrendEvent, maxBytes: number = L.maxBytes): TrendEvent => boundTrendText(e, maxBytes);
