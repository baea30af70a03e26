import { addOutboxMessages, appendOperatorItemEvents, insertOperatorItemIfAbsent, type OutboxRow, type Tx } from "@trendgate/db";
import type { Severity } from "@trendgate/contracts";
import type { OperatorDeps } from "./apply.ts";
import { SYSTEM_ACTOR } from "./actors.ts";
import { chatMessage } from "./messages.ts";
import { startEscalation } from "./escalation.ts";
import { chainAt, matchRoute, targetOf } from "./routing.ts";
import { chatSetupOf } from "./settings.ts";
import { renotifyAtFor } from "./state-machine.ts";

// Work for a person that is not a trend: an ads run a provider refused in part (its 4xx validation failures go
// to manual review). It becomes an operator item like a trend's, once per subject (`dedupKey`), so the same queue,
// chat card and acknowledge/resolve flow serve it. Opened only where the account has a chat connection (the operator
// queue is the chat connector's feature); the run record keeps the review marks either way.

export interface ReviewRequest {
  accountId: string;
  /** One item per subject, e.g. `ads_run:<plan id>`. */
  dedupKey: string;
  title: string;
  category: string;
  summary: string;
  severity: Severity;
  /** Where the details are (shown as the card's link). */
  link: string | null;
  /** Kept in the item's history. */
  data: Record<string, unknown>;
  /** What routing rules match: `ads_review` (default) or `ads_approval`, and the opening event's type. */
  source?: "ads_review" | "ads_approval";
  eventType?: string;
  /** An ads-approval item's plan. */
  adsPlanId?: string;
}

/** Opens the review item in the caller's transaction; returns the outbox rows to dispatch after commit (none when
 * the account has no chat connection, the item exists already, or no channel is saved yet). */
export async function openReviewItem(tx: Tx, deps: OperatorDeps, r: ReviewRequest, now = new Date()): Promise<OutboxRow[]> {
  const setup = await chatSetupOf(tx, deps.registry, r.accountId, deps.config.OPERATOR_RENOTIFY_SECONDS);
  if (!setup) return [];
  const source = r.source ?? "ads_review";
  const route = await matchRoute(setup.routes, { category: r.category, severity: r.severity, eventType: r.eventType ?? `${source}.opened`, source });
  const item = await insertOperatorItemIfAbsent(tx, {
    accountId: r.accountId, dedupKey: r.dedupKey, trendId: null, severity: r.severity, title: r.title, category: r.category,
    summary: r.summary, velocity: 0, briefingUrl: r.link, routeId: route?.id ?? null, source, adsPlanId: r.adsPlanId ?? null,
    escalationChain: chainAt(setup, route?.id ?? null),
    renotifyAt: renotifyAtFor("open", r.severity, now, setup.settings.renotifyMs), // cleared when its route escalates instead
  });
  const target = item && targetOf(setup, item);
  if (!item || !target) return [];
  await appendOperatorItemEvents(tx, [{ itemId: item.id, accountId: item.accountId, action: "opened", fromState: null, toState: "open", actor: SYSTEM_ACTOR, version: item.version, data: { ...r.data, route_id: item.routeId } }]);
  return [
    ...(target.channelId ? await addOutboxMessages(tx, [chatMessage(item, "post_item", target.connection.id)]) : []),
    ...await startEscalation(tx, item, target, now),
  ];
}
