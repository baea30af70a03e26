import { JOB_PAYLOADS, QUEUES, type TrendEvent } from "@trendgate/contracts";
import { accountRoutedSubscriptions, isDbUnavailable, markTrendEventsDispatched, recordSuppressions, unendedMutes, type RoutedSubscription } from "@trendgate/db";
import { chatSetups, intakeTrendEvents, type ChatSetup } from "@trendgate/operator";
import { dispatchOutbox } from "@trendgate/queues";
import { mutesHolding, type MuteRule } from "@trendgate/trends";
import { TtlCache } from "../ttl-cache.ts";
import type { ProcessorFactory } from "./types.ts";
import { routeToWebhooks } from "@trendgate/webhooks";
import { queueTrendEventPushes, workflowTargets, type WorkflowTarget } from "./workflow-pushes.ts";

/**
 * Routes a batch of trend events: muted ones nowhere (counted on their mutes), the rest to the webhook
 * subscriptions they fire (packages/webhooks firings.ts), the operator queue and the selected workflow. An account's
 * subscriptions are cached for WEBHOOK_SUBSCRIPTION_CACHE_MS, for the triggers only (the firing statements read the
 * subscription's current row). An account's chat and workflow connections (where
 * the operator queue and auto-pushes go) are cached for TREND_ROUTING_CACHE_MS: two reads per batch were a tenth of
 * this job's CPU.
 */
export const trendEvents: ProcessorFactory = {
  queue: QUEUES.trendEvents,
  create(deps) {
    const { db, queues, config, logger } = deps;
    const accounts = new TtlCache<RoutedSubscription[]>(config.WEBHOOK_SUBSCRIPTION_CACHE_MS);
    const subsOf = (accountId: string) => accounts.get(accountId, () => accountRoutedSubscriptions(db, accountId));
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
        const deliveries = await routeToWebhooks(deps, events, subsOf, now);
        // Dispatch is one unit: the events count as dispatched only once their webhook firings, operator items and
        // workflow pushes exist. A database outage fails the job (retried, and the sweeper routes undispatched events
        // again; each part is idempotent per event); any other failure of the operator queue or the workflow is
        // logged, so one broken integration does not hold back the others. Queueing what was committed may fail too:
        // the outbox sweeper queues it.
        const unlessOutage = (what: string) => (err: unknown) => {
          if (isDbUnavailable(err)) throw err;
          logger.warn({ err: String(err) }, what);
        };
        let operatorItems = 0;
        try {
          const setups = await routes(chatRoutes, events, (ids) => chatSetups(db, deps.registry, ids, config.OPERATOR_RENOTIFY_SECONDS));
          const r = await intakeTrendEvents(db, deps, events, new Date(), setups);
          operatorItems = r.changed;
          await dispatchOutbox(queues, r.outbox).catch((err) => logger.warn({ err: String(err) }, "operator messages left to the sweeper"));
        } catch (err) {
          unlessOutage("operator intake failed for this event batch")(err);
        }
        // The selected workflow (n8n) gets each event once, as its default_event.
        let workflowPushes = 0;
        try {
          const targets = await routes(workflowRoutes, events, (ids) => workflowTargets(db, deps.registry, ids));
          const rows = await queueTrendEventPushes(db, deps.registry, events, targets);
          workflowPushes = rows.length;
          await dispatchOutbox(queues, rows).catch((err) => logger.warn({ err: String(err) }, "workflow pushes left to the sweeper"));
        } catch (err) {
          unlessOutage("workflow pushes not queued for this event batch")(err);
        }
        await markTrendEventsDispatched(db, events.map((e: TrendEvent) => e.id));
        return { events: events.length, muted: held.length, deliveries, operator_items: operatorItems, workflow_pushes: workflowPushes };
      },
    };
  },
};
