import { boundTrendText, TREND_EVENT_LIMITS, type TrendEvent, type WebhookPayload } from "@trendgate/contracts";

/**
 * The delivery body: exactly the spec's fields, in the spec's order. Its text is held to TREND_EVENT_LIMITS and the
 * serialized body to `maxBytes` (DELIVERY_BODY_MAX_BYTES, 64 KiB by default), whatever the event carried: events are
 * bounded where they are built, this is the last line for any that were not (rows stored by an older version).
 */
export const payloadFromEvent = (e: TrendEvent, maxBytes: number = TREND_EVENT_LIMITS.maxBytes): WebhookPayload => boundTrendText({
  trend_name: e.trend_name,
  category: e.category,
  severity: e.severity,
  velocity: e.velocity,
  timestamp: new Date(e.timestamp).toISOString(),
  summary: e.summary,
  source_link: e.source_link,
  recommended_next_steps: e.recommended_next_steps,
}, maxBytes);

/**
 * The test delivery: the same body every time for a subscription (its timestamp is the subscription's creation
 * time), in category `test/webhook`. It is marked as a test by the `X-Webhook-Test: true` header, so the body keeps
 * exactly the production fields. Its source_link is this service's own event catalog page (`publicBaseUrl`/docs/events),
 * never a site outside it.
 */
export const testPayload = (sub: { id: string; createdAt: Date; thresholdValue: number }, publicBaseUrl: string): WebhookPayload => ({
  trend_name: "Trendgate test event",
  category: "test/webhook",
  severity: "low",
  velocity: sub.thresholdValue,
  timestamp: sub.createdAt.toISOString(),
  summary: `Test delivery for webhook ${sub.id}. Verify the signature, then answer 2xx within 15 seconds.`,
  source_link: `${publicBaseUrl.replace(/\/$/, "")}/docs/events`,
  recommended_next_steps: ["Verify X-Webhook-Signature (or webhook-signature) with your signing secret", "Answer with any 2xx status"],
});

export const TEST_HEADER = "X-Webhook-Test";
