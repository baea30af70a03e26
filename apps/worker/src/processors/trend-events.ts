import { JOB_PAYLOADS, QUEUES } from "@trendgate/contracts";
import { enqueueDelivery, payloadFromEvent, serializePayload, triggerFires } from "@trendgate/connector-webhook";
import { fireDigest, fireInstant, markTrendEventDispatched, recordMissedDelivery } from "@trendgate/db";
import type { ProcessorFactory } from "./types.ts";

/**
 * Matches a trend event against the account's webhook subscriptions. Cooldown is decided atomically in Postgres
 * (see fireInstant/fireDigest), so any number of workers may process events for the same subscription at once.
 * The delivery row is committed before its job is queued; if queueing fails the sweeper queues it later.
 * Paused subscriptions keep their deliveries pending (queued on resume); disabled ones record them as failed
 * (re-sent by `recover` once the endpoint works again).
 */
export const trendEvents: ProcessorFactory = {
  queue: QUEUES.trendEvents,
  create: ({ db, queues }) => ({
    async process(job) {
      const event = JOB_PAYLOADS[QUEUES.trendEvents].parse(job.data);
      const subs = await db.webhookSubscription.findMany({
        where: { accountId: event.account_id },
        select: { id: true, status: true, triggerType: true, thresholdValue: true, category: true, deliveryMode: true },
      });
      const payload = payloadFromEvent(event);
      const body = serializePayload(payload);
      let delivered = 0;
      for (const sub of subs) {
        if (!triggerFires(sub, event)) continue;
        const input = { subscriptionId: sub.id, eventId: event.id, payload, velocity: event.velocity };
        if (sub.status === "disabled") { await recordMissedDelivery(db, input); continue; }
        const fired = sub.deliveryMode === "cooldown_digest" ? await fireDigest(db, input) : await fireInstant(db, input).then((id) => id && { id, dueAt: new Date() });
        if (!fired) continue;
        delivered++;
        if (sub.status !== "active") continue; // paused: held until resume
        // A digest's held payload may still be replaced by a stronger event: its job re-reads the row when due.
        await enqueueDelivery(queues, { delivery_id: fired.id, webhook_id: sub.id, attempt: 1, trigger: "trend_event", body: sub.deliveryMode === "cooldown_digest" ? "" : body }, { delayMs: fired.dueAt.getTime() - Date.now() });
      }
      await markTrendEventDispatched(db, event.id);
      return { matched: subs.length, delivered };
    },
  }),
};
