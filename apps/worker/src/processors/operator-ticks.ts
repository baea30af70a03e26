import { QUEUES } from "@trendgate/contracts";
import { runOperatorTick } from "@trendgate/operator";
import { dispatchOutbox } from "@trendgate/queues";
import type { ProcessorFactory } from "./types.ts";

/**
 * The operator queue's clock, one job per OPERATOR_TICK_SECONDS for the fleet (job scheduler): snoozes that ended
 * reopen their items, open critical items due for a reminder get one (packages/operator/src/tick.ts). The chat
 * messages it adds are committed with each change; queueing them here is best effort (the outbox sweeper queues any
 * that are not).
 */
export const operatorTicks: ProcessorFactory = {
  queue: QUEUES.operatorTicks,
  create(deps) {
    return {
      concurrency: 1,
      async process() {
        const r = await runOperatorTick(deps.db, deps);
        if (r.outbox.length) await dispatchOutbox(deps.queues, r.outbox).catch((err) =>
          deps.logger.warn({ err: String(err), messages: r.outbox.length }, "operator tick: dispatch failed; the sweeper will queue the messages"));
        return { unsnoozed: r.unsnoozed, renotified: r.renotified };
      },
    };
  },
};
