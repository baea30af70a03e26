// Web console sessions over the API: an API key creates a one-time link, the page exchanges its token once for an
// access token, and that token is a credential for its own account only, that cannot manage keys or sessions,
// that ends when it expires or is revoked. Real gateway, Postgres and Redis.
import { insertOperatorItemIfAbsent } from "@trendgate/db";
import { startGateway, type TestGateway } from "../helpers/gateway.ts";

let gw: TestGateway;
beforeAll(async () => { gw = await startGateway({ AUTH_CACHE_SECONDS: "0" }); });
afterAll(async () => { await gw.close(); });

const hook = (url: string) => ({ url, trigger_type: "trend_detected", delivery_mode: "instant_stream", threshold_value: 0, cooldown_seconds: 0 });
const linkToken = (url: string) => new URL(url).hash.replace(/^#token=/, "");

async function openSession(auth: { Authorization: string }, body: Record<string, unknown> = {}) {
  const created = await gw.http.post("/api/console/sessions").set(auth).send(body);
  expect(created.status).toBe(201);
  const exchanged = await gw.http.post("/api/console/sessions/exchange").send({ token: linkToken(created.body.url) });
  expect(exchanged.status).toBe(200);
  return { created: created.body, access: exchanged.body, auth: { Authorization: `Bearer ${exchanged.body.access_token}` } };
}

test("a link opens once: its token is exchanged for an access token that reads the account's own data", async () => {
  const a = await gw.account();
  const webhook = await gw.http.post("/api/integrations/webhooks").set(a.auth).send(hook("https://hooks.example.com/in"));
  expect(webhook.status).toBe(201);
  const created = await gw.http.post("/api/console/sessions").set(a.auth).send({ label: "ops@example.com" });
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({ label: "ops@example.com", status: "unopened", opened_at: null, expires_at: null, session_hours: 8 });
  const url = new URL(created.body.url);
  expect(url.pathname).toBe("/console/");
  expect(url.searchParams.get("s")).toBe(created.body.id);
  expect(url.hash).toMatch(/^#token=tgcl_/);

  // Listing shows the session, never its link.
  const listed = await gw.http.get("/api/console/sessions").set(a.auth);
  expect(listed.body.data.map((s: any) => s.id)).toContain(created.body.id);
  expect(JSON.stringify(listed.body)).not.toContain(linkToken(created.body.url));

  const first = await gw.http.post("/api/console/sessions/exchange").send({ token: linkToken(created.body.url) });
  expect(first.status).toBe(200);
  expect(first.body).toMatchObject({ session_id: created.body.id, account_id: a.accountId });
  expect(first.body.access_token).toMatch(/^tgcs_/);
  expect(Date.parse(first.body.expires_at) - Date.now()).toBeGreaterThan(7.9 * 3600_000);

  const again = await gw.http.post("/api/console/sessions/exchange").send({ token: linkToken(created.body.url) });
  expect(again.status).toBe(410);
  expect(again.body.code).toBe("link_expired");

  const session = { Authorization: `Bearer ${first.body.access_token}` };
  const list = await gw.http.get("/api/integrations/webhooks").set(session);
  expect(list.status).toBe(200);
  expect(list.body.data.map((w: any) => w.id)).toEqual([webhook.body.id]);
  const opened = await gw.http.get("/api/console/sessions").set(a.auth);
  expect(opened.body.data.find((s: any) => s.id === created.body.id).status).toBe("open");
});

test("a session reaches only its own account: another account's ids answer not found", async () => {
  const a = await gw.account();
  const b = await gw.account();
  const theirs = await gw.http.post("/api/integrations/webhooks").set(b.auth).send(hook("https://hooks.example.com/b"));
  expect(theirs.status).toBe(201);
  const { auth } = await openSession(a.auth);
  for (const res of [
    await gw.http.get(`/api/integrations/webhooks/${theirs.body.id}`).set(auth),
    await gw.http.get(`/api/integrations/webhooks/${theirs.body.id}/executions`).set(auth),
    await gw.http.post(`/api/integrations/webhooks/${theirs.body.id}/test`).set(auth).send({}),
    await gw.http.delete(`/api/integrations/webhooks/${theirs.body.id}`).set(auth),
  ]) {
    expect(res.status).toBe(404);
    expect(res.body.code).toBe("not_found");
  }
  expect((await gw.http.get("/api/integrations/webhooks").set(auth)).body.data).toEqual([]);
  expect((await gw.http.get(`/api/integrations/webhooks/${theirs.body.id}`).set(b.auth)).status).toBe(200);
});

test("a session cannot create keys or further sessions, nor change who may frame the console", async () => {
  const a = await gw.account();
  const { auth } = await openSession(a.auth);
  for (const res of [
    await gw.http.post("/api/keys").set(auth).send({ name: "escalate" }),
    await gw.http.get("/api/keys").set(auth),
    await gw.http.post("/api/console/sessions").set(auth).send({}),
    await gw.http.put("/api/console/settings").set(auth).send({ frame_ancestors: ["https://evil.example.com"] }),
  ]) {
    expect(res.status).toBe(403);
    expect(res.body.code).toBe("api_key_required");
  }
  expect((await gw.http.get("/api/keys").set(a.auth)).body.data).toHaveLength(1);
});

test("an expired link and an expired session are refused", async () => {
  const a = await gw.account();
  const created = await gw.http.post("/api/console/sessions").set(a.auth).send({ link_minutes: 1 });
  await gw.deps.db.consoleSession.update({ where: { id: created.body.id }, data: { linkExpiresAt: new Date(Date.now() - 1000) } });
  const late = await gw.http.post("/api/console/sessions/exchange").send({ token: linkToken(created.body.url) });
  expect(late.status).toBe(410);

  const { created: s, auth } = await openSession(a.auth, { session_hours: 1 });
  expect((await gw.http.get("/api/trends").set(auth)).status).toBe(200);
  await gw.deps.db.consoleSession.update({ where: { id: s.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
  const ended = await gw.http.get("/api/trends").set(auth);
  expect(ended.status).toBe(401);
  expect(ended.body.detail).toMatch(/console session has expired/);
});

test("revocation: by the account's key, or by the session itself (sign out); not of another session", async () => {
  const a = await gw.account();
  const one = await openSession(a.auth);
  const two = await openSession(a.auth);
  expect((await gw.http.delete(`/api/console/sessions/${two.created.id}`).set(one.auth)).status).toBe(404);
  expect((await gw.http.delete(`/api/console/sessions/${one.created.id}`).set(one.auth)).status).toBe(204);
  const signedOut = await gw.http.get("/api/trends").set(one.auth);
  expect(signedOut.status).toBe(401);
  expect(signedOut.body.detail).toMatch(/revoked/);

  expect((await gw.http.get("/api/trends").set(two.auth)).status).toBe(200);
  expect((await gw.http.delete(`/api/console/sessions/${two.created.id}`).set(a.auth)).status).toBe(204);
  expect((await gw.http.get("/api/trends").set(two.auth)).status).toBe(401);

  // An unopened link revoked before use never opens.
  const pending = await gw.http.post("/api/console/sessions").set(a.auth).send({});
  await gw.http.delete(`/api/console/sessions/${pending.body.id}`).set(a.auth);
  expect((await gw.http.post("/api/console/sessions/exchange").send({ token: linkToken(pending.body.url) })).status).toBe(410);
  const live = await gw.http.get("/api/console/sessions").set(a.auth);
  expect(live.body.data).toEqual([]);
});

test("the operator queue records a console user's action as the session, not as the key, named by the session's label", async () => {
  const a = await gw.account();
  const { created, auth } = await openSession(a.auth, { label: "ops@example.com" });
  const item = await gw.deps.db.$transaction((tx) => insertOperatorItemIfAbsent(tx, {
    accountId: a.accountId, dedupKey: "trend:console", trendId: null, severity: "high", title: "AI agents", category: "tech",
    summary: "rising", velocity: 40, briefingUrl: null, renotifyAt: null,
  }));
  const acted = await gw.http.post(`/api/operator/items/${item!.id}/actions`).set(auth).send({ action: "acknowledge", version: item!.version });
  expect(acted.status).toBe(200);
  expect(acted.body.acknowledged_by).toBe(`console:${created.id}`);
  const history = (await gw.http.get(`/api/operator/items/${item!.id}`).set(a.auth)).body.history as any[];
  expect(history.find((h) => h.action === "acknowledge")).toMatchObject({ actor: `console:${created.id}`, data: { actor_name: "ops@example.com" } });
});

test("frame-ancestors: settings validate each origin and are kept per account", async () => {
  const a = await gw.account();
  const bad = await gw.http.put("/api/console/settings").set(a.auth).send({ frame_ancestors: ["https://app.example.com", "https://x.example.com/path", "javascript:alert(1)"] });
  expect(bad.status).toBe(422);
  expect(bad.body.errors.map((e: any) => e.path)).toEqual(["frame_ancestors.1", "frame_ancestors.2"]);
  // A wildcard over a whole top-level domain, a port no TCP connection can use, and port 0: refused, each by its index.
  const wide = await gw.http.put("/api/console/settings").set(a.auth).send({ frame_ancestors: ["https://*.com", "https://app.example.com:99999", "https://app.example.com:0"] });
  expect(wide.status).toBe(422);
  expect(wide.body.errors.map((e: any) => e.path)).toEqual(["frame_ancestors.0", "frame_ancestors.1", "frame_ancestors.2"]);
  const ok = await gw.http.put("/api/console/settings").set(a.auth).send({ frame_ancestors: ["https://app.example.com", "http://localhost:5173", "https://*.example.com:8443"] });
  expect(ok.body).toEqual({ frame_ancestors: ["https://app.example.com", "http://localhost:5173", "https://*.example.com:8443"] });
  const b = await gw.account();
  expect((await gw.http.get("/api/console/settings").set(b.auth)).body).toEqual({ frame_ancestors: [] });
});
