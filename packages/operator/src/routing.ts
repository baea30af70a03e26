import { categoryWithin, severityRank, type EscalationStep, type RouteMatch, type Severity } from "@trendgate/contracts";
import type { OperatorItemRow, OperatorRouteRow } from "@trendgate/db";
import { escalationSteps, type ChatConnectionRow, type ChatSetup } from "./settings.ts";

// Operator routing: which rule an item opens under (the first whose conditions all hold), and where an item's
// messages go (its rule's provider and channel, or the default route: the chat settings' saved channel).

/** What a rule is matched against. `signalSources` is read only when a rule asks for sources (it costs a query). */
export interface RouteFacts {
  category: string;
  severity: Severity;
  eventType: string;
  /** trends | ads_approval */
  source: string;
  signalSources?: () => Promise<string[]>;
}

const any = <T>(list: readonly T[] | undefined) => !list || list.length === 0;

async function matches(m: RouteMatch, f: RouteFacts, sources: () => Promise<string[]>): Promise<boolean> {
  if (m.min_severity && severityRank(f.severity) < severityRank(m.min_severity)) return false;
  if (!any(m.categories) && !m.categories!.some((p) => categoryWithin(f.category, p))) return false;
  if (!any(m.event_types) && !(m.event_types as readonly string[]).includes(f.eventType)) return false;
  if (!any(m.sources)) {
    if (m.sources!.includes(f.source)) return true;
    const seen = await sources();
    return m.sources!.some((s) => seen.includes(s));
  }
  return true;
}

/** The first rule matching these facts, or null (the default route). */
export async function matchRoute(routes: readonly OperatorRouteRow[], f: RouteFacts): Promise<OperatorRouteRow | null> {
  let cached: Promise<string[]> | undefined;
  const sources = () => (cached ??= f.signalSources?.() ?? Promise.resolve([]));
  for (const r of routes) if (await matches(r.match as RouteMatch, f, sources)) return r;
  return null;
}

/** Where an item's messages go and how it escalates. */
export interface ItemTarget {
  routeId: string | null;
  provider: string;
  connection: ChatConnectionRow;
  /** The channel a new card is posted to (null: the default route has no saved channel yet). */
  channelId: string | null;
  escalation: EscalationStep[];
}

/**
 * The item's route: its rule while the rule exists and the account is connected to the rule's provider, else the
 * default route. A posted card stays with the provider it was posted through (updates and replies go there).
 */
export function targetOf(setup: ChatSetup, item: Pick<OperatorItemRow, "routeId" | "chatProvider">): ItemTarget | null {
  const route = item.routeId ? setup.routes.find((r) => r.id === item.routeId) : undefined;
  const routed = route && setup.connections.get(route.provider);
  const target: ItemTarget = route && routed
    ? { routeId: route.id, provider: route.provider, connection: routed, channelId: route.channelId, escalation: escalationSteps(route.escalation) }
    : { routeId: null, provider: setup.connection.provider, connection: setup.connection, channelId: setup.channelId, escalation: setup.defaultEscalation };
  if (item.chatProvider && item.chatProvider !== target.provider) {
    const posted = setup.connections.get(item.chatProvider);
    return posted ? { ...target, provider: item.chatProvider, connection: posted } : null;
  }
  return target;
}
