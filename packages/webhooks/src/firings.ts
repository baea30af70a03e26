import type { Config } from "@trendgate/config";
import { type Severity, type TrendEvent, type WebhookPayload } from "@trendgate/contracts";
import { heldByWindow, inRecoveryWindow } from "@trendgate/trends";
import {
  fireDigest, fireInstant, fireUnthrottled, holdFirings, recordCooldownDrop, recordWindowDrop, type Db, type FireInput, type Fired, type HoldInput,
  type RoutedSubscription,
} from "@trendgate/db";
import type { Queues } from "@trendgate/queues";
import { strongestFirst } from "./backtest.ts";
import { enqueueDeliveries, serializePayload, type DeliveryJob } from "./jobs.ts";
import { payloadFromEvent } from "./payload.ts";
import { triggerFires } from "./triggers.ts";

// What a trend event does to an account's webhook subscriptions: each subscription whose trigger it fires gets a
// delivery now (through its cooldown), or holds it for its trigger window, or drops it inside its recovery window.

/** What firing needs of its caller (a worker's deps satisfy it). */
export interface FiringDeps {
  db: Db;
  queues: Queues;
  config: Pick<Config, "DELIVERY_BODY_MAX_BYTES" | "DETECTION_INTERVAL_SECONDS">;
}

export interface Firing {
  sub: RoutedSubscription;
  event: TrendEvent;
}

/**
 * The order a subscription's firings of one batch meet its cooldown (the backtest's own, so both pick the same trend):
 * when only one may pass, the one delivered is the strongest, not whichever came first in the batch.
 */
const strength = (f: FireInput) => ({ severity: (f.payload as WebhookPayload).severity as Severity, velocity: f.velocity });
const byStrength = (a: FireInput, b: FireInput) => strongestFirst(strength(a), strength(b));

/**
 * Routes a batch of events to the subscriptions they fire: delivered now (fireWebhooks), held for a trigger window
 * (an end never is: it closes what was delivered), or dropped in a recovery window (recorded as suppressed).
 * Returns how many deliveries were queued now.
 */
export async function routeToWebhooks(deps: FiringDeps, events: TrendEvent[], subsOf: (accountId: string) => Promise<RoutedSubscription[]>, now = new Date()) {
  const fire: Firing[] = [];
  const hold: HoldInput[] = [];
  for (const event of events) {
    for (const sub of await subsOf(event.account_id)) {
      if (!triggerFires(sub, event)) continue;
      if (inRecoveryWindow(sub, event, now)) {
        const minutes = Math.round((now.getTime() - Date.parse(event.previous_ended_at!)) / 60_000);
        await recordWindowDrop(deps.db, fireInput(sub, event, deps), "recovery_window",
          `re-detected ${minutes} min after its trend ended, inside the recovery window (${sub.recoveryWindowMinutes} min)`);
      } else if (heldByWindow(sub, event)) {
        hold.push({ subscriptionId: sub.id, event, windowMinutes: sub.triggerWindowMinutes });
      } else fire.push({ sub, event });
    }
  }
  await holdFirings(deps.db, hold, deps.config.DETECTION_INTERVAL_SECONDS);
  return fireWebhooks(deps, fire);
}

const fireInput = (sub: RoutedSubscription, event: TrendEvent, deps: FiringDeps): FireInput =>
  ({ subscriptionId: sub.id, eventId: event.id, payload: payloadFromEvent(event, deps.config.DELIVERY_BODY_MAX_BYTES), velocity: event.velocity });

/**
 * Creates the deliveries of these firings and queues their jobs. Cooldown is decided atomically in Postgres
 * (fireInstant/fireDigest), so any number of workers may fire for the same subscription at once; subscriptions without
 * a cooldown get all their deliveries in one insert. Delivery rows are committed before their jobs are queued; if
 * queueing fails the sweeper queues them later. Paused subscriptions keep their deliveries pending (queued on
 * resume); disabled ones record them as failed (re-sent by `recover`). Whether a firing is pending or failed, and
 * whether it is queued now, is decided by the firing statements from the subscription's current row (a subscription
 * disabled by a 410 a moment ago still gets a row for every firing), and a firing routed as unthrottled whose
 * subscription has since been given a cooldown goes through the cooldown path.
 */
export async function fireWebhooks(deps: FiringDeps, firings: Firing[]): Promise<number> {
  const { db, queues, config } = deps;
  const unthrottled: FireInput[] = [];
  const throttled = new Map<string, { mode: string; fires: FireInput[] }>();
  const throttle = (fire: FireInput, mode: string) =>
    (throttled.get(fire.subscriptionId) ?? throttled.set(fire.subscriptionId, { mode, fires: [] }).get(fire.subscriptionId)!).fires.push(fire);
  // Built once per event (an event fires many subscriptions): its payload, body and routing facts.
  const perEvent = new Map<string, { payload: WebhookPayload; body: string; info: { type: TrendEvent["type"]; trend_id: string } }>();
  for (const { sub, event } of firings) {
    let e = perEvent.get(event.id);
    if (!e) {
      const payload = payloadFromEvent(event, config.DELIVERY_BODY_MAX_BYTES);
      perEvent.set(event.id, (e = { payload, body: serializePayload(payload, config.DELIVERY_BODY_MAX_BYTES), info: { type: event.type, trend_id: event.trend_id } }));
    }
    const fire: FireInput = { subscriptionId: sub.id, eventId: event.id, payload: e.payload, velocity: event.velocity };
    if (sub.deliveryMode === "instant_stream" && sub.cooldownSeconds === 0) unthrottled.push(fire);
    else throttle(fire, sub.deliveryMode);
  }

  const jobs: { job: DeliveryJob; delayMs: number }[] = [];
  // Queued now only when pending and the subscription is active (per the row, not the cache); paused ones are
  // held until resume, disabled ones were recorded as failed.
  const queue = (d: Fired | null, body: string) => {
    if (d && d.status === "pending" && d.subscriptionStatus === "active") {
      // A held digest (body "") may still take a stronger event: its job reads body and event from the row.
      const event = body ? perEvent.get(d.eventId)?.info : undefined;
      jobs.push({ job: { delivery_id: d.id, webhook_id: d.subscriptionId, attempt: 1, trigger: "trend_event", body, event }, delayMs: d.dueAt.getTime() - Date.now() });
    }
  };
  const { fired, throttled: rerouted } = await fireUnthrottled(db, unthrottled);
  for (const d of fired) queue(d, perEvent.get(d.eventId)!.body);
  for (const { fire, deliveryMode } of rerouted) throttle(fire, deliveryMode);
  for (const { mode, fires } of throttled.values()) {
    for (const fire of fires.sort(byStrength)) {
      // A held digest's payload may still be replaced by a stronger event: its job reads the row when due.
      if (mode === "cooldown_digest") queue(await fireDigest(db, fire), "");
      else {
        const d = await fireInstant(db, fire);
        if (d) queue(d, perEvent.get(fire.eventId)!.body);
        else await recordCooldownDrop(db, fire); // dropped by the cooldown: shown in the executions
      }
    }
  }
  await enqueueDeliveries(queues, jobs);
  return jobs.length;
}
