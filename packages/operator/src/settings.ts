import { z } from "zod";
import type { ConnectorRegistry } from "@trendgate/connectors";
import { categoryWithin, SEVERITIES, type Severity } from "@trendgate/contracts";
import type { Db, Tx } from "@trendgate/db";

// What the operator queue reads from the account's chat connection: its settings (the chat provider's manifest
// schema applies the documented defaults) and the saved channel. The operator queue is on for an account once it has
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
  status: string;
  selection: unknown;
  settings: unknown;
  externalAccount: unknown;
}

export interface ChatSetup {
  connection: ChatConnectionRow;
  settings: OperatorSettings;
  /** The saved alerts channel, or null while none is saved. */
  channelId: string | null;
}

export function operatorSettings(registry: ConnectorRegistry, stored: unknown, defaultRenotifySeconds: number): OperatorSettings {
  const schema = registry.single("chat").manifest.schemas.settings;
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

/** The chat connections of these accounts (at most one each: the registry has one chat provider). */
export async function chatSetups(db: Db | Tx, registry: ConnectorRegistry, accountIds: string[], defaultRenotifySeconds: number): Promise<Map<string, ChatSetup>> {
  if (!accountIds.length) return new Map();
  const provider = registry.single("chat").manifest.id;
  const rows = await db.connection.findMany({
    where: { accountId: { in: [...new Set(accountIds)] }, provider },
    select: { id: true, accountId: true, status: true, selection: true, settings: true, externalAccount: true },
  });
  return new Map(rows.map((c) => [c.accountId, {
    connection: c,
    settings: operatorSettings(registry, c.settings, defaultRenotifySeconds),
    channelId: savedChannelId(c.selection),
  }]));
}

export async function chatSetupOf(db: Db | Tx, registry: ConnectorRegistry, accountId: string, defaultRenotifySeconds: number): Promise<ChatSetup | null> {
  return (await chatSetups(db, registry, [accountId], defaultRenotifySeconds)).get(accountId) ?? null;
}

/** Whether an event's category is one the settings route (a prefix at a `/` boundary; none configured: all). */
export const categoryMatches = (categories: string[], category: string): boolean =>
  !categories.length || categories.some((p) => categoryWithin(category, p));
