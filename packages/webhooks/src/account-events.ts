import { pushAccountEvents } from "@trendgate/db";
import type { FiringDeps } from "./firings.ts";
import { deliveryBody, enqueueDelivery } from "./jobs.ts";

const EVENT_BATCH = 500;
/** A fan-out stops starting new pages of account events after this long; the next tick goes on. */
const PASS_BUDGET_MS = 5000;

/**
 * Account events (a subscription disabled, a connection needing re-authorisation, ...) pushed to the subscriptions
 * that list their type, a page at a time within PASS_BUDGET_MS (run by the webhook tick under its lock). The
 * deliveries are written with the events marked pushed; the pending ones of active subscriptions are queued now (the
 * outbox sweeper re-queues any whose job is lost). Returns how many were queued.
 */
export async function pushAccountEventsNow(deps: Pick<FiringDeps, "db" | "queues" | "config">): Promise<number> {
  const { db, queues, config } = deps;
  const started = Date.now();
  let queued = 0;
  for (;;) {
    const { events, deliveries } = await pushAccountEvents(db, EVENT_BATCH);
    for (const d of deliveries) {
      if (d.status !== "pending" || d.subscriptionStatus !== "active") continue;
      await enqueueDelivery(queues, {
        delivery_id: d.id, webhook_id: d.subscriptionId, attempt: 1, trigger: "account_event",
        body: deliveryBody(d.payload, config.DELIVERY_BODY_MAX_BYTES), event: { type: d.type },
      });
      queued++;
    }
    if (events < EVENT_BATCH || Date.now() - started > PASS_BUDGET_MS) return queued;
  }
}
