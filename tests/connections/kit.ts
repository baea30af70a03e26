import { pino } from "pino";
import supertest from "supertest";
import type { OAuth2Auth } from "@trendgate/connector-core";
import { Connections } from "@trendgate/connections";
import { ConnectorRegistry } from "@trendgate/connectors";
import { SecretBox } from "@trendgate/crypto";
import { createAccount, createApiKey, createDb, type Db } from "@trendgate/db";
import { REDACT_PATHS } from "@trendgate/logger";
import { createGateway, type Gateway } from "../../apps/gateway/src/app.ts";
import { createDeps } from "../../apps/gateway/src/deps.ts";
import { catalogProblemsOf } from "../helpers/account-events.ts";
import { testConfig } from "../helpers/config.ts";
import { startOAuthPeer, type OAuthPeer } from "../peers/oauth-server.ts";
import { FIXTURE_ENV, fixtureConnector, REDIRECT_URI, RETURN_ORIGIN, type PeerUrls } from "./fixture.ts";

export * from "./fixture.ts";

// Gateways and Connections over the test-only fixture provider (fixture.ts), with every log line captured.

export const clientEnv = (c: { id: string; secret: string }) => ({ [FIXTURE_ENV.clientId]: c.id, [FIXTURE_ENV.clientSecret]: c.secret });

export const startPeer = () => startOAuthPeer({ redirectUris: [REDIRECT_URI] });

/** Every log line written, to check that no token is ever logged. */
export function captureLogger() {
  const lines: string[] = [];
  const logger = pino({ level: "trace", redact: { paths: REDACT_PATHS, censor: "[redacted]" } }, { write: (s: string) => { lines.push(s); } });
  return { logger, text: () => lines.join("") };
}

export interface FixtureGateway extends Gateway {
  http: ReturnType<typeof supertest>;
  logs(): string;
  account(): Promise<{ accountId: string; auth: { Authorization: string } }>;
  close(): Promise<void>;
}

/** A gateway whose registry holds only the fixture provider (at /api/integrations/chat/...). */
export async function fixtureGateway(peer: OAuthPeer, env: Record<string, string> = {}, auth: Partial<OAuth2Auth> = {}): Promise<FixtureGateway> {
  const { logger, text } = captureLogger();
  const config = testConfig({ ...clientEnv(peer.clients.basic), OUTBOUND_ALLOWLIST: "127.0.0.1", OAUTH_RETURN_ORIGINS: RETURN_ORIGIN, ...env });
  const deps = createDeps(config, logger);
  const gw = await createGateway(deps, { registry: new ConnectorRegistry([fixtureConnector(peer, auth)]) });
  return {
    ...gw,
    http: supertest(gw.app),
    logs: text,
    async account() {
      const account = await createAccount(deps.db, "oauth test", "free");
      const { key } = await createApiKey(deps.db, account.id, "test key");
      return { accountId: account.id, auth: { Authorization: `Bearer ${key}` } };
    },
    async close() { await gw.stop(); await deps.close(); },
  };
}

/** Connections on its own (as a worker has it), over the fixture provider. */
export function fixtureConnections(peer: PeerUrls, env: Record<string, string>, auth: Partial<OAuth2Auth> = {}) {
  const { logger, text } = captureLogger();
  const config = testConfig({ OUTBOUND_ALLOWLIST: "127.0.0.1", OAUTH_RETURN_ORIGINS: RETURN_ORIGIN, ...env });
  const db: Db = createDb(config.DATABASE_URL);
  const secrets = new SecretBox(config.ENCRYPTION_KEY);
  const connections = new Connections({ db, secrets, config, providers: new ConnectorRegistry([fixtureConnector(peer, auth)]), logger });
  return { connections, db, secrets, config, logs: text, close: () => db.$disconnect() };
}

/** Runs the browser flow through Connections (start, consent at the peer, callback); returns the connection row. */
export async function connectThroughService(connections: Connections, db: Db, peer: OAuthPeer, accountId: string) {
  const start = await connections.startAuthorization(accountId, "fixture");
  const back = await peer.browse(start.authorization_url);
  const outcome = await connections.completeAuthorization(Object.fromEntries(back.searchParams));
  if (!outcome.ok) throw new Error(`flow failed: ${outcome.error} ${outcome.message}`);
  return (await db.connection.findUniqueOrThrow({ where: { accountId_provider: { accountId, provider: "fixture" } } }));
}

export async function newAccount(db: Db) {
  return (await createAccount(db, "oauth test", "free")).id;
}

/** The account's events, oldest first; each must be exactly its type's published schema. */
export async function eventsOf(db: Db, accountId: string) {
  const es = (await db.accountEvent.findMany({ where: { accountId }, orderBy: { id: "asc" } })).map((e) => ({ type: e.type, data: e.data as Record<string, unknown> }));
  const problems = catalogProblemsOf(es);
  if (problems.length) throw new Error(`account events outside the catalog: ${problems.join("; ")}`);
  return es;
}

/** What `credentials_sealed` holds, opened (to compare with what responses and logs contain). */
export const openSealed = (secrets: SecretBox, sealed: string) =>
  JSON.parse(secrets.open(sealed)) as { access_token: string; refresh_token?: string };
