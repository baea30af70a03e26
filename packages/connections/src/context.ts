import type { Config } from "@trendgate/config";
import type { SecretBox } from "@trendgate/crypto";
import type { AccountEventData } from "@trendgate/contracts";
import { recordAccountEvents, type AccountEventNotice, type Db } from "@trendgate/db";
import type { Logger } from "@trendgate/logger";
import type { ProviderLookup } from "./providers.ts";

/** What the connection lifecycle runs on; the same in gateways and workers. */
export interface ConnectionsDeps {
  db: Db;
  secrets: SecretBox;
  config: Config;
  /** The connector registry (or any lookup of manifests by provider id). */
  providers: ProviderLookup;
  logger: Logger;
}

export type ConnectionEvent = "connection.connected" | "connection.failed" | "connection.needs_reauth" | "connection.disconnected";

/** Tells the account (GET /api/events). A failure to record is logged, never thrown: the connection change stands. */
export async function tell<T extends ConnectionEvent>(deps: ConnectionsDeps, accountId: string, type: T, data: AccountEventData<T>): Promise<void> {
  await recordAccountEvents(deps.db, [{ accountId, type, data } as AccountEventNotice]).catch((err) =>
    deps.logger.warn({ err: String(err), account_id: accountId, type }, "account event not recorded"));
}
