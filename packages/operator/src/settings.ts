import { z } from "zod";
import type { ConnectorRegistry } from "@trendgate/connectors";
import { categoryWithin, EscalationSteps, SEVERITIES, type EscalationStep, type Severity } from "@trendgate/contracts";
import { operatorRoutesOf, type Db, type OperatorRouteRow, type Tx } from "@trendgate/db";

// What the operator queue reads from the account's chat connections: the default route's settings (the chat
// provider's manifest schema applies the documented defaults) and saved channel, the other connections, and the
// routing rules. The operator queue is on for an account once it has
// a chat connection, whatever its status: items are created (and listed by the REST routes) from then on; they are
// posted once a channel is saved. Without a connection no items are created (the queue is the chat connector's
// feature), and disconnecting stops intake but keeps the items.

export interface OperatorSettings {
  minSeverity: Severity;
  /** Category prefixes (`tech` matches `tech` and `tech/ai`); empty: every category. */
  categories: string[];
  velocityAlerts: boolean;
  criticalMention: string | null;
  /** Delay before an open critical item is re-notified. */
  renotifyMs: number;
  /** A new item's card waits this long, and goes only if its trend is still anomalous (0: at once). */
  triggerWindowMinutes: number;
  /** A re-detection this soon after its trend ended opens no item (0: off). */
  recoveryWindowMinutes: number;
}

/** The fields the operator queue relies on, read from whatever the provider's settings schema produced. */
const View = z.object({
  min_severity: z.enum(SEVERITIES).catch("high"),
  categories: z.array(z.string()).catch([]),
  velocity_alerts: z.boolean().catch(true),
  critical_mention: z.string().nullable().catch(null),
  renotify_minutes: z.number().int().positive().nullable().catch(null),
  trigger_window_minutes: z.number().int().min(0).catch(0),
  recovery_window_minutes: z.number().int().min(0).catch(0),
});

export interface ChatConnectionRow {
  id: string;
  accountId: string;
  provider: string;
  status: string;
  selection: unknown;
  settings: unknown;
  externalAccount: unknown;
}

export interface ChatSetup {
  /** The default route's connection: the account's chat connection of the first chat provider in the registry's order. */
  connection: ChatConnectionRow;
  settings: OperatorSettings;
  /** The saved alerts channel (the default route's), or null while none is saved. */
  channelId: string | null;
  /** Every chat connection of the account, by provider (routing rules post through these). */
  connections: Map<string, ChatConnectionRow>;
  /** The routing rules, in order (first match wins), and the default route's escalation. */
  routes: OperatorRouteRow[];
  defaultEscalation: EscalationStep[];
}

/** Settings as `provider`'s schema reads them (each chat provider has its own, e.g. its mention syntax). */
export function operatorSettings(registry: ConnectorRegistry, stored: unknown, defaultRenotifySeconds: number, provider: string): OperatorSettings {
  const schema = registry.find("chat", provider)?.manifest.schemas.settings;
  const parsed = schema?.safeParse(stored ?? {});
  const v = View.parse(parsed?.success ? parsed.data : schema?.safeParse({}).data ?? {});
  return {
    minSeverity: v.min_severity,
    categories: v.categories,
    velocityAlerts: v.velocity_alerts,
    criticalMention: v.critical_mention,
    renotifyMs: (v.renotify_minutes ? v.renotify_minutes * 60 : defaultRenotifySeconds) * 1000,
    triggerWindowMinutes: v.trigger_window_minutes,
    recoveryWindowMinutes: v.recovery_window_minutes,
  };
}

export const savedChannelId = (selection: unknown): string | null => {
  const id = (selection as { channel_id?: unknown } | null)?.channel_id;
  return typeof id === "string" && id ? id : null;
};

/** Stored escalation steps as the contract reads them (steps that no longer parse are dropped, not run). */
export const escalationSteps = (stored: unknown): EscalationStep[] => {
  const parsed = EscalationSteps.safeParse(stored ?? []);
  return parsed.success ? parsed.data : [];
};

/** The chat setups of these accounts: their chat connections (one per chat provider), routes and default route. */
export async function chatSetups(db: Db | Tx, registry: ConnectorRegistry, accountIds: string[], defaultRenotifySeconds: number): Promise<Map<string, ChatSetup>> {
  if (!accountIds.length) return new Map();
  const providers = registry.ofKind("chat").map((c) => c.manifest.id);
  const ids = [...new Set(accountIds)];
  const rows = await db.connection.findMany({
    where: { accountId: { in: ids }, provider: { in: providers } },
    select: { id: true, accountId: true, provider: true, status: true, selection: true, settings: true, externalAccount: true },
  });
  // Routes only for accounts with a chat connection: the fan-out asks for every account of a batch, most have none.
  const routing = await operatorRoutesOf(db, rows.map((c) => c.accountId));
  const setups = new Map<string, ChatSetup>();
  for (const accountId of ids) {
    const mine = rows.filter((c) => c.accountId === accountId).sort((a, b) => providers.indexOf(a.provider) - providers.indexOf(b.provider));
    if (!mine.length) continue;
    const [first] = mine;
    const r = routing.get(accountId);
    setups.set(accountId, {
      connection: first,
      settings: operatorSettings(registry, first.settings, defaultRenotifySeconds, first.provider),
      channelId: savedChannelId(first.selection),
      connections: new Map(mine.map((c) => [c.provider, c])),
      routes: r?.routes ?? [],
      defaultEscalation: escalationSteps(r?.defaultEscalation),
    });
  }
  return setups;
}

export async function chatSetupOf(db: Db | Tx, registry: ConnectorRegistry, accountId: string, defaultRenotifySeconds: number): Promise<ChatSetup | null> {
  return (await chatSetups(db, registry, [accountId], defaultRenotifySeconds)).get(accountId) ?? null;
}

/** Whether an event's category is one the settings route (a prefix at a `/` boundary; none configured: all). */
export const categoryMatches = (categories: string[], category: string): boolean =>
  !categories.length || categories.some((p) => categoryWithin(category, p));
