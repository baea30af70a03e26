// Revoking an API key ends the console sessions it created (opened or not), unless `?end_sessions=false`; sessions
// other keys of the account created keep working, and so do a rotated key's. Real gateway, Postgres and Redis, with
// the auth cache on, so an ended session must be dropped from it at once.
import { startGateway, type TestGateway } from "../helpers/gateway.ts";

let gw: TestGateway;
beforeAll(async () => { gw = await startGateway(); });
afterAll(async () => { await gw.close(); });

const linkToken = (url: string) => new URL(url).hash.replace(/^#token=/, "");
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

async function openSession(auth: { Authorization: string }) {
  const created = await gw.http.post("/api/console/sessions").set(auth).send({});
  expect(created.status).toBe(201);
  const exchanged = await gw.http.post("/api/console/sessions/exchange").send({ token: linkToken(created.body.url) });
  expect(exchanged.status).toBe(200);
  const session = { id: created.body.id as string, auth: bearer(exchanged.body.access_token) };
  expect((await gw.http.get("/api/trends").set(session.auth)).status).toBe(200); // now in the auth cache
  return session;
}

async function secondKey(auth: { Authorization: string }) {
  const created = await gw.http.post("/api/keys").set(auth).send({ name: "second" });
  expect(created.status).toBe(201);
  return { id: created.body.id as string, auth: bearer(created.body.key) };
}

/** What the console gets once its session has ended: the answer an expired session gets. */
function expectEnded(res: { status: number; body: any; headers: Record<string, string> }) {
  expect(res.status).toBe(401);
  expect(res.body.code).toBe("unauthorized");
  expect(res.headers["www-authenticate"]).toBe('Bearer realm="trendgate", error="invalid_token"');
}

test("revoking key A ends the sessions and unopened links A created; key B's sessions keep working", async () => {
  const a = await gw.account();
  const b = await secondKey(a.auth);
  const fromA = await openSession(a.auth);
  const fromB = await openSession(b.auth);
  const pending = await gw.http.post("/api/console/sessions").set(a.auth).send({});

  expect((await gw.http.delete(`/api/keys/${a.keyId}`).set(b.auth)).status).toBe(204);

  expectEnded(await gw.http.get("/api/trends").set(fromA.auth));
  expect((await gw.http.post("/api/console/sessions/exchange").send({ token: linkToken(pending.body.url) })).status).toBe(410);
  expect((await gw.http.get("/api/trends").set(fromB.auth)).status).toBe(200);
  const live = await gw.http.get("/api/console/sessions").set(b.auth);
  expect(live.body.data.map((s: any) => s.id)).toEqual([fromB.id]);
});

test("?end_sessions=false revokes the key only; revoking it again later ends its sessions", async () => {
  const a = await gw.account();
  const b = await secondKey(a.auth);
  const fromA = await openSession(a.auth);

  expect((await gw.http.delete(`/api/keys/${a.keyId}?end_sessions=false`).set(b.auth)).status).toBe(204);
  expect((await gw.http.get("/api/trends").set(a.auth)).status).toBe(401);
  expect((await gw.http.get("/api/trends").set(fromA.auth)).status).toBe(200);

  expect((await gw.http.delete(`/api/keys/${a.keyId}`).set(b.auth)).status).toBe(204);
  expectEnded(await gw.http.get("/api/trends").set(fromA.auth));
});

test("an end_sessions other than true or false is refused, and nothing is revoked", async () => {
  const a = await gw.account();
  const b = await secondKey(a.auth);
  const fromA = await openSession(a.auth);
  const res = await gw.http.delete(`/api/keys/${a.keyId}?end_sessions=no`).set(b.auth);
  expect(res.status).toBe(422);
  expect(res.body.errors.map((e: any) => e.path)).toEqual(["end_sessions"]);
  expect((await gw.http.get("/api/trends").set(a.auth)).status).toBe(200);
  expect((await gw.http.get("/api/trends").set(fromA.auth)).status).toBe(200);
});

test("rotating a key, even with no grace period, leaves its sessions working", async () => {
  const a = await gw.account();
  const fromA = await openSession(a.auth);
  const rotated = await gw.http.post(`/api/keys/${a.keyId}/rotate`).set(a.auth).send({ grace_period_seconds: 0 });
  expect(rotated.status).toBe(201);
  expect((await gw.http.get("/api/trends").set(a.auth)).status).toBe(401);
  expect((await gw.http.get("/api/trends").set(fromA.auth)).status).toBe(200);
});
