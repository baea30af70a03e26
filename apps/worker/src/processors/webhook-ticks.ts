import { deliveryBody, enqueueDelivery } from "@trendgate/connector-webhook";
import { QUEUES } from "@trendgate/contracts";
import { pushAccountEvents } from "@trendgate/db";
import { underFleetLock } from "../sweepers/outbox-sweeper.ts";
import { releaseHeldFirings } from "../sweepers/held-firings.ts";
import type { ProcessorFactory, WorkerDeps } from "./types.ts";

const LOCK_KEY = 0x7467_0002; // pg advisory lock id: one webhook tick at a time across the fleet
const EVENT_BATCH = 500;
/** A tick stops starting new pages of account events after this long; the next tick goes on. */
const PASS_BUDGET_MS = 5000;

/**
 * Webhooks' clock, one job per WEBHOOK_TICK_SECONDS for the fleet (job scheduler): account events fanned out to the
 * subscriptions that list them (an escalation's notify_webhook step among them), then held trigger-window firings
 * whose window ended decided (sweepers/held-firings.ts). A tick that outlasts its interval can overlap the next one
 * on another worker: the second finds the lock taken and does nothing (it would decide the same held rows again).
 */
export const webhookTicks: ProcessorFactory = {
  queue: QUEUES.webhookTicks,
  create(deps) {
    return {
      concurrency: 1,
      async process() {
        // null: another worker's tick holds the lock.
        return underFleetLock<{ pushed: number; delivered: number; suppressed: number } | null>(deps.db, LOCK_KEY, null, async () => {
          const pushed = await pushAccountEventsNow(deps);
          const held = await releaseHeldFirings(deps);
          if (held.delivered || held.suppressed) deps.logger.info(held, "held firings decided at the end of their trigger windows");
          return { pushed, ...held };
        });
      },
    };
  },
};

/**
 * Account events (a subscription disabled, a connection needing re-authorisation, ...) pushed to the subscriptions
 * that list their type, a page at a time within PASS_BUDGET_MS. The deliveries are written with the events marked
 * pushed; the pending ones of active subscriptions are queued now (the outbox sweeper re-queues any whose job is lost).
 */
async function pushAccountEventsNow(deps: WorkerDeps): Promise<number> {
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
