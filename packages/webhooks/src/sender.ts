import type { SecretBox } from "@trendgate/crypto";
import type { SendableSubscription } from "@trendgate/db";
import { classify, redactSignatures, signDelivery, type OutboundClient, type OutboundResult, type Verdict } from "@trendgate/delivery";
import { TEST_HEADER } from "./payload.ts";

// The body's fields are fixed by the API's contract, so what kind of event it is, and which trend (to close on
// trend.ended what trend.detected opened), travel as headers.
export const EVENT_TYPE_HEADER = "X-Webhook-Event-Type";
export const TREND_ID_HEADER = "X-Webhook-Trend-Id";
/** The event behind a delivery: a trend event's type and trend, or an operational event's type alone. */
export type DeliveryEvent = { type: string; trend_id?: string | null };
/** What an execution record shows for a custom header's value. */
export const CUSTOM_HEADER_SHOWN = "(set; not shown)";

export interface SendResult {
  result: OutboundResult;
  verdict: Verdict;
  headersSent: Record<string, string>;
  bodyBytes: number;
}

/** Signs and POSTs one delivery attempt. Knows nothing of queues or retries. */
export class WebhookSender {
  constructor(private readonly client: OutboundClient, private readonly box: SecretBox) {}

  /** The secrets that sign now: the current one, plus the previous one during a rotation's grace period. */
  secretsOf(sub: SendableSubscription, now = new Date()): string[] {
    const secrets = [this.box.open(sub.secretCiphertext)];
    if (sub.previousSecretCiphertext && sub.previousSecretExpiresAt && sub.previousSecretExpiresAt > now)
      secrets.push(this.box.open(sub.previousSecretCiphertext));
    return secrets;
  }

  /** The subscription's own headers (an API gateway's credential, say), opened; values never leave in records. */
  customHeaders(sub: Pick<SendableSubscription, "headersCiphertext">): Record<string, string> {
    return sub.headersCiphertext ? JSON.parse(this.box.open(sub.headersCiphertext)) as Record<string, string> : {};
  }

  async send(sub: SendableSubscription, secrets: string[], deliveryId: string, body: string, isTest: boolean, event?: DeliveryEvent | null): Promise<SendResult> {
    const custom = this.customHeaders(sub);
    const headers: Record<string, string> = {
      ...custom,
      "Content-Type": "application/json",
      ...signDelivery(secrets, deliveryId, Math.floor(Date.now() / 1000), body),
      ...(isTest ? { [TEST_HEADER]: "true" } : {}),
      ...(event ? { [EVENT_TYPE_HEADER]: event.type } : {}),
      ...(event?.trend_id ? { [TREND_ID_HEADER]: event.trend_id } : {}),
    };
    const result = await this.client.request("POST", sub.url, { body, headers });
    const recorded = redactSignatures(headers);
    for (const name of Object.keys(custom)) recorded[name] = CUSTOM_HEADER_SHOWN;
    return { result, verdict: classify(result), headersSent: recorded, bodyBytes: Buffer.byteLength(body) };
  }
}
