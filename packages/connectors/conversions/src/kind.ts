import type { z } from "zod";
import type { ProviderEnv, ProviderError, ProviderManifest } from "@trendgate/connector-core";
import type { ConversionMessagePayload, ConversionPush } from "@trendgate/contracts";

// The conversions connector kind: send conversion events (a purchase, a sign-up, ...) to an ads platform's
// conversions API, in batches per pixel. A provider (packages/connectors/conversions/src/<provider>/) implements
// ConversionsConnector. Events are queued as pushed (the provider's push schema, `ConversionPush`) with their personal
// identifiers already hashed (hashIdentifiers, at push time), and the provider's client turns a batch of them into its
// own request body. A failure of the whole
// request is thrown as a ProviderError (@trendgate/connector-core); a failure the provider names per event comes back
// in that event's result, so the other events of the batch still go through.

/**
 * The batch a queued event belongs to, kept in the message's subject_id: events are sent together only for the same
 * connection, pixel and test id (test events never ride with real ones).
 */
export const conversionBatchGroup = (p: Pick<ConversionMessagePayload, "pixel_id" | "test_id">): string =>
  p.test_id ? `${p.pixel_id}|test:${p.test_id}` : p.pixel_id;

/** `status`: the HTTP status of the provider's answer that accepted the event (kept on its attempt record). */
export type ConversionResult = { ok: true; status?: number } | { ok: false; error: ProviderError };

export interface ConversionsClient {
  /**
   * Sends up to `limits.maxBatchSize` events for one pixel in one request. Returns one result per event, in order.
   * Throws a ProviderError when the whole request failed (401, 429, 5xx, network, ...).
   */
  sendBatch(pixelId: string, events: ConversionPush[], opts?: { testId?: string }): Promise<ConversionResult[]>;
}

export interface ConversionsConnector {
  manifest: ProviderManifest<"conversions">;
  /**
   * A client bound to one connection's access token (OAuth or a conversion access token); `env` (PROVIDER_ENV) holds
   * the provider's own settings (manifest.env), defaults when absent.
   */
  client(ctx: { baseUrl: string; accessToken: string; env?: ProviderEnv }): ConversionsClient;
  /** Hashes the personal identifiers of a push as the provider wants them (at push time: raw ones are never stored). */
  hashIdentifiers(push: ConversionPush): ConversionPush;
  /** The push route's body (`{event_name?, data, test_id?}`); `data.event_at` comes out as epoch ms. */
  pushBody: z.ZodType;
  /** The body of the non-OAuth credential route (`{access_token}`): a token made in the provider's console. */
  tokenBody: z.ZodType;
  limits: {
    /** Events per request. */
    maxBatchSize: number;
    /** Oldest event the provider accepts (ms before now). */
    maxEventAgeMs: number;
    /** Furthest in the future the provider accepts (ms after now). */
    maxFutureMs: number;
  };
}
