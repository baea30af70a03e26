import { dueFirings, loadRoutedSubscriptions, recordWindowDrop, releaseFirings } from "@trendgate/db";
import { fireWebhooks, type Firing, type FiringDeps } from "./firings.ts";
import { payloadFromEvent } from "./payload.ts";

const BATCH = 500;

/**
 * Decides the firings whose trigger window has ended (run by the webhook tick, apps/worker/src/processors/webhook-ticks.ts, under its
 * lock: two runs reading the same due rows would each record a suppressed one): delivered, through
 * the subscription's cooldown as it is now, when a detection pass still found the trend anomalous at least the window
 * after the firing was held; otherwise recorded as suppressed (`trigger_window`). A firing whose event or subscription
 * is gone is dropped. Each row is forgotten only after it was decided; a crash in between decides it again, and the
 * delivery's (subscription, event) key keeps that to one delivery.
 */
export async function releaseHeldFirings(deps: FiringDeps): Promise<{ delivered: number; suppressed: number }> {
  let delivered = 0;
  let suppressed = 0;
  for (;;) {
    const due = await dueFirings(deps.db, BATCH);
    if (!due.length) break;
    const subs = new Map((await loadRoutedSubscriptions(deps.db, [...new Set(due.map((d) => d.subscriptionId))])).map((s) => [s.id, s]));
    const fire: Firing[] = [];
    for (const d of due) {
      const sub = subs.get(d.subscriptionId);
      if (!sub || !d.event) continue;
      if (d.lasted) { fire.push({ sub, event: d.event }); continue; }
      suppressed++;
      await recordWindowDrop(deps.db, { subscriptionId: sub.id, eventId: d.event.id, payload: payloadFromEvent(d.event, deps.config.DELIVERY_BODY_MAX_BYTES), velocity: d.event.velocity },
        "trigger_window", `no longer anomalous ${d.windowMinutes} min after the event (the trigger window)`);
    }
    delivered += await fireWebhooks(deps, fire);
    await releaseFirings(deps.db, due);
    if (due.length < BATCH) break;
  }
  return { delivered, suppressed };
}
