import type { OutboxRow } from "@trendgate/db";
import type { DeliveryToQueue } from "@trendgate/webhooks";

// What a route handler answers. Its own file because the idempotency store records replies, and the gateway's
// dependencies (which the route types need) hold that store.
export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /**
   * Outbox messages the handler's transaction added. The router queues them once the transaction has committed (a
   * failure is left to the outbox sweeper); they are not part of the answer and never recorded for replays.
   */
  outbox?: OutboxRow[];
  /** Webhook delivery jobs of rows the handler committed: queued by the router after the commit, like `outbox`. */
  deliveries?: DeliveryToQueue[];
}

/** The reply as answered and recorded: without the messages queued after it. */
export const shown = ({ outbox: _queued, deliveries: _deliveries, ...reply }: Reply): Reply => reply;
