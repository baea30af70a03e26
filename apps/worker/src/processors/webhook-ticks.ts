import { QUEUES } from "@trendgate/contracts";
import { underFleetLock } from "@trendgate/db";
import { pushAccountEventsNow, releaseHeldFirings } from "@trendgate/webhooks";
import type { ProcessorFactory } from "./types.ts";

const LOCK_KEY = 0x7467_0002; // pg advisory lock id: one webhook tick at a time across the fleet

/**
 * Webhooks' clock, one job per WEBHOOK_TICK_SECONDS for the fleet (job scheduler): account events fanned out to the
 * subscriptions that list them (an escalation's notify_webhook step among them), then held trigger-window firings
 * whose window ended decided (both in packages/webhooks). A tick that outlasts its interval can overlap the next one
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
