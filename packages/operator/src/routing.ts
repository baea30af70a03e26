import { categoryWithin, severityRank, type EscalationStep, type RouteMatch, type Severity } from "@trendgate/contracts";
import type { OperatorItemRow, OperatorRouteRow } from "@trendgate/db";
import { escalationSteps, type ChatConnectionRow, type ChatSetup } from "./settings.ts";

// Operator routing: which rule an item opens under (the first whose conditions all hold), where an item's messages
// go (its rule's provider and channel, or the default route: the chat settings' saved channel), and the escalation
// chain it keeps from its opening.

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
export async function matchRoute<R extends Pick<OperatorRouteRow, "match">>(routes: readonly R[], f: RouteFacts): Promise<R | null> {
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
  /** The item's escalation steps: the chain it opened with (kept on it), or for an item opened before chains were kept, its route's. */
  escalation: EscalationStep[];
  /** The rule those steps are from (null: the default route's); may be a rule deleted since. */
  escalationRouteId: string | null;
}

/**
 * The escalation chain an item opened with, kept on the item (escalation_chain) for its life, so a later save of the
 * rules (a rule edited or deleted) neither changes nor stops it: every run of the item, and every step, reads it.
 */
export interface EscalationChain {
  /** The rule whose steps these are (null: the default route's). */
  route_id: string | null;
  steps: EscalationStep[];
}

/** The chain an item opening under this rule (null: the default route) keeps: the steps its route has now. */
export function chainAt(setup: ChatSetup, routeId: string | null): EscalationChain {
  const target = targetOf(setup, { routeId, chatProvider: null, escalationChain: null })!; // no card yet: always a target
  return { route_id: target.escalationRouteId, steps: target.escalation };
}

/** The chain kept on the item, or null when it opened before chains were kept (its route's live steps apply). */
export function keptChain(item: Pick<OperatorItemRow, "escalationChain">): EscalationChain | null {
  const kept = item.escalationChain as { route_id?: unknown; steps?: unknown } | null;
  if (!kept || typeof kept !== "object") return null;
  return { route_id: typeof kept.route_id === "string" ? kept.route_id : null, steps: escalationSteps(kept.steps) };
}

/**
 * The item's route: its rule while the rule exists and the account is connected to the rule's provider, else the
 * default route. A posted card stays with the provider it was posted through (updates and replies go there). Its
 * escalation is the chain it opened with, whatever the route's steps are now.
 */
export function targetOf(setup: ChatSetup, item: Pick<OperatorItemRow, "routeId" | "chatProvider" | "escalationChain">): ItemTarget | null {
  const route = item.routeId ? setup.routes.find((r) => r.id === item.routeId) : undefined;
  const routed = route && setup.connections.get(route.provider);
  const live: ItemTarget = route && routed
    ? { routeId: route.id, provider: route.provider, connection: routed, channelId: route.channelId, escalation: escalationSteps(route.escalation), escalationRouteId: route.id }
    : { routeId: null, provider: setup.connection.provider, connection: setup.connection, channelId: setup.channelId, escalation: setup.defaultEscalation, escalationRouteId: null };
  const kept = keptChain(item);
  const target: ItemTarget = kept ? { ...live, escalation: kept.steps, escalationRouteId: kept.route_id } : live;
  if (item.chatProvider && item.chatProvider !== target.provider) {
    const posted = setup.connections.get(item.chatProvider);
    return posted ? { ...target, provider: item.chatProvider, connection: posted } : null;
  }
  return target;
}
