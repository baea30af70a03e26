import { JOB_PAYLOADS, QUEUES, type TrendEvent } from "@trendgate/contracts";
import { enqueueDeliveries, payloadFromEvent, serializePayload, triggerFires, type DeliveryJob } from "@trendgate/connector-webhook";
import { fireDigest, fireInstant, fireUnthrottled, markTrendEventsDispatched, recordMissedDelivery, type FireInput } from "@trendgate/db";
import { TtlCache } from "../ttl-cache.ts";
import type { ProcessorFactory } from "./types.ts";

type Sub = { id: string; status: string; triggerType: string; thresholdValue: number; category: string | null; deliveryMode: string; cooldownSeconds: number };

/**
 * Matches a batch of trend events against their accounts' webhook subscriptions and creates the deliveries.
 * Cooldown is decided atomically in Postgres (fireInstant/fireDigest), so any number of workers may process events
 * for the same subscription at once; subscriptions without a cooldown get all their deliveries in one insert.
 * Delivery rows are committed before their jobs are queued; if queueing fails the sweeper queues them later.
 * Paused subscriptions keep their deliveries pending (queued on resume); disabled ones record them as failed
 * (re-sent by `recover` once the endpoint works again). An account's subscriptions are cached for
 * WEBHOOK_SUBSCRIPTION_CACHE_MS; status and cooldown are re-checked by the firing statements themselves.
 */
export const trendEvents: ProcessorFactory = {
  queue: QUEUES.trendEvents,
  create({ db, queues, config }) {
    const accounts = new TtlCache<Sub[]>(config.WEBHOOK_SUBSCRIPTION_CACHE_MS);
    const subsOf = (accountId: string) => accounts.get(accountId, () => db.webhookSubscription.findMany({
      where: { accountId },
      select: { id: true, status: true, triggerType: true, thresholdValue: true, category: true, deliveryMode: true, cooldownSeconds: true },
    }));

    return {
      async process(job) {
        const { events } = JOB_PAYLOADS[QUEUES.trendEvents].parse(job.data);
        const unthrottled: FireInput[] = [];
        const throttled = new Map<string, { sub: Sub; fires: FireInput[] }>();
        const active = new Set<string>();
        const bodies = new Map<string, string>();
        for (const event of events) {
          const payload = payloadFromEvent(event);
          bodies.set(event.id, serializePayload(payload));
          for (const sub of await subsOf(event.account_id)) {
            if (!triggerFires(sub, event)) continue;
            const fire = { subscriptionId: sub.id, eventId: event.id, payload, velocity: event.velocity };
            if (sub.status === "disabled") { await recordMissedDelivery(db, fire); continue; }
            if (sub.status === "active") active.add(sub.id);
            if (sub.deliveryMode === "instant_stream" && sub.cooldownSeconds === 0) unthrottled.push(fire);
            else (throttled.get(sub.id) ?? throttled.set(sub.id, { sub, fires: [] }).get(sub.id)!).fires.push(fire);
          }
        }

        const jobs: { job: DeliveryJob; delayMs: number }[] = [];
        for (const d of await fireUnthrottled(db, unthrottled))
          jobs.push({ job: { delivery_id: d.id, webhook_id: d.subscription_id, attempt: 1, trigger: "trend_event", body: bodies.get(d.event_id)! }, delayMs: 0 });
        for (const { sub, fires } of throttled.values()) {
          for (const fire of fires) {
            if (sub.deliveryMode === "cooldown_digest") {
              const held = await fireDigest(db, fire);
              // A held digest's payload may still be replaced by a stronger event: its job reads the row when due.
              if (held) jobs.push({ job: { delivery_id: held.id, webhook_id: sub.id, attempt: 1, trigger: "trend_event", body: "" }, delayMs: held.dueAt.getTime() - Date.now() });
            } else {
              const id = await fireInstant(db, fire);
              if (id) jobs.push({ job: { delivery_id: id, webhook_id: sub.id, attempt: 1, trigger: "trend_event", body: bodies.get(fire.eventId)! }, delayMs: 0 });
            }
          }
        }

        await enqueueDeliveries(queues, jobs.filter((j) => active.has(j.job.webhook_id))); // paused: held until resume
        await markTrendEventsDispatched(db, events.map((e: TrendEvent) => e.id));
        return { events: events.length, deliveries: jobs.length };
      },
    };
  },
};
