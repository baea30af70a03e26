// One process asking for a connection's access token when told to (a line "go" on stdin): two of these race for
// one refresh in two-processes.test.ts. Prints {"token"} or {"error"} as one JSON line.
import readline from "node:readline";
import { loadConfig } from "@trendgate/config";
import { Connections } from "@trendgate/connections";
import { ConnectorRegistry } from "@trendgate/connectors";
import { SecretBox } from "@trendgate/crypto";
import { createDb } from "@trendgate/db";
import { createLogger } from "@trendgate/logger";
import { fixtureConnector, type PeerUrls } from "./fixture.ts";

const config = loadConfig(process.env);
const db = createDb(config.DATABASE_URL);
const connections = new Connections({
  db, secrets: new SecretBox(config.ENCRYPTION_KEY), config, logger: createLogger({ level: "silent" }),
  providers: new ConnectorRegistry([fixtureConnector(JSON.parse(process.env.FIXTURE_PEER!) as PeerUrls)]),
});
const row = await db.connection.findUniqueOrThrow({ where: { id: process.env.CONNECTION_ID! } });
process.stdout.write("ready\n");
const lines = readline.createInterface({ input: process.stdin });
for await (const line of lines) if (line.trim() === "go") break;
lines.close();
let out: Record<string, unknown>;
try {
  out = { token: await connections.accessToken(row) };
} catch (err) {
  out = { error: String((err as Error).message), kind: (err as { kind?: string }).kind };
}
process.stdout.write(JSON.stringify(out) + "\n");
await db.$disconnect();
process.exit(0);
