// Access tokens as workers get them (Connections.accessToken) against oidc-provider: refreshed ahead of expiry,
// once for concurrent callers, re-read under the row lock; a refused refresh marks the connection needs_reauth at
// once (with an account event); transient failures back off (current token while valid, then `unavailable`).
import { ProviderError } from "@trendgate/connector-core";
import type { Db } from "@trendgate/db";
import type { OAuthPeer } from "../peers/oauth-server.ts";
import { clientEnv, connectThroughService, eventsOf, fixtureConnections, newAccount, openSealed, startPeer } from "./kit.ts";

let peer: OAuthPeer;
let svc: ReturnType<typeof fixtureConnections>;
let db: Db;
beforeAll(async () => {
  peer = await startPeer();
  svc = fixtureConnections(peer, { ...clientEnv(peer.clients.basic), OAUTH_REFRESH_LOCK_TIMEOUT_MS: "300" });
  db = svc.db;
});
afterAll(async () => { await svc?.close(); await peer?.close(); });
beforeEach(() => { peer.tokenOutage = null; peer.tokenDelayMs = 0; });

const inSeconds = (s: number) => new Date(Date.now() + s * 1000);
const reload = (id: string) => db.connection.findUniqueOrThrow({ where: { id } });
/** A connected account whose access token expires in `seconds` (inside the 900 s refresh buffer when small). */
async function connected(expiresInSeconds?: number) {
  const accountId = await newAccount(db);
  let row = await connectThroughService(svc.connections, db, peer, accountId);
  if (expiresInSeconds !== undefined) row = await db.connection.update({ where: { id: row.id }, data: { tokenExpiresAt: inSeconds(expiresInSeconds) } });
  return { accountId, row, tokens: openSealed(svc.secrets, row.credentialsSealed) };
}
const rejection = async (p: Promise<unknown>) => {
  const e = await p.then(() => null, (err) => err);
  expect(e).toBeInstanceOf(ProviderError);
  return e as ProviderError;
};

test("a token valid beyond the buffer is used as it is", async () => {
  const { row, tokens } = await connected();
  const before = peer.counts.refresh_token;
  await expect(svc.connections.accessToken(row)).resolves.toBe(tokens.access_token);
  await expect(svc.connections.accessToken(row.id)).resolves.toBe(tokens.access_token);
  expect(peer.counts.refresh_token).toBe(before);
});

test("a token expiring within the buffer is refreshed once for concurrent callers; a stale caller re-reads under the lock", async () => {
  const { row, tokens } = await connected(60);
  const before = peer.counts.refresh_token;
  peer.tokenDelayMs = 600; // in flight longer than the lock timeout (300 ms): callers waiting on the lock would give up and take the old token
  const got = await Promise.all(Array.from({ length: 10 }, () => svc.connections.accessToken(row)));
  expect(new Set(got).size).toBe(1);
  expect(got[0]).not.toBe(tokens.access_token);
  expect(peer.counts.refresh_token).toBe(before + 1);

  const after = await reload(row.id);
  const stored = openSealed(svc.secrets, after.credentialsSealed);
  expect(stored.access_token).toBe(got[0]);
  expect(stored.refresh_token).not.toBe(tokens.refresh_token); // the rotated refresh token replaced the old one
  expect(after.tokenExpiresAt!.getTime()).toBeGreaterThan(Date.now() + 900_000);
  expect(after.lastRefreshedAt).not.toBeNull();

  // A caller still holding the old row takes the lock, sees the refreshed row, and does not call the provider.
  await expect(svc.connections.accessToken(row)).resolves.toBe(got[0]);
  expect(peer.counts.refresh_token).toBe(before + 1);
});

test("a refused refresh marks needs_reauth at once, tells the account, and stops calling the provider", async () => {
  const { accountId, row } = await connected(60);
  peer.forgetGrants(); // the user removed the app at the provider
  const err = await rejection(svc.connections.accessToken(row));
  expect([err.kind, err.detail.providerCode]).toEqual(["unauthorized", "invalid_grant"]);
  const after = await reload(row.id);
  expect(after.status).toBe("needs_reauth");
  expect(after.lastError).toContain("invalid_grant");
  expect((await svc.connections.status(accountId, "fixture"))!.status).toBe("needs_reauth");
  expect((await eventsOf(db, accountId)).filter((e) => e.type === "connection.needs_reauth"))
    .toEqual([{ type: "connection.needs_reauth", data: expect.objectContaining({ provider: "fixture", connection_id: row.id }) }]);

  const calls = peer.counts.errors.length + peer.counts.refresh_token;
  expect((await rejection(svc.connections.accessToken(after))).kind).toBe("unauthorized");
  expect(peer.counts.errors.length + peer.counts.refresh_token).toBe(calls);

  // Authorizing again repairs it.
  await connectThroughService(svc.connections, db, peer, accountId);
  expect(await reload(row.id)).toMatchObject({ status: "connected", lastError: null });
});

test("transient refresh failures back off: the current token while valid, then `unavailable` with retryAfterMs; recovery resets", async () => {
  const { row, tokens } = await connected(60);
  peer.tokenOutage = 503;
  const hits = peer.counts.outageAnswers;
  await expect(svc.connections.accessToken(row)).resolves.toBe(tokens.access_token); // still valid for a minute
  let after = await reload(row.id);
  expect(after).toMatchObject({ status: "connected", refreshFailures: 1 });
  expect(after.lastError).toContain("503");
  const wait = after.refreshNotBefore!.getTime() - Date.now();
  expect(wait).toBeGreaterThan(25_000);
  expect(wait).toBeLessThanOrEqual(30_000);

  // Backing off: no call to the provider, the still-valid token is used.
  await expect(svc.connections.accessToken(after)).resolves.toBe(tokens.access_token);
  expect(peer.counts.outageAnswers).toBe(hits + 1);

  // Expired while backing off: unavailable, with how long to wait; the status says the connection is not usable.
  after = await db.connection.update({ where: { id: row.id }, data: { tokenExpiresAt: inSeconds(-1) } });
  const backingOff = await rejection(svc.connections.accessToken(after));
  expect(backingOff.kind).toBe("unavailable");
  expect(backingOff.detail.retryAfterMs).toBeGreaterThan(20_000);
  expect(peer.counts.outageAnswers).toBe(hits + 1);
  expect((await reload(row.id)).status).toBe("error");

  // The backoff over, it fails again: twice as long.
  await db.connection.update({ where: { id: row.id }, data: { refreshNotBefore: inSeconds(-1) } });
  const again = await rejection(svc.connections.accessToken(row.id));
  expect([again.kind, again.retryable]).toEqual(["unavailable", true]);
  expect(again.detail.retryAfterMs).toBe(60_000);
  expect(await reload(row.id)).toMatchObject({ status: "error", refreshFailures: 2 });

  // The provider is back: refreshed, health reset.
  peer.tokenOutage = null;
  await db.connection.update({ where: { id: row.id }, data: { refreshNotBefore: inSeconds(-1) } });
  const fresh = await svc.connections.accessToken(row.id);
  expect(fresh).not.toBe(tokens.access_token);
  expect(await reload(row.id)).toMatchObject({ status: "connected", refreshFailures: 0, refreshNotBefore: null, lastError: null });
});

test("while another process holds the connection's lock: a still-valid token is used; an expired one is `unavailable`", async () => {
  const { row, tokens } = await connected(60);
  const holdLock = async <T>(work: () => Promise<T>): Promise<T> => {
    const holder = await db.$pool.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT id FROM connections WHERE id = $1 FOR UPDATE", [row.id]);
      return await work(); // waits OAUTH_REFRESH_LOCK_TIMEOUT_MS (300 ms here) for the lock, then gives up waiting
    } finally {
      await holder.query("ROLLBACK");
      holder.release();
    }
  };
  const before = peer.counts.refresh_token;
  await expect(holdLock(() => svc.connections.accessToken(row))).resolves.toBe(tokens.access_token);

  const expired = await db.connection.update({ where: { id: row.id }, data: { tokenExpiresAt: inSeconds(-1) } });
  const busy = await holdLock(() => rejection(svc.connections.accessToken(expired)));
  expect([busy.kind, busy.detail.retryAfterMs]).toEqual(["unavailable", 1000]);
  expect(peer.counts.refresh_token).toBe(before);
  // The lock released, the next call refreshes.
  await expect(svc.connections.accessToken(expired)).resolves.not.toBe(tokens.access_token);
});

test("an expired token without a refresh token needs re-authorization", async () => {
  const { accountId, row, tokens } = await connected();
  await db.connection.update({
    where: { id: row.id },
    data: { credentialsSealed: svc.secrets.seal(JSON.stringify({ access_token: tokens.access_token })), tokenExpiresAt: inSeconds(-1) },
  });
  const err = await rejection(svc.connections.accessToken(row.id));
  expect(err.kind).toBe("unauthorized");
  expect((await reload(row.id)).status).toBe("needs_reauth");
  expect((await eventsOf(db, accountId)).map((e) => e.type)).toContain("connection.needs_reauth");
});

test("markNeedsReauth (a worker's provider call was refused): once, with one account event", async () => {
  const { accountId, row } = await connected();
  await expect(svc.connections.markNeedsReauth(row.id, "invalid_auth")).resolves.toBe(true);
  await expect(svc.connections.markNeedsReauth(row.id, "invalid_auth")).resolves.toBe(false);
  expect(await reload(row.id)).toMatchObject({ status: "needs_reauth", lastError: "invalid_auth" });
  expect((await eventsOf(db, accountId)).filter((e) => e.type === "connection.needs_reauth")).toHaveLength(1);
  expect((await rejection(svc.connections.accessToken(row.id))).kind).toBe("unauthorized");
});

test("no token appears in the logs", async () => {
  const { row, tokens } = await connected(60);
  peer.tokenOutage = 503;
  await svc.connections.accessToken(row);
  peer.tokenOutage = null;
  await db.connection.update({ where: { id: row.id }, data: { refreshNotBefore: null } });
  const fresh = await svc.connections.accessToken(row.id);
  const logs = svc.logs();
  expect(logs).toContain("token refresh failed");
  for (const t of [tokens.access_token, tokens.refresh_token!, fresh]) expect(logs).not.toContain(t);
});
