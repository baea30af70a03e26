// Two processes (think: two workers) need the same connection's token as it nears expiry, at the same moment. The
// authorization server rotates refresh tokens, so a second refresh with the same refresh token would be refused
// and the connection lost: the row lock shared through Postgres must make it exactly one refresh.
import { spawn } from "node:child_process";
import path from "node:path";
import readline from "node:readline";
import type { OAuthPeer } from "../peers/oauth-server.ts";
import { nodeArgs } from "../helpers/process.ts";
import { clientEnv, connectThroughService, fixtureConnections, newAccount, openSealed, startPeer } from "./kit.ts";

let peer: OAuthPeer;
let svc: ReturnType<typeof fixtureConnections>;
const children: ReturnType<typeof spawn>[] = [];
beforeAll(async () => {
  peer = await startPeer();
  svc = fixtureConnections(peer, clientEnv(peer.clients.basic));
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  await svc?.close();
  await peer?.close();
});

/** A process that loads the connection, says "ready", and asks for its token on "go". */
function tokenProcess(connectionId: string) {
  const child = spawn(process.execPath, nodeArgs(path.resolve("tests/connections/refresh-proc.ts")), {
    env: {
      ...process.env, ...clientEnv(peer.clients.basic), OUTBOUND_ALLOWLIST: "127.0.0.1", CONNECTION_ID: connectionId, LOG_LEVEL: "silent",
      FIXTURE_PEER: JSON.stringify({ url: peer.url, authorizationUrl: peer.authorizationUrl, tokenUrl: peer.tokenUrl, revocationUrl: peer.revocationUrl }),
    },
    stdio: ["pipe", "pipe", "inherit"],
  });
  children.push(child);
  const lines = readline.createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async () => { const r = await lines.next(); if (r.done) throw new Error("the process ended early"); return r.value; };
  return {
    ready: next().then((l) => expect(l).toBe("ready")),
    go: () => child.stdin!.write("go\n"),
    result: async () => JSON.parse(await next()) as { token?: string; error?: string },
  };
}

test("two processes refreshing the same connection at once: one refresh at the server, both get its token", async () => {
  const accountId = await newAccount(svc.db);
  const row = await connectThroughService(svc.connections, svc.db, peer, accountId);
  await svc.db.connection.update({ where: { id: row.id }, data: { tokenExpiresAt: new Date(Date.now() + 60_000) } });
  const old = openSealed(svc.secrets, row.credentialsSealed);
  const before = { refreshes: peer.counts.refresh_token, errors: peer.counts.errors.length };

  const procs = [tokenProcess(row.id), tokenProcess(row.id)];
  await Promise.all(procs.map((p) => p.ready));
  peer.tokenDelayMs = 300; // the first refresh is still in flight when the second process asks
  for (const p of procs) p.go();
  const results = await Promise.all(procs.map((p) => p.result()));

  expect(results[0]).toEqual({ token: expect.any(String) });
  expect(results[1]).toEqual(results[0]);
  expect(results[0].token).not.toBe(old.access_token);
  expect(peer.counts.refresh_token).toBe(before.refreshes + 1);
  expect(peer.counts.errors.length).toBe(before.errors); // nobody presented the rotated-away refresh token
  const after = await svc.db.connection.findUniqueOrThrow({ where: { id: row.id } });
  expect(after.status).toBe("connected");
  expect(openSealed(svc.secrets, after.credentialsSealed).access_token).toBe(results[0].token);
}, 60_000);
