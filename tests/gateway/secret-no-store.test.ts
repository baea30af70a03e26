import { startGateway, type TestGateway } from "../helpers/gateway.ts";
import { webhookBody } from "../helpers/stack.ts";

// An answer that shows a secret once (a new API key, a rotated key, a webhook's signing secret, a rotated one) must
// not be kept by any cache between the service and the client: Cache-Control: no-store, on its idempotent replay too.

let gw: TestGateway;
beforeAll(async () => { gw = await startGateway(); });
afterAll(async () => { await gw.close(); });

test("every answer carrying a one-time secret says Cache-Control: no-store", async () => {
  const { auth } = await gw.account();
  const key = await gw.http.post("/api/keys").set(auth).send({ name: "ci" });
  expect(key.status).toBe(201);
  const rotated = await gw.http.post(`/api/keys/${key.body.id}/rotate`).set(auth).send({ grace_period_seconds: 0 });
  const hook = await gw.http.post("/api/integrations/webhooks").set(auth).set("Idempotency-Key", "hook-once").send(webhookBody("https://hooks.example.com/s"));
  const replay = await gw.http.post("/api/integrations/webhooks").set(auth).set("Idempotency-Key", "hook-once").send(webhookBody("https://hooks.example.com/s"));
  const secret = await gw.http.post(`/api/integrations/webhooks/${hook.body.id}/rotate-secret`).set(auth).send({});
  for (const [name, res] of Object.entries({ key, rotated, hook, replay, secret })) {
    expect([name, res.status < 300]).toEqual([name, true]);
    expect([name, res.headers["cache-control"]]).toEqual([name, "no-store"]);
  }
  expect(replay.body.secret).toBe(hook.body.secret); // the replay is the same answer
});
