import supertest from "supertest";
import type { ConnectorRegistry } from "@trendgate/connectors";
import { createAccount, createApiKey } from "@trendgate/db";
import { createLogger, type Logger } from "@trendgate/logger";
import { whenReady } from "@trendgate/queues";
import { createGateway, type Gateway } from "../../apps/gateway/src/app.ts";
import { createDeps } from "../../apps/gateway/src/deps.ts";
import { testConfig } from "./config.ts";

export interface TestGateway extends Gateway {
  http: ReturnType<typeof supertest>;
  /** A new account with one API key. */
  account(plan?: string): Promise<{ accountId: string; key: string; keyId: string; auth: { Authorization: string } }>;
  close(): Promise<void>;
}

/**
 * `logger`: where the gateway logs (silent by default; a test of the logs passes one writing to memory).
 * `registry`: the connectors it serves (default: every registered provider).
 */
export async function startGateway(
  env: Record<string, string> = {},
  { logger = createLogger({ level: "silent" }), registry }: { logger?: Logger; registry?: ConnectorRegistry } = {},
): Promise<TestGateway> {
  const config = testConfig(env);
  const deps = createDeps(config, logger);
  await whenReady(deps.redis, 10_000);
  const gw = await createGateway(deps, { registry });
  return {
    ...gw,
    http: supertest(gw.app),
    async account(plan = "free") {
      const account = await createAccount(deps.db, `test ${plan}`, plan);
      const { row, key } = await createApiKey(deps.db, account.id, "test key");
      return { accountId: account.id, key, keyId: row.id, auth: { Authorization: `Bearer ${key}` } };
    },
    async close() {
      await gw.stop();
      await deps.close();
    },
  };
}

export const signal = (over: Record<string, unknown> = {}) => ({
  id: `s-${Math.random().toString(36).slice(2)}`,
  source: "x",
  topic: "AI agents",
  category: "tech/ai",
  count: 12,
  observed_at: "2026-11-22T06:00:00.000Z",
  ...over,
});
