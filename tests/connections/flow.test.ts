// The browser OAuth flow end to end through the gateway, with a test-only provider (registered through the registry
// given to createGateway, served at the chat kind's /api/integrations/chat/...) whose authorization server is
// oidc-provider: auth -> consent -> the public callback -> a sealed connection; status; disconnect with revocation;
// and every way a flow can go wrong (replayed, unknown or expired state, access_denied, a failed exchange, an
// unconfigured client, a return_url elsewhere), each with its own answer and account event, nothing half-stored.
import crypto from "node:crypto";
import { eventsOf, fixtureGateway, FIXTURE_ENV, openSealed, RETURN_ORIGIN, startPeer, type FixtureGateway } from "./kit.ts";
import type { OAuthPeer } from "../peers/oauth-server.ts";

const AUTH = "/api/integrations/chat/auth";
const CONNECTION = "/api/integrations/chat/connection";

let peer: OAuthPeer;
let gw: FixtureGateway;
beforeAll(async () => {
  peer = await startPeer();
  gw = await fixtureGateway(peer);
});
afterAll(async () => { await gw?.close(); await peer?.close(); });
beforeEach(() => { peer.decision = "approve"; peer.tokenOutage = null; peer.revocationOutage = null; });

/** GET …/auth, then the browser at the provider; returns the callback path the provider sent the browser to. */
async function consent(g: FixtureGateway, auth: { Authorization: string }, query = "") {
  const start = await g.http.get(AUTH + query).set(auth);
  expect(start.status).toBe(200);
  const back = await peer.browse(start.body.authorization_url);
  return { start, callback: back.pathname + back.search, back };
}

const stateRows = (g: FixtureGateway, accountId: string) => g.deps.db.oAuthState.count({ where: { accountId } });
const connectionOf = (g: FixtureGateway, accountId: string) =>
  g.deps.db.connection.findUnique({ where: { accountId_provider: { accountId, provider: "fixture" } } });

test("auth -> consent -> callback: a page saying what was connected, tokens sealed, status without tokens, state used once", async () => {
  const { accountId, auth } = await gw.account();
  const { start, callback } = await consent(gw, auth);
  expect(start.headers["cache-control"]).toBe("no-store");
  const url = new URL(start.body.authorization_url);
  expect(url.origin + url.pathname).toBe(peer.authorizationUrl);
  expect(url.searchParams.get("state")).toBe(start.body.state);
  expect(url.searchParams.get("code_challenge_method")).toBe("S256");
  expect(Buffer.from(start.body.state, "base64url")).toHaveLength(32);
  const ttl = Date.parse(start.body.expires_at) - Date.now();
  expect(ttl).toBeGreaterThan(590_000);
  expect(ttl).toBeLessThanOrEqual(600_000);

  // Only the state's hash is stored, with the PKCE verifier sealed.
  const stored = await gw.deps.db.oAuthState.findMany({ where: { accountId } });
  expect(stored.map((s) => s.stateHash)).toEqual([crypto.createHash("sha256").update(start.body.state).digest("hex")]);
  expect(stored[0].codeVerifierSealed).toMatch(/^v1\./);

  const page = await gw.http.get(callback);
  expect(page.status).toBe(200);
  expect(page.headers["content-type"]).toMatch(/^text\/html/);
  expect(page.headers["cache-control"]).toBe("no-store");
  expect(page.headers["referrer-policy"]).toBe("no-referrer");
  expect(page.headers["content-security-policy"]).toMatch(/default-src 'none'/);
  expect(page.text).toContain("Fixture Chat is connected");
  expect(page.text).not.toMatch(/<script|https?:\/\//i); // self-contained

  const row = (await connectionOf(gw, accountId))!;
  expect(row).toMatchObject({ status: "connected", kind: "chat", scopes: ["read", "write"], lastError: null });
  const tokens = openSealed(gw.deps.secrets, row.credentialsSealed);
  expect(row.credentialsSealed).not.toContain(tokens.access_token);
  expect(tokens.refresh_token).toEqual(expect.any(String));
  expect(await stateRows(gw, accountId)).toBe(0);

  const status = await gw.http.get(CONNECTION).set(auth);
  expect(status.status).toBe(200);
  expect(status.body).toEqual({
    provider: "fixture", kind: "chat", status: "connected", account: {}, scopes: ["read", "write"],
    token_expires_at: row.tokenExpiresAt!.toISOString(), last_error: null, last_error_at: null,
    connected_at: row.createdAt.toISOString(), updated_at: row.updatedAt.toISOString(),
  });
  expect(await eventsOf(gw.deps.db, accountId)).toEqual([{ type: "connection.connected", data: { provider: "fixture", account: {} } }]);

  // The same callback again (a replay, a double click): refused, the connection untouched.
  const replay = await gw.http.get(callback);
  expect(replay.status).toBe(400);
  expect(replay.text).toContain("unknown or was already used");
  expect((await connectionOf(gw, accountId))!.credentialsSealed).toBe(row.credentialsSealed);
  expect(peer.counts.errors).not.toContain("invalid_grant"); // the replay never reached the provider
});

test("return_url: a 303 back to an allowed origin with the outcome; another origin is refused (422) before any state is stored", async () => {
  const { accountId, auth } = await gw.account();
  const { callback } = await consent(gw, auth, `?return_url=${encodeURIComponent(`${RETURN_ORIGIN}/settings?tab=chat`)}`);
  const ok = await gw.http.get(callback);
  expect(ok.status).toBe(303);
  expect(ok.headers.location).toBe(`${RETURN_ORIGIN}/settings?tab=chat&connection=fixture&status=connected`);
  expect(ok.headers["referrer-policy"]).toBe("no-referrer");
  expect(ok.headers["cache-control"]).toBe("no-store");

  peer.decision = "deny";
  const denied = await gw.http.get((await consent(gw, auth, `?return_url=${encodeURIComponent(`${RETURN_ORIGIN}/x`)}`)).callback);
  expect(denied.status).toBe(303);
  expect(denied.headers.location).toBe(`${RETURN_ORIGIN}/x?connection=fixture&status=error&error=access_denied`);

  for (const elsewhere of ["https://evil.example.net/settings", "https://app.example.com.evil.net/", "javascript:alert(1)", "/relative"]) {
    const res = await gw.http.get(`${AUTH}?return_url=${encodeURIComponent(elsewhere)}`).set(auth);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: "validation_failed", errors: [{ location: "query", path: "return_url" }] });
  }
  expect(await stateRows(gw, accountId)).toBe(0);
});

test("an expired state: the page says so, the state is consumed, nothing is stored, the account is told", async () => {
  const { accountId, auth } = await gw.account();
  const start = await gw.http.get(AUTH).set(auth);
  await gw.deps.db.$executeRaw`UPDATE oauth_states SET expires_at = expires_at - interval '11 minutes' WHERE account_id = ${accountId}`;
  const back = await peer.browse(start.body.authorization_url);
  const page = await gw.http.get(back.pathname + back.search);
  expect(page.status).toBe(400);
  expect(page.text).toContain("has expired");
  expect(await stateRows(gw, accountId)).toBe(0);
  expect(await connectionOf(gw, accountId)).toBeNull();
  expect(await eventsOf(gw.deps.db, accountId)).toEqual([{ type: "connection.failed", data: expect.objectContaining({ provider: "fixture", reason: "expired_state" }) }]);
});

test("access_denied at the provider: a page, an event, nothing stored", async () => {
  const { accountId, auth } = await gw.account();
  peer.decision = "deny";
  const { callback, back } = await consent(gw, auth);
  expect(back.searchParams.get("error")).toBe("access_denied");
  const page = await gw.http.get(callback);
  expect(page.status).toBe(403);
  expect(page.text).toContain("Fixture Chat was not connected");
  expect(page.text).toContain("declined");
  expect(await stateRows(gw, accountId)).toBe(0);
  expect(await connectionOf(gw, accountId)).toBeNull();
  expect(await eventsOf(gw.deps.db, accountId)).toEqual([{ type: "connection.failed", data: expect.objectContaining({ reason: "access_denied" }) }]);
});

test("a failed exchange (the server refuses our client secret): the state is consumed, nothing is stored, the account is told", async () => {
  const wrong = await fixtureGateway(peer, { [FIXTURE_ENV.clientSecret]: "not-the-secret" });
  try {
    const { accountId, auth } = await wrong.account();
    const { callback } = await consent(wrong, auth);
    const page = await wrong.http.get(callback);
    expect(page.status).toBe(502);
    expect(page.text).toContain("Exchanging the authorization code failed");
    expect(page.text).toContain("invalid_client");
    expect(await stateRows(wrong, accountId)).toBe(0);
    expect(await connectionOf(wrong, accountId)).toBeNull();
    expect(await eventsOf(wrong.deps.db, accountId)).toEqual([{ type: "connection.failed", data: expect.objectContaining({ reason: "exchange_failed" }) }]);
    expect((await wrong.http.get(callback)).status).toBe(400); // used up, even though it failed
  } finally {
    await wrong.close();
  }
});

test("an unknown state is a page; a request that is not a provider's redirect is a problem", async () => {
  const page = await gw.http.get(`/api/integrations/oauth/callback?state=${crypto.randomBytes(32).toString("base64url")}&code=abc`);
  expect(page.status).toBe(400);
  expect(page.headers["content-type"]).toMatch(/^text\/html/);
  expect(page.text).toContain("unknown or was already used");

  const bare = await gw.http.get("/api/integrations/oauth/callback");
  expect(bare.status).toBe(400);
  expect(bare.headers["content-type"]).toMatch(/^application\/problem\+json/);
  const twice = await gw.http.get("/api/integrations/oauth/callback?state=a&state=b");
  expect(twice.status).toBe(422);
  expect(twice.body.errors[0]).toMatchObject({ location: "query", path: "state" });
});

test("escapes what the provider sends back into the page", async () => {
  const { auth } = await gw.account();
  const start = await gw.http.get(AUTH).set(auth);
  const page = await gw.http.get(`/api/integrations/oauth/callback?state=${start.body.state}&error=server_error&error_description=${encodeURIComponent("<img src=x onerror=alert(1)>")}`);
  expect(page.status).toBe(400);
  expect(page.text).not.toContain("<img");
  expect(page.text).toContain("&lt;img src=x onerror=alert(1)&gt;");
});

test("a provider whose client is not configured answers 501 naming the variables to set", async () => {
  const bare = await fixtureGateway(peer, { [FIXTURE_ENV.clientId]: "", [FIXTURE_ENV.clientSecret]: "" });
  try {
    const { accountId, auth } = await bare.account();
    const res = await bare.http.get(AUTH).set(auth);
    expect(res.status).toBe(501);
    expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(res.body.code).toBe("provider_not_configured");
    expect(res.body.detail).toContain(FIXTURE_ENV.clientId);
    expect(res.body.detail).toContain(FIXTURE_ENV.clientSecret);
    expect(await stateRows(bare, accountId)).toBe(0);
  } finally {
    await bare.close();
  }
});

test("disconnect revokes at the provider, deletes the tokens, tells the account; then status is 404", async () => {
  const { accountId, auth } = await gw.account();
  expect((await gw.http.get(CONNECTION).set(auth)).status).toBe(404);
  expect((await gw.http.delete(CONNECTION).set(auth)).status).toBe(404);
  await gw.http.get((await consent(gw, auth)).callback).expect(200);

  const before = peer.counts.revocations;
  const res = await gw.http.delete(CONNECTION).set(auth);
  expect(res.status).toBe(204);
  expect(peer.counts.revocations).toBe(before + 2);
  expect(await connectionOf(gw, accountId)).toBeNull();
  expect((await gw.http.get(CONNECTION).set(auth)).status).toBe(404);
  const events = await eventsOf(gw.deps.db, accountId);
  expect(events.at(-1)).toEqual({ type: "connection.disconnected", data: { provider: "fixture", revocation: "revoked" } });
});

test("disconnect while the provider's revocation fails: reported (200), the tokens are deleted anyway", async () => {
  const { accountId, auth } = await gw.account();
  await gw.http.get((await consent(gw, auth)).callback).expect(200);
  peer.revocationOutage = 503;
  const res = await gw.http.delete(CONNECTION).set(auth);
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ provider: "fixture", revocation: "failed", revocation_error: expect.stringContaining("503") });
  expect(await connectionOf(gw, accountId)).toBeNull();
  expect((await eventsOf(gw.deps.db, accountId)).at(-1)).toMatchObject({ type: "connection.disconnected", data: { revocation: "failed" } });
  expect(gw.logs()).toContain("revoking at the provider failed");
});

test("tokens and codes never appear in responses or logs", async () => {
  const { accountId, auth } = await gw.account();
  const seen: string[] = [];
  const keep = (r: { status: number; headers: Record<string, string>; text: string }) => { seen.push(JSON.stringify(r.headers), r.text ?? ""); return r; };
  const { start, callback, back } = await consent(gw, auth);
  keep(start);
  keep(await gw.http.get(callback));
  keep(await gw.http.get(CONNECTION).set(auth));
  const row = (await connectionOf(gw, accountId))!;
  const tokens = openSealed(gw.deps.secrets, row.credentialsSealed);
  keep(await gw.http.get(callback)); // replay
  keep(await gw.http.delete(CONNECTION).set(auth));
  const secrets = [tokens.access_token, tokens.refresh_token!, back.searchParams.get("code")!];
  const logs = gw.logs();
  expect(logs).toContain('"route"'); // the access log was captured
  for (const s of secrets) {
    expect(seen.join("\n")).not.toContain(s);
    expect(logs).not.toContain(s);
  }
});
