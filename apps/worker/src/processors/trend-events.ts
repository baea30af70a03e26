import { JOB_PAYLOADS, QUEUES, severityRank, type Severity, type TrendEvent, type WebhookPayload } from "@trendgate/contracts";
import { enqueueDeliveries, payloadFromEvent, serializePayload, triggerFires, type DeliveryJob } from "@trendgate/connector-webhook";
import { fireDigest, fireInstant, fireUnthrottled, markTrendEventsDispatched, recordCooldownDrop, recordSuppressions, unendedMutes, type FireInput, type Fired } from "@trendgate/db";
import { chatSetups, intakeTrendEvents, type ChatSetup } from "@trendgate/operator";
import { dispatchOutbox } from "@trendgate/queues";
import { mutesHolding, type MuteRule } from "@trendgate/trends";
import { TtlCache } from "../ttl-cache.ts";
import type { ProcessorFactory } from "./types.ts";
import { queueTrendEventPushes, workflowTargets, type WorkflowTarget } from "./workflow-pushes.ts";

/**
 * The order a subscription's firings of one batch meet its cooldown: the most severe first, then the fastest, so
 * that when only one may pass, the one delivered is the strongest (not whichever came first in the batch).
 */
const strongestFirst = (a: FireInput, b: FireInput) =>
  severityRank((b.payload as WebhookPayload).severity as Severity) - severityRank((a.payload as WebhookPayload).severity as Severity) || b.velocity - a.velocity;

type Sub = { id: string; status: string; triggerType: string; thresholdValue: number; category: string | null; deliveryMode: string; cooldownSeconds: number };

/**
 * Matches a batch of trend events against their accounts' webhook subscriptions and creates the deliveries.
 * Cooldown is decided atomically in Postgres (fireInstant/fireDigest), so any number of workers may process events
 * for the same subscription at once; subscriptions without a cooldown get all their deliveries in one insert.
 * Delivery rows are committed before their jobs are queued; if queueing fails the sweeper queues them later.
 * Paused subscriptions keep their deliveries pending (queued on resume); disabled ones record them as failed
 * (re-sent by `recover` once the endpoint works again). An account's subscriptions are cached for
 * WEBHOOK_SUBSCRIPTION_CACHE_MS, for the triggers only: whether a firing is pending or failed, and whether it is
 * queued now, is decided by the firing statements from the subscription's current row (a subscription disabled by
 * a 410 a moment ago still gets a row for every firing), and a firing routed as unthrottled whose subscription has
 * since been given a cooldown goes through the cooldown path. An account's chat and workflow connections (where
 * the operator queue and auto-pushes go) are cached for TREND_ROUTING_CACHE_MS: two reads per batch were a tenth of
 * this job's CPU.
 */
export const trendEvents: ProcessorFactory = {
  queue: QUEUES.trendEvents,
  create(deps) {
    const { db, queues, config, logger } = deps;
    const accounts = new TtlCache<Sub[]>(config.WEBHOOK_SUBSCRIPTION_CACHE_MS);
    const subsOf = (accountId: string) => accounts.get(accountId, () => db.webhookSubscription.findMany({
      where: { accountId },
      select: { id: true, status: true, triggerType: true, thresholdValue: true, category: true, deliveryMode: true, cooldownSeconds: true, eventTypes: true, filter: true },
    }));
    const chatRoutes = new TtlCache<ChatSetup | null>(config.TREND_ROUTING_CACHE_MS);
    const workflowRoutes = new TtlCache<WorkflowTarget | null>(config.TREND_ROUTING_CACHE_MS);
    const mutes = new TtlCache<MuteRule[]>(config.TREND_ROUTING_CACHE_MS);
    /** What `load` finds for the batch's accounts, through `cache` (one entry per account, none stored as null). */
    async function routes<V>(cache: TtlCache<V | null>, events: TrendEvent[], load: (accountIds: string[]) => Promise<Map<string, V>>) {
      const found = new Map<string, V>();
      for (const accountId of new Set(events.map((e) => e.account_id))) {
        const v = await cache.get(accountId, async () => (await load([accountId])).get(accountId) ?? null);
        if (v) found.set(accountId, v);
      }
      return found;
    }

    return {
      async process(job) {
        const batch = JOB_PAYLOADS[QUEUES.trendEvents].parse(job.data).events;
        // Muted events go nowhere (counted on their mutes); the rest are routed below.
        const now = new Date();
        const events: TrendEvent[] = [];
        const held: { eventId: string; muteIds: string[] }[] = [];
        for (const e of batch) {
          const holding = mutesHolding(await mutes.get(e.account_id, () => unendedMutes(db, e.account_id, now)), e, now);
          if (holding.length) held.push({ eventId: e.id, muteIds: holding.map((m) => m.id) });
          else events.push(e);
        }
        await recordSuppressions(db, held);
        const unthrottled: FireInput[] = [];
        const throttled = new Map<string, { mode: string; fires: FireInput[] }>();
        const throttle = (fire: FireInput, mode: string) =>
          (throttled.get(fire.subscriptionId) ?? throttled.set(fire.subscriptionId, { mode, fires: [] }).get(fire.subscriptionId)!).fires.push(fire);
        const bodies = new Map<string, string>();
        for (const event of events) {
          const payload = payloadFromEvent(event, config.DELIVERY_BODY_MAX_BYTES);
          bodies.set(event.id, serializePayload(payload, config.DELIVERY_BODY_MAX_BYTES));
          for (const sub of await subsOf(event.account_id)) {
            if (!triggerFires(sub, event)) continue;
            const fire = { subscriptionId: sub.id, eventId: event.id, payload, velocity: event.velocity };
            if (sub.deliveryMode === "instant_stream" && sub.cooldownSeconds === 0) unthrottled.push(fire);
            else throttle(fire, sub.deliveryMode);
          }
        }

        const jobs: { job: DeliveryJob; delayMs: number }[] = [];
        // Queued now only when pending and the subscription is active (per the row, not the cache); paused ones are
        // held until resume, disabled ones were recorded as failed.
        const eventInfo = new Map(events.map((e) => [e.id, { type: e.type, trend_id: e.trend_id }]));
        const queue = (d: Fired | null, body: string) => {
          if (d && d.status === "pending" && d.subscriptionStatus === "active") {
            // A held digest (body "") may still take a stronger event: its job reads body and event from the row.
            const event = body ? eventInfo.get(d.eventId) : undefined;
            jobs.push({ job: { delivery_id: d.id, webhook_id: d.subscriptionId, attempt: 1, trigger: "trend_event", body, event }, delayMs: d.dueAt.getTime() - Date.now() });
          }
        };
        const { fired, throttled: rerouted } = await fireUnthrottled(db, unthrottled);
        for (const d of fired) queue(d, bodies.get(d.eventId)!);
        for (const { fire, deliveryMode } of rerouted) throttle(fire, deliveryMode);
        for (const { mode, fires } of throttled.values()) {
          for (const fire of fires.sort(strongestFirst)) {
            // A held digest's payload may still be replaced by a stronger event: its job reads the row when due.
            if (mode === "cooldown_digest") queue(await fireDigest(db, fire), "");
            else {
              const d = await fireInstant(db, fire);
              if (d) queue(d, bodies.get(fire.eventId)!);
              else await recordCooldownDrop(db, fire); // dropped by the cooldown: shown in the executions
            }
          }
        }

        await enqueueDeliveries(queues, jobs);
        await markTrendEventsDispatched(db, events.map((e: TrendEvent) => e.id));
        // Operator queue, after the webhooks and never failing their job: idempotent per event and item; messages it
        // committed but could not queue are queued by the outbox sweeper.
        let operatorItems = 0;
        try {
          const setups = await routes(chatRoutes, events, (ids) => chatSetups(db, deps.registry, ids, config.OPERATOR_RENOTIFY_SECONDS));
          const r = await intakeTrendEvents(db, deps, events, new Date(), setups);
          operatorItems = r.changed;
          await dispatchOutbox(queues, r.outbox);
        } catch (err) {
          logger.warn({ err: String(err) }, "operator intake failed for this event batch");
        }
        // The selected workflow (n8n) gets each event once, as its default_event; never failing this job either.
        let workflowPushes = 0;
        try {
          const targets = await routes(workflowRoutes, events, (ids) => workflowTargets(db, deps.registry, ids));
          const rows = await queueTrendEventPushes(db, deps.registry, events, targets);
          workflowPushes = rows.length;
          await dispatchOutbox(queues, rows);
        } catch (err) {
          logger.warn({ err: String(err) }, "workflow pushes not queued for this event batch");
        }
        return { events: events.length, muted: held.length, deliveries: jobs.length, operator_items: operatorItems, workflow_pushes: workflowPushes };
      },
    };
  },
};
