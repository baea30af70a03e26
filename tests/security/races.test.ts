// Identical requests racing each other: the one that wins answers as usual, the others answer what a user would
// get a moment later (404 for something already deleted, 409 for something created at the same instant), never 500.
import { startGateway, type TestGateway } from "../helpers/gateway.ts";

const N = 6;
let gw: TestGateway;
let auth: { Authorization: string };
beforeAll(async () => {
  gw = await startGateway();
  ({ auth } = await gw.account("enterprise"));
});
afterAll(async () => { await gw.close(); });

const hook = { url: "https://hooks.example.com/in", trigger_type: "trend_detected", delivery_mode: "instant_stream", threshold_value: 0, cooldown_seconds: 0 };
const statuses = (rs: { status: number }[]) => rs.map((r) => r.status).sort();

test(`${N} parallel deletes of one webhook: one 204, the others 404 problem+json`, async () => {
  for (let round = 0; round < 5; round++) {
    const id = (await gw.http.post("/api/integrations/webhooks").set(auth).send(hook)).body.id;
    await gw.http.post(`/api/integrations/webhooks/${id}/test`).set(auth); // an execution row to delete as well
    const rs = await Promise.all(Array.from({ length: N }, () => gw.http.delete(`/api/integrations/webhooks/${id}`).set(auth)));
    expect(statuses(rs)).toEqual([204, ...Array(N - 1).fill(404)]);
    for (const r of rs.filter((x) => x.status === 404)) expect(r.body).toMatchObject({ code: "not_found" });
  }
});

test("pause, resume and patch racing a delete answer 404, never 500", async () => {
  for (let round = 0; round < 5; round++) {
    const id = (await gw.http.post("/api/integrations/webhooks").set(auth).send(hook)).body.id;
    const base = `/api/integrations/webhooks/${id}`;
    const rs = await Promise.all([
      gw.http.delete(base).set(auth),
      gw.http.post(`${base}/pause`).set(auth), gw.http.post(`${base}/resume`).set(auth),
      gw.http.patch(base).set(auth).send({ description: "late" }), gw.http.delete(base).set(auth),
    ]);
    expect(rs.map((r) => r.status).filter((s) => s >= 500)).toEqual([]);
    expect(rs.filter((r) => r.status === 204)).toHaveLength(1);
  }
});

test(`${N} parallel revocations of one key: all 204 (revoking is idempotent), none 500`, async () => {
  const id = (await gw.http.post("/api/keys").set(auth).send({ name: "to revoke" })).body.id;
  const rs = await Promise.all(Array.from({ length: N }, () => gw.http.delete(`/api/keys/${id}`).set(auth)));
  expect(statuses(rs)).toEqual(Array(N).fill(204));
});

test(`${N} parallel first configurations of a connector: each answers 200 or 409, one connection exists`, async () => {
  const a = await gw.account("enterprise");
  const rs = await Promise.all(Array.from({ length: N }, () => gw.http.put("/api/integrations/social/youtube/connection").set(a.auth)
    .send({ credentials: { api_key: "k" }, terms: ["a"] })));
  expect(rs.map((r) => r.status).filter((s) => s !== 200 && s !== 409)).toEqual([]);
  for (const r of rs.filter((x) => x.status === 409)) expect(r.body).toMatchObject({ code: "conflict" });
  expect(await gw.deps.db.socialConnection.count({ where: { accountId: a.accountId } })).toBe(1);
});
