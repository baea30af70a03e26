import { ACCOUNT_EVENT_DATA, ACCOUNT_EVENT_SCHEMAS, type AccountEventType } from "@trendgate/contracts";

/**
 * How an account event strays from its type's published schema (the one /asyncapi.json and the OpenAPI webhooks
 * document), read strictly: [] when it matches. Takes an event as GET /api/events lists it or as its webhook body
 * (`{id, type, created_at, data}`), or a stored row's `{type, data}`.
 */
export function catalogProblems(e: { type: string; data: unknown; id?: unknown; created_at?: unknown }): string[] {
  if (!Object.hasOwn(ACCOUNT_EVENT_DATA, e.type)) return [`${e.type}: not a type of the event catalog`];
  const type = e.type as AccountEventType;
  const r = "id" in e ? ACCOUNT_EVENT_SCHEMAS[type].safeParse(e) : ACCOUNT_EVENT_DATA[type].safeParse(e.data);
  return r.success ? [] : r.error.issues.map((i) => `${type} ${i.path.join(".")}: ${i.message}`);
}

/** The same for many events; a test expects `[]`. */
export const catalogProblemsOf = (events: Parameters<typeof catalogProblems>[0][]) => events.flatMap(catalogProblems);
