// An account holds at most MAX_ACTIVE_KEYS_PER_ACCOUNT active keys: one more is 409 api_key_limit_reached, also when
// many creations race; revoked and expired keys do not count.
import { startGateway, type TestGateway } from "../helpers/gateway.ts";

let gw: TestGateway;
beforeAll(async () => { gw = await startGateway({ MAX_ACTIVE_KEYS_PER_ACCOUNT: "4" }); });
afterAll(async () => { await gw.close(); });

const create = (auth: Record<string, string>, name = "k") => gw.http.post("/api/keys").set(auth).send({ name });

test("the key over the cap is refused with a clear code; revoking one makes room", async () => {
  const { auth, accountId } = await gw.account(); // key 1
  const made = [];
  for (let i = 0; i < 3; i++) made.push(await create(auth));
  expect(made.map((r) => r.status)).toEqual([201, 201, 201]);
  const over = await create(auth);
  expect(over.status).toBe(409);
  expect(over.body).toMatchObject({ code: "api_key_limit_reached", detail: expect.stringContaining("4 active API keys") });
  expect(await gw.deps.db.apiKey.count({ where: { accountId } })).toBe(4);
  expect((await gw.http.delete(`/api/keys/${made[0].body.id}`).set(auth)).status).toBe(204);
  expect((await create(auth)).status).toBe(201);
});

test("expired keys do not count", async () => {
  const { auth, accountId } = await gw.account();
  for (let i = 0; i < 3; i++) expect((await create(auth)).status).toBe(201);
  await gw.deps.db.apiKey.updateMany({ where: { accountId, name: "k" }, data: { expiresAt: new Date(Date.now() - 1000) } });
  expect((await create(auth)).status).toBe(201);
});

test("ten creations at once never pass the cap", async () => {
  const { auth, accountId } = await gw.account();
  const rs = await Promise.all(Array.from({ length: 10 }, (_, i) => create(auth, `race ${i}`)));
  expect(rs.map((r) => r.status).sort()).toEqual([...Array(3).fill(201), ...Array(7).fill(409)]);
  expect(await gw.deps.db.apiKey.count({ where: { accountId, revokedAt: null } })).toBe(4);
});
